/**
 * Measures authorization checks per second for svc, Cedar and Casbin on every subject
 * size in one run and prints a Markdown table (the one in docs/benchmarks.md).
 *
 *     deno run -A bench/authz_table.ts            # the table
 *     deno run -A bench/authz_table.ts --json     # the table, then the raw figures as JSON
 *     npx deno run -A bench/authz_table.ts --docs   # also rewrite the table in docs/benchmarks.md
 *
 * `--docs` replaces what lies between the lines `<!-- authz-bench:start -->` and
 * `<!-- authz-bench:end -->` in the repository's docs/benchmarks.md (and fails without them),
 * then runs `deno fmt` on it.
 *
 * Method, per size and engine, on one thread (so the figures are per core): prepare the
 * engine (compile / pre-parse / load) and pre-build the requests, warm up, estimate the
 * rate, then time `ROUNDS` rounds of a fixed iteration count with `performance.now()`
 * and report the median round. The iteration count targets `ROUND_SECONDS` per round
 * and is capped (and floored) per engine; the slow peers at large sizes therefore run
 * few iterations, printed in the notes under the table. Every iteration decides one
 * check of the fixture's fixed rotating set of 512 checks. Each engine is prepared once
 * per subject and reused, as a server reuses a compiled subject across a session's
 * checks, so anything svc memoizes per compiled subject is warm when timed.
 *
 * @module
 */
import { agreement, buildEngines, type Engines, formatAgreement } from "./support/engines.ts";
import { CHECK_COUNT, SIZES } from "./support/fixture.ts";

const ROUNDS = 5;
const ROUND_SECONDS = 0.4;
const WARMUP_SECONDS = 0.25;
const MASK = CHECK_COUNT - 1;

type EngineName = "svc" | "cedar" | "casbin";
const ENGINES: readonly EngineName[] = ["svc", "cedar", "casbin"];
const MAX_ITERATIONS: Record<EngineName, number> = { svc: 5_000_000, cedar: 200_000, casbin: 50_000 };
const MIN_ITERATIONS = 4;

/** One measured figure. */
export interface Measurement {
  size: number;
  engine: EngineName;
  checksPerSecond: number;
  iterations: number;
  rounds: number;
  /** The slowest and fastest rounds (checks per second), to show the noise. */
  spread: [number, number];
}

let sink = 0;

function timeLoop(check: (i: number) => boolean, iterations: number, start: number): number {
  const t0 = performance.now();
  let allowed = 0;
  for (let n = 0; n < iterations; n++) {
    if (check((start + n) & MASK)) allowed++;
  }
  const elapsed = performance.now() - t0;
  sink += allowed;
  return elapsed;
}

/** Warms up, calibrates and times one engine; returns the median rate over the rounds. */
export function measure(engines: Engines, engine: EngineName): Measurement {
  const check = engines[engine];
  // Warm up (JIT, caches) for WARMUP_SECONDS, which also gives a first rate estimate.
  let done = 0;
  let spent = 0;
  let batch = 1;
  while (spent < WARMUP_SECONDS * 1000) {
    spent += timeLoop(check, batch, done);
    done += batch;
    batch = Math.min(batch * 2, 100_000);
  }
  const estimate = done / (spent / 1000);
  const iterations = Math.max(
    MIN_ITERATIONS,
    Math.min(MAX_ITERATIONS[engine], Math.round(estimate * ROUND_SECONDS)),
  );
  const rates: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const ms = timeLoop(check, iterations, r * 7);
    rates.push(iterations / (ms / 1000));
  }
  rates.sort((a, b) => a - b);
  return {
    size: engines.fixture.size,
    engine,
    checksPerSecond: rates[Math.floor(rates.length / 2)],
    iterations,
    rounds: ROUNDS,
    spread: [rates[0], rates[rates.length - 1]],
  };
}

function fmtRate(n: number): string {
  if (n >= 100) return Math.round(n).toLocaleString("en-US");
  return n.toPrecision(3);
}

function fmtRatio(n: number): string {
  return n >= 100 ? `${Math.round(n).toLocaleString("en-US")}×` : `${n.toPrecision(3)}×`;
}

