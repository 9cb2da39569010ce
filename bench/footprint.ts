/**
 * `deno run -A bench/footprint.ts [--runtime deno|bun|node|binary] [--rounds 3] [--idle-seconds 45]
 * [--sign-ins 8] [--refreshes 2000] [--env NAME=VALUE]…`: the server's footprint, from a fresh start with default
 * settings, started as its npm script starts it (on Deno and Node the bundles, `test/support/server.ts`). For the embedded store: a first start on a fresh data folder to `/readyz` (with the
 * prepared cluster when `npm ci` made one), a restart on the same folder, and the RSS after the
 * restart: 1 s after ready (the password worker that made the dummy hash at boot still holds
 * argon2id's memory), 4 s after (the worker has stopped: the bench sets
 * `SVC_PASSWORD_WORKER_IDLE_SECONDS=2`, the default is 60), and idle, `--idle-seconds` after ready:
 * V8 shrinks its young generation and gives freed pages back about 30 s after a process goes quiet
 * (its memory reducer), so the idle figure is read after that. Then a load on the same process:
 * `--sign-ins` password sign-ins (4 at a time, default argon2id: 64 MiB, t=3) and `--refreshes`
 * refresh grants on `/auth/refresh` (16 chains); the RSS is sampled every 100 ms during the load
 * (its peak), read right after it, and idle `--idle-seconds` after it. Beside each figure the same
 * one for the server on Postgres, measured in the same run, and the runtime's own floor (an empty
 * script of the same runtime, idle as long). Medians of `--rounds`. The last table holds the goals
 * of issue 29: idle RSS at most 150 MiB embedded and at most Better Auth's (~70 MiB, measured by
 * `bench/peers/`) on Postgres; the peak after load is reported, its goal is that it stays bounded
 * (the same figure whatever the number of refreshes).
 */
import { freshServerDatabase, startServer } from "../test/support/server.ts";
import { RUNTIMES } from "../test/support/server.ts";

const args = Deno.args;
const option = (name: string, fallback: number) =>
  args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback;
const runtime = args.includes("--runtime") ? args[args.indexOf("--runtime") + 1] : "deno";
const rounds = option("--rounds", 3);
const SIGN_INS = option("--sign-ins", 8);
const REFRESHES = option("--refreshes", 2000);
const WORKER_IDLE_SECONDS = 2;
const EARLY_MS = 1_000;
const WORKER_STOPPED_MS = (WORKER_IDLE_SECONDS + 2) * 1_000;
const IDLE_MS = option("--idle-seconds", 45) * 1_000;
/** `--env NAME=VALUE` (repeatable): a setting for every server the bench starts. */
const EXTRA_ENV: Record<string, string> = Object.fromEntries(
  args.flatMap((arg, i) =>
    arg === "--env" && args[i + 1]?.includes("=") ? [args[i + 1].split(/=(.*)/s, 2)] : []
  ),
);
/** Issue 29's goals, in MiB. */
const GOAL_EMBEDDED_IDLE_MIB = 150;
const GOAL_POSTGRES_IDLE_MIB = 70;
const ADMIN_EMAIL = "root@example.test";
const ADMIN_PASSWORD = "footprint bench secret";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Reading {
  first: number;
  ms: number;
  early: number;
  stopped: number;
  idle: number;
  loadPeak: number;
  afterLoad: number;
  idleAfterLoad: number;
  highWater: number;
}

async function post(url: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = await res.json().catch(() => null);
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Sign-ins, then refresh chains, against `url`. */
async function load(url: string): Promise<void> {
  const refreshTokens: string[] = [];
  for (let i = 0; i < SIGN_INS; i += 4) {
    const batch = await Promise.all(
      Array.from(
        { length: Math.min(4, SIGN_INS - i) },
        () => post(`${url}/auth/login`, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
      ),
    );
    for (const answer of batch) refreshTokens.push(answer.refreshToken as string);
  }
  if (refreshTokens.length === 0) {
    refreshTokens.push(
      (await post(`${url}/auth/login`, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }))
        .refreshToken as string,
    );
  }
  const chains = Array.from({ length: 16 }, (_, i) => refreshTokens[i % refreshTokens.length]);
  // Chains that share a token would end each other's family (reuse detection): one token a chain.
  const distinct = chains.filter((token, i) => chains.indexOf(token) === i);
  let left = REFRESHES;
  await Promise.all(distinct.map(async (first) => {
    let token = first;
    while (left-- > 0) {
      token = (await post(`${url}/auth/refresh`, { refreshToken: token })).refreshToken as string;
    }
  }));
}

async function measure(env: Record<string, string>, withLoad: boolean): Promise<Reading> {
  const started = performance.now();
  const server = await startServer(runtime, {
    SVC_PORT: "0",
    SVC_PASSWORD_WORKER_IDLE_SECONDS: String(WORKER_IDLE_SECONDS),
    SVC_BOOTSTRAP_ADMIN_EMAIL: ADMIN_EMAIL,
    SVC_BOOTSTRAP_ADMIN_PASSWORD: ADMIN_PASSWORD,
    // The abuse gate allows 10 sign-ins per IP and account in 15 minutes: more than that in the
    // load needs a higher limit (it changes no memory figure).
    ...(SIGN_INS > 8 && {
      SVC_ABUSE_PER_IP_ACCOUNT_LIMIT: String(SIGN_INS + 2),
      SVC_ABUSE_PER_IP_LIMIT: String(Math.max(30, SIGN_INS + 2)),
    }),
    ...EXTRA_ENV,
    ...env,
  });
  const reading: Reading = {
    first: 0,
    ms: 0,
    early: 0,
    stopped: 0,
    idle: 0,
    loadPeak: 0,
    afterLoad: 0,
    idleAfterLoad: 0,
    highWater: 0,
  };
  try {
    for (;;) {
      const res = await fetch(`${server.url}/readyz`).catch(() => null);
      await res?.body?.cancel();
      if (res?.status === 200) break;
      await sleep(25);
    }
    reading.ms = performance.now() - started;
    if (!withLoad) return reading;
    await sleep(EARLY_MS);
    reading.early = rssOf(server.pid).rss;
    await sleep(WORKER_STOPPED_MS - EARLY_MS);
    reading.stopped = rssOf(server.pid).rss;
    await sleep(IDLE_MS - WORKER_STOPPED_MS);
    reading.idle = rssOf(server.pid).rss;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        reading.loadPeak = Math.max(reading.loadPeak, rssOf(server.pid).rss);
        await sleep(100);
      }
    })();
    try {
      await load(server.url);
    } finally {
      sampling = false;
      await sampler;
    }
    reading.afterLoad = rssOf(server.pid).rss;
    reading.loadPeak = Math.max(reading.loadPeak, reading.afterLoad);
    await sleep(IDLE_MS);
    const last = rssOf(server.pid);
    reading.idleAfterLoad = last.rss;
    reading.highWater = last.highWater;
    return reading;
  } finally {
    await server.stop();
  }
}

