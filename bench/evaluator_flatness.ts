/**
 * Is the evaluator flat in the grant count? Checks per second on subjects of 100, 10,000 and
 * 100,000 grants, interleaved in one run (issue 29's goal: the 10,000-grant rate at least 0.9 of
 * the 100-grant rate):
 *
 *     npx deno run -A bench/evaluator_flatness.ts [rounds]
 *
 * Same fixture and rotating check set as `evaluator_bench.ts` and `authz_table.ts` (warm
 * per-subject memo, steady state). Each round times a fixed number of checks on every size, in
 * an order that rotates from round to round, so that load on the machine falls on every size
 * alike; each size's rate is divided by the same round's 100-grant rate, and the median and p75
 * of those ratios are printed (the load of a shared machine skews means).
 *
 * @module
 */
import { type AccessCheck, compileSubject, evaluate, type SubjectSnapshot } from "../core/authz/mod.ts";
import { CHECK_COUNT, generateFixture } from "./support/fixture.ts";

const SIZES = [100, 10_000, 100_000];
const MASK = CHECK_COUNT - 1;
const ITERATIONS = 400_000;
const rounds = Number(Deno.args[0] ?? 21);

let sink = 0;
const prepared = SIZES.map((size) => {
  const fixture = generateFixture(size);
  const subject = compileSubject(fixture.subject as SubjectSnapshot);
  const checks = fixture.checks as AccessCheck[];
  for (const check of checks) evaluate(subject, check); // the memo warm, as a server's is
  return { size, subject, checks };
});

function rate(p: (typeof prepared)[number], start: number): number {
  const t0 = performance.now();
  let allowed = 0;
  for (let n = 0; n < ITERATIONS; n++) {
    if (evaluate(p.subject, p.checks[(start + n) & MASK]).decision === "Allowed") allowed++;
  }
  sink += allowed;
  return ITERATIONS / ((performance.now() - t0) / 1000);
}

for (const p of prepared) rate(p, 0); // warm-up (JIT)
const rates: number[][] = SIZES.map(() => []);
for (let r = 0; r < rounds; r++) {
  for (let k = 0; k < SIZES.length; k++) {
    const i = (k + r) % SIZES.length;
    rates[i].push(rate(prepared[i], r * 7));
  }
}
const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
let load = "n/a";
try {
  load = Deno.loadavg()[0].toFixed(2);
} catch {
  // not available
}
console.log(
  `Deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cores, ${rounds} interleaved rounds of ${ITERATIONS} checks per size, load ${load}`,
);
console.log("| grants | median checks/s | p75 checks/s | ÷ 100 grants (median of per-round ratios) | p75 |");
console.log("| ---: | ---: | ---: | ---: | ---: |");
SIZES.forEach((size, i) => {
  const ratios = rates[i].map((value, r) => value / rates[0][r]);
  console.log(
    `| ${size.toLocaleString("en-US")} | ${Math.round(quantile(rates[i], 0.5)).toLocaleString("en-US")} | ${
      Math.round(quantile(rates[i], 0.75)).toLocaleString("en-US")
    } | ${quantile(ratios, 0.5).toFixed(3)} | ${quantile(ratios, 0.75).toFixed(3)} |`,
  );
});
if (sink < 0) console.log(sink);
