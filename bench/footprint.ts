/**
 * `deno run -A bench/footprint.ts [--runtime deno|bun|node|binary] [--rounds 3] [--idle-seconds 45]`:
 * the server's footprint. For the embedded store: a first start on a fresh data folder to `/readyz`
 * (with the prepared cluster when `npm ci` made one), a restart on the same folder, and the RSS
 * after the restart: 1 s after ready (the password worker that made the dummy hash at boot still
 * holds argon2id's memory), 4 s after (the worker has stopped: the bench sets
 * `SVC_PASSWORD_WORKER_IDLE_SECONDS=2`, the default is 60), and idle, `--idle-seconds` after ready:
 * V8 shrinks its young generation and gives freed pages back about 30 s after a process goes quiet
 * (its memory reducer), so the idle figure is read after that; beside the same figures for the
 * server on Postgres, measured in the same run. Medians of `--rounds`.
 */
import { freshServerDatabase, startServer } from "../test/support/server.ts";

const args = Deno.args;
const runtime = args.includes("--runtime") ? args[args.indexOf("--runtime") + 1] : "deno";
const rounds = args.includes("--rounds") ? Number(args[args.indexOf("--rounds") + 1]) : 3;
const WORKER_IDLE_SECONDS = 2;
const EARLY_MS = 1_000;
const WORKER_STOPPED_MS = (WORKER_IDLE_SECONDS + 2) * 1_000;
const IDLE_MS = (args.includes("--idle-seconds") ? Number(args[args.indexOf("--idle-seconds") + 1]) : 45) *
  1_000;

async function readyAfter(
  env: Record<string, string>,
  readRss = true,
): Promise<{ ms: number; earlyRssMiB: number; stoppedRssMiB: number; rssMiB: number }> {
  const started = performance.now();
  const server = await startServer(runtime, {
    SVC_PORT: "0",
    SVC_PASSWORD_WORKER_IDLE_SECONDS: String(WORKER_IDLE_SECONDS),
    ...env,
  });
  try {
    for (;;) {
      const res = await fetch(`${server.url}/readyz`).catch(() => null);
      await res?.body?.cancel();
      if (res?.status === 200) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    const ms = performance.now() - started;
    if (!readRss) return { ms, earlyRssMiB: 0, stoppedRssMiB: 0, rssMiB: 0 };
    await new Promise((r) => setTimeout(r, EARLY_MS));
    const earlyRssMiB = rssOf(server.pid);
    await new Promise((r) => setTimeout(r, WORKER_STOPPED_MS - EARLY_MS));
    const stoppedRssMiB = rssOf(server.pid);
    await new Promise((r) => setTimeout(r, IDLE_MS - WORKER_STOPPED_MS));
    return { ms, earlyRssMiB, stoppedRssMiB, rssMiB: rssOf(server.pid) };
  } finally {
    await server.stop();
  }
}

/** Resident memory of a process and its descendants, in MiB (Linux /proc). */
function rssOf(pid: number): number {
  let kib = 0;
  const pids = [pid];
  while (pids.length > 0) {
    const p = pids.pop()!;
    try {
      const status = Deno.readTextFileSync(`/proc/${p}/status`);
      kib += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      const children = Deno.readTextFileSync(`/proc/${p}/task/${p}/children`).trim();
      if (children) pids.push(...children.split(/\s+/).map(Number));
    } catch { /* gone */ }
  }
  return kib / 1024;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const embedded = {
  first: [] as number[],
  restart: [] as number[],
  early: [] as number[],
  stopped: [] as number[],
  rss: [] as number[],
};
const postgres = {
  first: [] as number[],
  restart: [] as number[],
  early: [] as number[],
  stopped: [] as number[],
  rss: [] as number[],
};
for (let round = 0; round < rounds; round++) {
  const dir = await Deno.makeTempDir({ prefix: "svc-footprint-" });
  try {
    const env = { SVC_DATA_DIR: `${dir}/data` };
    embedded.first.push((await readyAfter(env, false)).ms);
    const again = await readyAfter(env);
    embedded.restart.push(again.ms);
    embedded.early.push(again.earlyRssMiB);
    embedded.stopped.push(again.stoppedRssMiB);
    embedded.rss.push(again.rssMiB);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  const database = await freshServerDatabase("svc_footprint");
  try {
    const env = { SVC_DATABASE_URL: database.url };
    postgres.first.push((await readyAfter(env, false)).ms);
    const again = await readyAfter(env);
    postgres.restart.push(again.ms);
    postgres.early.push(again.earlyRssMiB);
    postgres.stopped.push(again.stoppedRssMiB);
    postgres.rss.push(again.rssMiB);
  } finally {
    await database.drop();
  }
}

const row = (name: string, e: number[], p: number[], unit: string, digits = 0) =>
  `| ${name} | ${median(e).toFixed(digits)} ${unit} | ${median(p).toFixed(digits)} ${unit} | ${
    (median(e) / median(p)).toFixed(2)
  } |`;
console.log(`footprint of svc on ${runtime}, medians of ${rounds} rounds`);
console.log("| figure | embedded (PGlite) | Postgres server | ratio |");
console.log("| --- | --- | --- | --- |");
console.log(row("first start to /readyz", embedded.first, postgres.first, "ms"));
console.log(row("restart to /readyz", embedded.restart, postgres.restart, "ms"));
console.log(row(`RSS ${EARLY_MS / 1000} s after the restart`, embedded.early, postgres.early, "MiB"));
console.log(
  row(
    `RSS ${WORKER_STOPPED_MS / 1000} s after (the worker stopped)`,
    embedded.stopped,
    postgres.stopped,
    "MiB",
  ),
);
console.log(row(`idle RSS (${IDLE_MS / 1000} s after)`, embedded.rss, postgres.rss, "MiB"));
console.log("(MiB: 1 MiB = 1.048576 MB; 200 MB = 190.7 MiB)");
