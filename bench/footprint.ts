/**
 * `deno run -A bench/footprint.ts [--runtime deno|bun|node|binary]`: the server's footprint. For
 * the embedded store: a first start on a fresh data folder to `/readyz` (with the prepared cluster
 * when `npm ci` made one), a restart on the same folder, and the idle RSS after the restart; beside
 * the same three figures for the server on Postgres, measured in the same run. Medians of
 * `--rounds` (default 3).
 */
import { freshServerDatabase, startServer } from "../test/support/server.ts";

const args = Deno.args;
const runtime = args.includes("--runtime") ? args[args.indexOf("--runtime") + 1] : "deno";
const rounds = args.includes("--rounds") ? Number(args[args.indexOf("--rounds") + 1]) : 3;
const IDLE_MS = 3_000;

async function readyAfter(env: Record<string, string>): Promise<{ ms: number; rssMiB: number }> {
  const started = performance.now();
  const server = await startServer(runtime, { SVC_PORT: "0", ...env });
  try {
    for (;;) {
      const res = await fetch(`${server.url}/readyz`).catch(() => null);
      await res?.body?.cancel();
      if (res?.status === 200) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    const ms = performance.now() - started;
    await new Promise((r) => setTimeout(r, IDLE_MS));
    return { ms, rssMiB: rssOf(server.pid) };
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

const embedded = { first: [] as number[], restart: [] as number[], rss: [] as number[] };
const postgres = { first: [] as number[], restart: [] as number[], rss: [] as number[] };
for (let round = 0; round < rounds; round++) {
  const dir = await Deno.makeTempDir({ prefix: "svc-footprint-" });
  try {
    const env = { SVC_DATA_DIR: `${dir}/data` };
    embedded.first.push((await readyAfter(env)).ms);
    const again = await readyAfter(env);
    embedded.restart.push(again.ms);
    embedded.rss.push(again.rssMiB);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  const database = await freshServerDatabase("svc_footprint");
  try {
    const env = { SVC_DATABASE_URL: database.url };
    postgres.first.push((await readyAfter(env)).ms);
    const again = await readyAfter(env);
    postgres.restart.push(again.ms);
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
console.log(row(`idle RSS (${IDLE_MS / 1000} s after the restart)`, embedded.rss, postgres.rss, "MiB"));
