/**
 * Authorization checks per second: svc's evaluator against the same policies in Cedar
 * (`@cedar-policy/cedar-wasm`) and Casbin (`casbin`), on generated subjects of 10, 100,
 * 1,000 and 10,000 grants (see `support/fixture.ts` for the mix and `support/cedar.ts`,
 * `support/casbin.ts` for the encodings).
 *
 *     deno bench -A bench/authz_bench.ts
 *
 * One group per size, svc as the baseline, so the report prints each peer's ratio. Every
 * iteration decides one check of a fixed rotating set (512 checks: matches, misses,
 * denies, conditions, scope failures). Before the benchmarks run, the three engines are
 * compared on allow versus deny over the checks and the agreement is printed; a
 * disagreement aborts the run (the full assertion is `test/bench/equivalence_test.ts`).
 *
 * Cedar and Casbin walk every policy per check (Casbin about 15 µs per policy line), so
 * at 1,000 and 10,000 grants their benchmarks use a fixed small `n`. For the Markdown table in one run, use
 * `deno run -A bench/authz_table.ts`.
 *
 * @module
 */
import { agreement, buildEngines, type Engines, formatAgreement } from "./support/engines.ts";
import { CHECK_COUNT, SIZES } from "./support/fixture.ts";

const MASK = CHECK_COUNT - 1;
/** Casbin checks per agreement run: all of them up to 1,000 grants, a sample above. */
const CASBIN_SAMPLE: Record<number, number> = { 10: CHECK_COUNT, 100: CHECK_COUNT, 1000: 256, 10000: 32 };

const all: Engines[] = [];
for (const size of SIZES) all.push(await buildEngines(size));

for (const engines of all) {
  const report = agreement(engines, CASBIN_SAMPLE[engines.fixture.size] ?? CHECK_COUNT);
  console.log(`agreement: ${formatAgreement(report)}`);
  if (report.disagreements.length > 0) {
    throw new Error(`engines disagree: ${JSON.stringify(report.disagreements.slice(0, 5))}`);
  }
}

let sink = 0;

for (const engines of all) {
  const { size } = engines.fixture;
  const group = `${size.toLocaleString("en-US")} grants`;
  let i = 0;
  Deno.bench({
    name: `svc ${size}`,
    group,
    baseline: true,
    fn() {
      if (engines.svc(i++ & MASK)) sink++;
    },
  });
  let j = 0;
  Deno.bench({
    name: `cedar ${size}`,
    group,
    ...(size >= 10_000 ? { n: 12, warmup: 2 } : size >= 1_000 ? { n: 100, warmup: 10 } : {}),
    fn() {
      if (engines.cedar(j++ & MASK)) sink++;
    },
  });
  let k = 0;
  Deno.bench({
    name: `casbin ${size}`,
    group,
    ...(size >= 10_000 ? { n: 12, warmup: 2 } : size >= 1_000 ? { n: 100, warmup: 10 } : {}),
    fn() {
      if (engines.casbin(k++ & MASK)) sink++;
    },
  });
}

globalThis.addEventListener("unload", () => {
  if (sink < 0) console.log(sink); // keeps the decisions observable
});