/** Resident memory of a process and its descendants, and the main process's high-water mark, in MiB. */
function rssOf(pid: number): { rss: number; highWater: number } {
  let kib = 0;
  let highWater = 0;
  const pids = [pid];
  while (pids.length > 0) {
    const p = pids.pop()!;
    try {
      const status = Deno.readTextFileSync(`/proc/${p}/status`);
      kib += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      if (p === pid) highWater = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
      const children = Deno.readTextFileSync(`/proc/${p}/task/${p}/children`).trim();
      if (children) pids.push(...children.split(/\s+/).map(Number));
    } catch { /* gone */ }
  }
  return { rss: kib / 1024, highWater };
}

/** The runtime's own floor: an empty script that stays idle as long as the server does. */
async function runtimeFloor(): Promise<number> {
  if (!(runtime in RUNTIMES)) return NaN;
  const script = await Deno.makeTempFile({ suffix: ".mjs" });
  await Deno.writeTextFile(script, "setTimeout(() => {}, 600_000);\n");
  const [cmd] = RUNTIMES[runtime];
  const child = new Deno.Command(cmd, {
    args: runtime === "deno" ? ["run", script] : [script],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    await sleep(IDLE_MS);
    return rssOf(child.pid).rss;
  } finally {
    child.kill("SIGKILL");
    await child.status;
    await Deno.remove(script);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const embedded: Reading[] = [];
const postgres: Reading[] = [];
const floors: number[] = [];
for (let round = 0; round < rounds; round++) {
  const floor = runtimeFloor();
  const dir = await Deno.makeTempDir({ prefix: "svc-footprint-" });
  try {
    const env = { SVC_DATA_DIR: `${dir}/data` };
    const first = await measure(env, false);
    embedded.push({ ...await measure(env, true), first: first.ms });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  const database = await freshServerDatabase("svc_footprint");
  try {
    const env = { SVC_DATABASE_URL: database.url };
    const first = await measure(env, false);
    postgres.push({ ...await measure(env, true), first: first.ms });
  } finally {
    await database.drop();
  }
  floors.push(await floor);
}

const pick = (rs: Reading[], key: keyof Reading) => median(rs.map((r) => r[key]));
const row = (name: string, key: keyof Reading, unit: string) => {
  const e = pick(embedded, key);
  const p = pick(postgres, key);
  return `| ${name} | ${e.toFixed(0)} ${unit} | ${p.toFixed(0)} ${unit} | ${(e / p).toFixed(2)} |`;
};
console.log(
  `footprint of svc on ${runtime}, medians of ${rounds} rounds; load: ${SIGN_INS} sign-ins, ${REFRESHES} refreshes`,
);
console.log("| figure | embedded (PGlite) | Postgres server | ratio |");
console.log("| --- | --- | --- | --- |");
console.log(row("first start to /readyz", "first", "ms"));
console.log(row("restart to /readyz", "ms", "ms"));
console.log(row(`RSS ${EARLY_MS / 1000} s after the restart`, "early", "MiB"));
console.log(row(`RSS ${WORKER_STOPPED_MS / 1000} s after (the worker stopped)`, "stopped", "MiB"));
console.log(row(`idle RSS (${IDLE_MS / 1000} s after)`, "idle", "MiB"));
console.log(row("peak RSS during the load (sampled)", "loadPeak", "MiB"));
console.log(row("RSS right after the load", "afterLoad", "MiB"));
console.log(row(`idle RSS ${IDLE_MS / 1000} s after the load`, "idleAfterLoad", "MiB"));
console.log(row("high-water mark of the process (VmHWM)", "highWater", "MiB"));
const floor = median(floors);
console.log(`the ${runtime} runtime alone, idle: ${floor.toFixed(0)} MiB`);
console.log("");
console.log("| goal (issue 29) | measured | goal | measured ÷ goal |");
console.log("| --- | --- | --- | --- |");
const goal = (name: string, value: number, target: number) =>
  console.log(`| ${name} | ${value.toFixed(0)} MiB | ≤${target} MiB | ${(value / target).toFixed(2)} |`);
goal("idle RSS, embedded", pick(embedded, "idle"), GOAL_EMBEDDED_IDLE_MIB);
goal("idle RSS, Postgres (Better Auth's)", pick(postgres, "idle"), GOAL_POSTGRES_IDLE_MIB);
console.log("(MiB: 1 MiB = 1.048576 MB; 200 MB = 190.7 MiB)");