/** Renders the measurements as the Markdown table. */
export function markdownTable(rows: readonly Measurement[]): string {
  const lines = [
    "| size (grants) | svc checks/s | Cedar checks/s | Casbin checks/s | svc/Cedar | svc/Casbin |",
    "| ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const size of SIZES) {
    const get = (e: EngineName) => rows.find((r) => r.size === size && r.engine === e)!.checksPerSecond;
    const svc = get("svc");
    const cedar = get("cedar");
    const casbin = get("casbin");
    lines.push(
      `| ${size.toLocaleString("en-US")} | ${fmtRate(svc)} | ${fmtRate(cedar)} | ${fmtRate(casbin)} | ${
        fmtRatio(svc / cedar)
      } | ${fmtRatio(svc / casbin)} |`,
    );
  }
  return lines.join("\n");
}

const START_MARKER = "<!-- authz-bench:start -->";
const END_MARKER = "<!-- authz-bench:end -->";

/** Replaces the text between the benchmark page's markers (exclusive) with `block`. */
export function replaceBetweenMarkers(text: string, block: string): string {
  const start = text.indexOf(START_MARKER);
  const end = text.indexOf(END_MARKER);
  if (start < 0 || end < start) {
    throw new Error(`docs/benchmarks.md needs the lines ${START_MARKER} and ${END_MARKER} around the table`);
  }
  const rerun = "Measured with `npx deno run -A bench/authz_table.ts --docs`.";
  return `${text.slice(0, start + START_MARKER.length)}\n${block}\n\n${rerun}\n${text.slice(end)}`;
}

/** The 1-minute load average (other processes compete for the cores), or "n/a". */
function load(): string {
  try {
    return Deno.loadavg()[0].toFixed(2);
  } catch {
    return "n/a";
  }
}

if (import.meta.main) {
  const started = performance.now();
  const loadBefore = load();
  const rows: Measurement[] = [];
  const notes: string[] = [];
  for (const size of SIZES) {
    const engines = await buildEngines(size);
    // A quick sanity check before timing: the three engines agree on a sample.
    const sample = agreement(engines, size >= 10_000 ? 16 : size >= 1_000 ? 64 : CHECK_COUNT);
    if (sample.disagreements.length > 0) {
      throw new Error(
        `engines disagree at ${size} grants: ${JSON.stringify(sample.disagreements.slice(0, 3))}`,
      );
    }
    const permissions = new Set(engines.fixture.checks.map((c) => c.permission)).size;
    notes.push(`- ${formatAgreement(sample)}; ${permissions} distinct permission ids in the rotating set`);
    const setup = engines.setupMs;
    const measured = ENGINES.map((e) => measure(engines, e));
    rows.push(...measured);
    notes.push(
      `  setup ms: svc ${setup.svc.toFixed(1)}, Cedar ${setup.cedar.toFixed(1)}, Casbin ${
        setup.casbin.toFixed(1)
      }; iterations per round (slowest–fastest round, checks/s): ${
        measured.map((m) =>
          `${m.engine} ${m.iterations.toLocaleString("en-US")} (${fmtRate(m.spread[0])}–${
            fmtRate(m.spread[1])
          })`
        ).join(", ")
      }`,
    );
    console.error(`measured ${size} grants (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  }
  console.log(markdownTable(rows));
  console.log();
  const footer =
    `Deno ${Deno.version.deno} (V8 ${Deno.version.v8}), ${navigator.hardwareConcurrency} cores, ${Deno.build.target}; ` +
    `${ROUNDS} rounds of about ${ROUND_SECONDS}s each, median; whole run ${
      ((performance.now() - started) / 1000).toFixed(0)
    } s; one thread, so the rates are per core; load average ${loadBefore} before, ${load()} after.`;
  console.log(footer);
  console.log(notes.join("\n"));
  if (Deno.args.includes("--json")) console.log(JSON.stringify(rows, null, 2));
  if (Deno.args.includes("--docs")) {
    const readme = new URL("../docs/benchmarks.md", import.meta.url);
    const updated = replaceBetweenMarkers(
      await Deno.readTextFile(readme),
      `${markdownTable(rows)}\n\n${footer}`,
    );
    await Deno.writeTextFile(readme, updated);
    // `deno fmt` aligns Markdown tables; keep `deno fmt --check` green.
    await new Deno.Command(Deno.execPath(), { args: ["fmt", "--quiet", readme.pathname] }).output();
    console.error(`updated ${readme.pathname}`);
  }
  if (sink < 0) console.log(sink);
}
