/**
 * svc beside its peers, in one run, through one load driver (`driver.ts`):
 *
 *     npx deno run -A bench/peers/run.ts            # the full run (6–8 minutes at a load average of 13–20)
 *     npx deno run -A bench/peers/run.ts --quick    # 1.5 s rounds, one idle sample read after 15 s
 *     npx deno run -A bench/peers/run.ts --node     # svc on Node (the `npm run build:node` bundle)
 *     npx deno run -A bench/peers/run.ts --docs     # also rewrite the table in docs/benchmarks.md
 *     npx deno run -A bench/peers/run.ts --json     # also print every round's figures as JSON
 *
 * The peers are Better Auth (`better-auth-server.mjs`: email and password on the same Postgres, its
 * `pg` Pool adapter, its scrypt default, its tables created by its own migrations in a database of
 * its own) and panva's oidc-provider (`oidc-provider-server.mjs`: memory adapter, RS256 JWT access
 * tokens through resource indicators). Each runs as its own Node process beside svc (`svc start` on
 * Deno, or on Node with `--node`, on a fresh database of the Postgres at `SVC_TEST_DATABASE_URL`,
 * default `postgres://postgres@127.0.0.1:5432/test`); the bench starts and stops all of them and
 * drops the databases it created.
 *
 * Workloads, each svc against one peer in alternating rounds (medians of `--rounds`, 3):
 * - "who am I", 16 clients: svc's `GET /profile/me` (bearer access token) against Better Auth's
 *   `GET /api/auth/get-session` (session cookie); a session per client on both sides, of 4 users.
 * - password sign-ins: svc's `POST /auth/login` at its defaults (argon2id 64 MiB, t=3, one worker
 *   per core) against Better Auth's `POST /api/auth/sign-in/email` (scrypt), 4 clients on both
 *   sides, one user per client. svc's abuse gate and the risk gate's velocity signal would stop
 *   a client signing the same account in again and again, so their limits are raised
 *   (`SVC_ABUSE_*_LIMIT`, `SVC_RISK_VELOCITY_LOGINS`): every request still runs both gates; Better
 *   Auth's rate limiter is off in the same spirit.
 * - refresh grants through svc's `POST /oidc/token` (`refresh_token`, `client_secret_basic`, scope
 *   `openid offline_access`: a rotated refresh token, an RS256 access token and an ID token) against
 *   oidc-provider's `POST /token` with the same grant (rotation on, RS256 JWT access token, ID
 *   token), one refresh chain per client, 16 clients.
 * - `client_credentials` (16 clients): a svc service account against an oidc-provider client, both
 *   answering an RS256 JWT.
 * - idle RSS from a fresh start with default settings (no bench settings: svc embedded on PGlite in
 *   a new data folder, svc on an empty Postgres database, Better Auth after its migrations,
 *   oidc-provider), the process and its children, read `--idle-seconds` after each is ready (65 by
 *   default: svc's password worker, which made the dummy hash at boot, stops after 60 idle seconds,
 *   and V8 gives freed pages back about 30 s after a process goes quiet). `--idle-samples` of each
 *   (3; 1 with `--quick`) are started one after the other and wait side by side, while the throughput
 *   servers start and get their users; the median is reported, with the lowest and highest.
 *
 * Other options: `--rounds`, `--seconds` (per round), `--sign-in-seconds`, `--clients`,
 * `--sign-in-clients`, `--idle-seconds`, `--idle-samples`. Every figure comes with the 1-minute load
 * average at the start of its workload: on a shared two-core machine read the ratios, not the rates.
 * `SVC_BENCH_NODE_FLAGS` in the environment: flags for `node` when svc runs on Node (`--cpu-prof
 * --cpu-prof-dir=.tmp/prof` to profile it; the profile is written when svc stops);
 * `SVC_BENCH_NODE_BUNDLE`: a built `cli/node.js` to run instead of this checkout's (see
 * `bench/node_ab.ts` for building one of an earlier commit).
 *
 * @module
 */
import postgres from "postgres";
import { expectJson, interleave, type Interleaved, median } from "./driver.ts";
import {
  buildDenoBundle,
  childEnv,
  collect,
  freshServerDatabase,
  LISTENING_LINE,
  logMessage,
  ROOT,
  RUNTIMES,
} from "../../test/support/server.ts";

const args = Deno.args;
const flag = (name: string) => args.includes(name);
const option = (name: string, fallback: number) =>
  args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback;

const QUICK = flag("--quick");
const SVC_RUNTIME = flag("--node") ? "node" : "deno";
const ROUNDS = option("--rounds", 3);
const SECONDS = option("--seconds", QUICK ? 1.5 : 5);
const SIGN_IN_SECONDS = option("--sign-in-seconds", QUICK ? 3 : 8);
const WARMUP_SECONDS = QUICK ? 0.5 : 1.5;
const CLIENTS = option("--clients", 16);
const SIGN_IN_CLIENTS = option("--sign-in-clients", 4);
/** Users on each side: one per sign-in client; the "who am I" clients each have a session of one of them. */
const USERS = SIGN_IN_CLIENTS;
const IDLE_SECONDS = option("--idle-seconds", QUICK ? 15 : 65);
const IDLE_SAMPLES = option("--idle-samples", QUICK ? 1 : 3);
const DATABASE_URL = Deno.env.get("SVC_TEST_DATABASE_URL") ?? "postgres://postgres@127.0.0.1:5432/test";
const HERE = new URL(".", import.meta.url).pathname;
const PASSWORD = "correct horse battery staple";
const REDIRECT = "https://app.example.test/cb";
const FORM = { "Content-Type": "application/x-www-form-urlencoded" };
const JSON_TYPE = { "Content-Type": "application/json" };

/** The 1-minute load average. */
const load = () => Deno.loadavg()[0];
const loads: { at: string; load: number }[] = [];
const noteLoad = (at: string) => loads.push({ at, load: load() });

/** A process of the bench: where it listens and how to stop it. */
export interface Running {
  url: string;
  pid: number;
  /** svc's own database (svc on Postgres only). */
  databaseUrl?: string;
  stop(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Starting the contenders

/**
 * The Node bundle of svc, built from this checkout into `.tmp/` (dist/ may be a shared folder) by
 * `npm run build:node`'s script; `SVC_BENCH_NODE_BUNDLE` in the environment: that built `cli/node.js`
 * instead (another commit's).
 */
let nodeBundle: Promise<string> | undefined;
function svcNodeBundle(): Promise<string> {
  const given = Deno.env.get("SVC_BENCH_NODE_BUNDLE");
  if (given !== undefined && given !== "") return Promise.resolve(given);
  return nodeBundle ??= (async () => {
    const outdir = `${ROOT}.tmp/peers-node`;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "cli/build-node.ts", "--outdir", outdir],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) throw new Error(`build:node failed: ${new TextDecoder().decode(out.stderr)}`);
    return `${outdir}/cli/node.js`;
  })();
}

/**
 * Flags for `node` when svc runs on Node, from `SVC_BENCH_NODE_FLAGS` (space-separated; e.g.
 * `--cpu-prof --cpu-prof-dir=.tmp/prof`, which `NODE_OPTIONS` does not allow).
 */
const NODE_FLAGS = (Deno.env.get("SVC_BENCH_NODE_FLAGS") ?? "").split(" ").filter((flag) => flag !== "");

/** How long a process may take to listen: starts on a loaded two-core machine took over a minute. */
const START_TIMEOUT_MS = 240_000;

/**
 * Spawns `cmd args` in the repository with exactly `env` (plus the caller's non-SVC_ variables),
 * ready once a line of its output matches `listening` (group 1: its address).
 */
async function spawnListening(
  cmd: string,
  cmdArgs: string[],
  env: Record<string, string>,
  listening: RegExp,
): Promise<Running> {
  const child = new Deno.Command(cmd, {
    args: cmdArgs,
    cwd: ROOT,
    env: childEnv(env),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const { promise, resolve, reject } = Promise.withResolvers<string>();
  const stdout = collect(child.stdout, (line) => {
    const match = listening.exec(logMessage(line));
    if (match) resolve(match[1]);
  });
  const stderr = collect(child.stderr);
  child.status.then(async (status) =>
    reject(new Error(`${cmdArgs.join(" ")} exited with ${status.code}:\n${await stdout}\n${await stderr}`))
  );
  const timer = setTimeout(
    () => reject(new Error(`${cmdArgs.join(" ")}: no address within ${START_TIMEOUT_MS} ms`)),
    START_TIMEOUT_MS,
  );
  try {
    const url = await promise;
    return {
      url,
      pid: child.pid,
      async stop() {
        try {
          child.kill("SIGTERM");
        } catch { /* exited */ }
        await child.status;
      },
    };
  } catch (err) {
    try {
      child.kill("SIGKILL");
    } catch { /* exited */ }
    await child.status;
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** `svc start` on the bench's runtime (the Deno binary itself, not npm's wrapper, so RSS is svc's). */
async function startSvc(
  env: Record<string, string>,
  runtime = SVC_RUNTIME,
  nodeBundle?: string,
): Promise<Running> {
  const command = runtime === "node"
    ? ["node", ...NODE_FLAGS, nodeBundle ?? await svcNodeBundle()]
    : [Deno.execPath(), ...RUNTIMES.deno.slice(1)]; // `npm start`'s command
  const server = await spawnListening(
    command[0],
    [...command.slice(1), "start"],
    { SVC_PORT: "0", ...env },
    LISTENING_LINE,
  );
  for (;;) {
    const res = await fetch(`${server.url}/readyz`).catch(() => null);
    await res?.body?.cancel();
    if (res?.status === 200) return server;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A peer (`node bench/peers/<file>`), ready once it prints `… listening on <url>`. */
function startPeer(file: string, env: Record<string, string>): Promise<Running> {
  return spawnListening(
    "node",
    [`${HERE}${file}`],
    { ...env, PORT: "0", NODE_ENV: "production" },
    / listening on (http:\/\/\S+)$/,
  );
}

/** Better Auth on a new database of its own (migrated at its start); `stop()` also drops it. */
async function startBetterAuth(): Promise<Running> {
  const database = await freshServerDatabase("peers_better_auth");
  try {
    const peer = await startPeer("better-auth-server.mjs", { DATABASE_URL: database.url });
    return {
      ...peer,
      async stop() {
        await peer.stop();
        await database.drop();
      },
    };
  } catch (err) {
    await database.drop();
    throw err;
  }
}

/**
 * svc on a new Postgres database with `env`; `stop()` also drops the database. Also the way
 * `bench/oidc_token_endpoint.ts --node` starts svc. On Node, `nodeBundle` (a built
 * `cli/node.js`) instead of this checkout's.
 */
export async function startSvcOnPostgres(
  env: Record<string, string>,
  runtime = SVC_RUNTIME,
  nodeBundle?: string,
): Promise<Running> {
  const database = await freshServerDatabase("peers_svc");
  try {
    const server = await startSvc({ SVC_DATABASE_URL: database.url, ...env }, runtime, nodeBundle);
    return {
      url: server.url,
      pid: server.pid,
      databaseUrl: database.url,
      async stop() {
        await server.stop();
        await database.drop();
      },
    };
  } catch (err) {
    await database.drop();
    throw err;
  }
}

/** svc embedded (PGlite) in a new data folder; `stop()` also removes it. */
async function startSvcEmbedded(runtime = SVC_RUNTIME): Promise<Running> {
  const dir = await Deno.makeTempDir({ prefix: "peers-svc-" });
  try {
    const server = await startSvc({ SVC_DATA_DIR: `${dir}/data` }, runtime);
    return {
      url: server.url,
      pid: server.pid,
      async stop() {
        await server.stop();
        await Deno.remove(dir, { recursive: true });
      },
    };
  } catch (err) {
    await Deno.remove(dir, { recursive: true });
    throw err;
  }
}

/** Resident memory of a process and its descendants, in MiB (Linux /proc). */
function rssOf(pid: number): number {
  let kib = 0;
  const pids = [pid];
  while (pids.length > 0) {
    const p = pids.pop()!;
    try {
      kib += Number(/VmRSS:\s+(\d+)/.exec(Deno.readTextFileSync(`/proc/${p}/status`))?.[1] ?? 0);
      for (const task of Deno.readDirSync(`/proc/${p}/task`)) {
        const children = Deno.readTextFileSync(`/proc/${p}/task/${task.name}/children`).trim();
        if (children) pids.push(...children.split(/\s+/).map(Number));
      }
    } catch { /* gone */ }
  }
  return kib / 1024;
}

// ---------------------------------------------------------------------------------------------
// Idle memory

type IdleName = "svcEmbedded" | "svcPostgres" | "betterAuth" | "oidcProvider";

/**
 * Starts `IDLE_SAMPLES` of each contender with default settings, one after the other (a start is
 * CPU-bound; many at once on two cores time out), and reads each one's RSS `IDLE_SECONDS` after it
 * was ready, while the next ones start: an idle process holds what it holds whatever the others do.
 */
async function idleRss(): Promise<Record<IdleName, number[]>> {
  const starts: Record<IdleName, () => Promise<Running>> = {
    svcEmbedded: () => startSvcEmbedded(),
    svcPostgres: () => startSvcOnPostgres({}),
    betterAuth: startBetterAuth,
    oidcProvider: () => startPeer("oidc-provider-server.mjs", {}),
  };
  const out: Record<IdleName, number[]> = {
    svcEmbedded: [],
    svcPostgres: [],
    betterAuth: [],
    oidcProvider: [],
  };
  const waits: Promise<void>[] = [];
  let startFailure: unknown = null;
  try {
    for (let sample = 0; sample < IDLE_SAMPLES; sample++) {
      for (const name of Object.keys(starts) as IdleName[]) {
        const running = await starts[name]();
        waits.push((async () => {
          try {
            await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
            out[name].push(rssOf(running.pid));
          } finally {
            await running.stop();
          }
        })());
      }
    }
  } catch (err) {
    startFailure = err;
  }
  // Every started process is stopped (its wait ends) before a failure is reported.
  const failed = (await Promise.allSettled(waits)).find((s) => s.status === "rejected");
  if (startFailure !== null) throw startFailure;
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Throughput

/** svc's settings for the throughput rounds: an administrator, the OIDC provider, gates that let a client sign in repeatedly. */
export const SVC_BENCH_ENV: Record<string, string> = {
  SVC_BOOTSTRAP_ADMIN_EMAIL: "root@example.test",
  SVC_BOOTSTRAP_ADMIN_PASSWORD: PASSWORD,
  SVC_PLUGINS: "oidc-provider",
  SVC_ABUSE_PER_IP_LIMIT: "1000000",
  SVC_ABUSE_PER_IP_ACCOUNT_LIMIT: "1000000",
  SVC_ABUSE_ACCOUNT_LOCKOUT_LIMIT: "1000000",
  SVC_RISK_VELOCITY_LOGINS: "1000000",
};

/** Runs `fn` on `items`, `width` at a time. */
async function inBatches<T, R>(
  items: readonly T[],
  width: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) {
    out.push(...await Promise.all(items.slice(i, i + width).map(fn)));
  }
  return out;
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** svc's side: users, their tokens, an OIDC client and its refresh chains, a service account. */
async function prepareSvc(url: string) {
  const call = (path: string, init: RequestInit = {}) => fetch(`${url}${path}`, init);
  const login = async (email: string) =>
    await expectJson(
      await call("/auth/login", {
        method: "POST",
        headers: JSON_TYPE,
        body: JSON.stringify({ email, password: PASSWORD }),
      }),
      200,
      `svc login ${email}`,
    );
  const admin = `Bearer ${(await login("root@example.test")).accessToken}`;
  const adminJson = { ...JSON_TYPE, Authorization: admin };
  const emails = range(USERS).map((i) => `user${i}@example.test`);
  await inBatches(emails, 4, async (email) =>
    await expectJson(
      await call("/svc-admin/users", {
        method: "POST",
        headers: adminJson,
        body: JSON.stringify({ email, password: PASSWORD, emailVerified: true }),
      }),
      201,
      `svc create ${email}`,
    ));
  // One session per client (client i signs in as user i mod USERS).
  const accessTokens: string[] = (await inBatches(range(CLIENTS), 4, (i) => login(emails[i % USERS])))
    .map((t) => t.accessToken);

  const client = await expectJson(
    await call("/svc-admin/oidc/clients", {
      method: "POST",
      headers: adminJson,
      body: JSON.stringify({
        clientId: "bench",
        clientType: "confidential",
        redirectUris: [REDIRECT],
        allowedScopes: ["openid", "offline_access"],
        tokenEndpointAuthMethod: "client_secret_basic",
      }),
    }),
    201,
    "svc OIDC client",
  );
  const basic = `Basic ${btoa(`bench:${client.clientSecret}`)}`;
  const chain = async (accessToken: string): Promise<string> => {
    const query = new URLSearchParams({
      response_type: "code",
      client_id: "bench",
      redirect_uri: REDIRECT,
      scope: "openid offline_access",
      state: "s",
    });
    const res = await call(`/oidc/authorize?${query}`, {
      headers: { Cookie: `svc_at=${accessToken}` },
      redirect: "manual",
    });
    await res.body?.cancel();
    const location = res.headers.get("Location");
    const code = location === null ? null : new URL(location, url).searchParams.get("code");
    if (code === null) throw new Error(`svc authorize: HTTP ${res.status}, Location ${location}`);
    const tokens = await expectJson(
      await call("/oidc/token", {
        method: "POST",
        headers: { ...FORM, Authorization: basic },
        body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT }),
      }),
      200,
      "svc code exchange",
    );
    return tokens.refresh_token;
  };
  const refreshTokens = await inBatches(accessTokens, 4, chain);

  const account = await expectJson(
    await call("/svc-admin/service-accounts", {
      method: "POST",
      headers: adminJson,
      body: JSON.stringify({ key: "bench-job", displayName: "Bench" }),
    }),
    201,
    "svc service account",
  );
  const machine = `Basic ${btoa(`bench-job:${account.secret}`)}`;

  return {
    whoAmI: async (i: number) => {
      await expectJson(
        await call("/profile/me", {
          headers: { Authorization: `Bearer ${accessTokens[i % accessTokens.length]}` },
        }),
        200,
        "svc /profile/me",
      );
    },
    signIn: async (i: number) => {
      await login(emails[i % emails.length]);
    },
    refresh: async (i: number) => {
      const body = await expectJson(
        await call("/oidc/token", {
          method: "POST",
          headers: { ...FORM, Authorization: basic },
          body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshTokens[i] }),
        }),
        200,
        "svc refresh grant",
      );
      if (!body.access_token || !body.id_token) throw new Error("svc refresh: no access or ID token");
      refreshTokens[i] = body.refresh_token;
    },
    clientCredentials: async () => {
      const body = await expectJson(
        await call("/oidc/token", {
          method: "POST",
          headers: { ...FORM, Authorization: machine },
          body: new URLSearchParams({ grant_type: "client_credentials", scope: "api:read" }),
        }),
        200,
        "svc client_credentials",
      );
      if (!body.access_token) throw new Error("svc client_credentials: no access token");
    },
  };
}

/** Better Auth's side: users, each with a session cookie. */
async function prepareBetterAuth(url: string) {
  const call = (path: string, init: RequestInit = {}) => fetch(`${url}/api/auth${path}`, init);
  const emails = range(USERS).map((i) => `user${i}@example.test`);
  const sessionCookie = (res: Response) => {
    const cookie = res.headers.getSetCookie().map((line) => line.split(";")[0]).join("; ");
    if (!cookie.includes("session_token")) throw new Error("Better Auth: no session cookie");
    return cookie;
  };
  await inBatches(emails, 4, async (email) => {
    const res = await call("/sign-up/email", {
      method: "POST",
      headers: JSON_TYPE,
      body: JSON.stringify({ email, password: PASSWORD, name: email }),
    });
    await expectJson(res, 200, `Better Auth sign-up ${email}`);
  });
  // One session per client (client i signs in as user i mod USERS), as on svc's side.
  const cookies = await inBatches(range(CLIENTS), 4, async (i) => {
    const res = await call("/sign-in/email", {
      method: "POST",
      headers: JSON_TYPE,
      body: JSON.stringify({ email: emails[i % USERS], password: PASSWORD }),
    });
    await expectJson(res, 200, "Better Auth sign-in");
    return sessionCookie(res);
  });
  return {
    whoAmI: async (i: number) => {
      const body = await expectJson(
        await call("/get-session", { headers: { Cookie: cookies[i % cookies.length] } }),
        200,
        "Better Auth get-session",
      );
      if (!body?.user?.id) throw new Error("Better Auth get-session: no session");
    },
    signIn: async (i: number) => {
      const body = await expectJson(
        await call("/sign-in/email", {
          method: "POST",
          headers: JSON_TYPE,
          body: JSON.stringify({ email: emails[i % emails.length], password: PASSWORD }),
        }),
        200,
        "Better Auth sign-in",
      );
      if (!body.token) throw new Error("Better Auth sign-in: no token");
    },
  };
}

/** oidc-provider's side: refresh chains, a client for client_credentials. */
async function prepareOidcProvider(url: string) {
  const basic = `Basic ${btoa("bench:bench-secret-bench-secret-bench-secret")}`;
  const refreshTokens: string[] = [];
  for (let i = 0; i < CLIENTS; i++) {
    refreshTokens.push(
      (await expectJson(
        await fetch(`${url}/bench/refresh-token`, { method: "POST" }),
        200,
        "oidc-provider mint",
      )).refresh_token,
    );
  }
  const token = (body: Record<string, string>) =>
    fetch(`${url}/token`, {
      method: "POST",
      headers: { ...FORM, Authorization: basic },
      body: new URLSearchParams(body),
    });
  return {
    refresh: async (i: number) => {
      const body = await expectJson(
        await token({ grant_type: "refresh_token", refresh_token: refreshTokens[i] }),
        200,
        "oidc-provider refresh grant",
      );
      if (!body.access_token?.startsWith("ey") || !body.id_token) {
        throw new Error("oidc-provider refresh: no JWT access token or ID token");
      }
      refreshTokens[i] = body.refresh_token;
    },
    clientCredentials: async () => {
      const body = await expectJson(
        await token({ grant_type: "client_credentials", scope: "api:read" }),
        200,
        "oidc-provider client_credentials",
      );
      if (!body.access_token?.startsWith("ey")) throw new Error("oidc-provider: not a JWT access token");
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Output

const fmtRate = (n: number) => n >= 100 ? Math.round(n).toLocaleString("en-US") : n.toPrecision(3);
const fmtRatio = (n: number) => `${n >= 10 ? n.toFixed(1) : n.toFixed(2)}×`;
const fmtMiB = (n: number) => `${Math.round(n)} MiB`;
const spread = (xs: readonly number[]) =>
  xs.length > 1 ? ` (${fmtRate(Math.min(...xs))}–${fmtRate(Math.max(...xs))})` : "";

async function machine(): Promise<string> {
  const cpu = /model name\s*:\s*(.+)/.exec(await Deno.readTextFile("/proc/cpuinfo"))?.[1]?.trim() ??
    "unknown CPU";
  const memGiB = Number(/MemTotal:\s+(\d+)/.exec(await Deno.readTextFile("/proc/meminfo"))?.[1] ?? 0) / 1024 /
    1024;
  const node = new TextDecoder().decode(
    (await new Deno.Command("node", { args: ["--version"] }).output()).stdout,
  )
    .trim();
  const sql = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
  let pg = "Postgres";
  try {
    const [row] = await sql`SHOW server_version`;
    pg = `Postgres ${String(row.server_version).split(" ")[0]}`;
  } finally {
    await sql.end();
  }
  return `${navigator.hardwareConcurrency} × ${cpu}, ${memGiB.toFixed(0)} GiB, ${Deno.build.os}; ` +
    `Deno ${Deno.version.deno}, Node ${node}, ${pg} on the same host`;
}

interface Results {
  whoAmI: Interleaved;
  signIn: Interleaved;
  refresh: Interleaved;
  clientCredentials: Interleaved;
  idle: Record<IdleName, number[]>;
}

function markdown(r: Results, svcName: string): string {
  const row = (workload: string, m: Interleaved, peer: string) => {
    const svc = m.medians.svc;
    const other = m.medians[peer];
    return `| ${workload} | ${fmtRate(svc)}/s${spread(m.rates.svc)} | ${peer} ${fmtRate(other)}/s${
      spread(m.rates[peer])
    } | ${fmtRatio(svc / other)} |`;
  };
  const mib = (xs: readonly number[]) =>
    `${fmtMiB(median(xs))}${
      xs.length > 1 ? ` (${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))})` : ""
    }`;
  const rss = (svc: string, svcXs: number[], peer: string, peerXs: number[]) =>
    `| idle RSS, defaults, fresh start: ${svc} | ${mib(svcXs)} | ${peer} ${mib(peerXs)} | ${
      fmtRatio(median(svcXs) / median(peerXs))
    } |`;
  return [
    `| workload | svc (${svcName}) | peer, same run | svc ÷ peer |`,
    "| --- | ---: | ---: | ---: |",
    row(
      `"who am I" over HTTP, ${CLIENTS} clients (\`/profile/me\` ÷ \`get-session\`)`,
      r.whoAmI,
      "Better Auth",
    ),
    row(
      `password sign-ins, ${SIGN_IN_CLIENTS} clients (argon2id 64 MiB ÷ scrypt)`,
      r.signIn,
      "Better Auth",
    ),
    row(
      `refresh grants, ${CLIENTS} clients (svc on Postgres ÷ memory adapter, JWT)`,
      r.refresh,
      "oidc-provider",
    ),
    row(`\`client_credentials\`, ${CLIENTS} clients (JWT)`, r.clientCredentials, "oidc-provider"),
    rss(`svc embedded (PGlite, ${svcName})`, r.idle.svcEmbedded, "Better Auth", r.idle.betterAuth),
    rss(`svc on Postgres (${svcName})`, r.idle.svcPostgres, "Better Auth", r.idle.betterAuth),
    rss(`svc on Postgres (${svcName})`, r.idle.svcPostgres, "oidc-provider", r.idle.oidcProvider),
  ].join("\n");
}

/**
 * Replaces what lies between `<!-- <name>:start -->` and `<!-- <name>:end -->` in `text` with
 * `block`: `peers-bench` for the run with svc on Deno, `peers-bench-node` for `--node`.
 */
export function replaceBetweenMarkers(text: string, name: string, block: string): string {
  const startMarker = `<!-- ${name}:start -->`;
  const endMarker = `<!-- ${name}:end -->`;
  const start = text.indexOf(startMarker);
  const end = text.indexOf(endMarker);
  if (start < 0 || end < start) {
    throw new Error(`docs/benchmarks.md needs the lines ${startMarker} and ${endMarker} around the table`);
  }
  return `${text.slice(0, start + startMarker.length)}\n\n${block}\n\n${text.slice(end)}`;
}

// ---------------------------------------------------------------------------------------------

if (import.meta.main) {
  const started = performance.now();
  const date = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  const machineLine = await machine();
  const elapsed = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;
  const log = (message: string) => console.error(`[${elapsed()}, load ${load().toFixed(2)}] ${message}`);
  noteLoad("start");
  if (SVC_RUNTIME === "node") await svcNodeBundle();
  else await buildDenoBundle();

  // The idle processes wait for their RSS reading while the throughput servers start and get their
  // users and tokens (CPU load does not change what an idle process holds); nothing is timed until
  // both are done.
  log(`idle RSS: ${IDLE_SAMPLES} fresh start(s) of each, read ${IDLE_SECONDS} s after ready`);
  const idleDone = idleRss();
  idleDone.catch(() => {});
  log(`starting svc (${SVC_RUNTIME}, Postgres), Better Auth, oidc-provider`);
  const running: Running[] = [];
  try {
    const svcServer = await startSvcOnPostgres(SVC_BENCH_ENV);
    running.push(svcServer);
    const betterAuthServer = await startBetterAuth();
    running.push(betterAuthServer);
    const oidcServer = await startPeer("oidc-provider-server.mjs", {});
    running.push(oidcServer);
    const svc = await prepareSvc(svcServer.url);
    const betterAuth = await prepareBetterAuth(betterAuthServer.url);
    const oidc = await prepareOidcProvider(oidcServer.url);
    log("prepared; waiting for the idle RSS readings");
    const idle = await idleDone;
    noteLoad("after idle RSS and set-up");
    const common = { rounds: ROUNDS, warmupSeconds: WARMUP_SECONDS };

    log(`"who am I": ${ROUNDS} rounds of ${SECONDS} s per side, ${CLIENTS} clients`);
    noteLoad("who am I");
    const whoAmI = await interleave(
      { name: "svc", request: svc.whoAmI },
      { name: "Better Auth", request: betterAuth.whoAmI },
      { ...common, clients: CLIENTS, seconds: SECONDS },
    );
    log(`sign-ins: ${ROUNDS} rounds of ${SIGN_IN_SECONDS} s per side, ${SIGN_IN_CLIENTS} clients`);
    noteLoad("sign-ins");
    const signIn = await interleave(
      { name: "svc", request: svc.signIn },
      { name: "Better Auth", request: betterAuth.signIn },
      { ...common, clients: SIGN_IN_CLIENTS, seconds: SIGN_IN_SECONDS, warmupSeconds: WARMUP_SECONDS * 2 },
    );
    log(`refresh grants: ${ROUNDS} rounds of ${SECONDS} s per side, ${CLIENTS} chains`);
    noteLoad("refresh grants");
    const refresh = await interleave(
      { name: "svc", request: svc.refresh },
      { name: "oidc-provider", request: oidc.refresh },
      { ...common, clients: CLIENTS, seconds: SECONDS },
    );
    log(`client_credentials: ${ROUNDS} rounds of ${SECONDS} s per side, ${CLIENTS} clients`);
    noteLoad("client_credentials");
    const clientCredentials = await interleave(
      { name: "svc", request: svc.clientCredentials },
      { name: "oidc-provider", request: oidc.clientCredentials },
      { ...common, clients: CLIENTS, seconds: SECONDS },
    );
    noteLoad("end");

    const results: Results = { whoAmI, signIn, refresh, clientCredentials, idle };
    const svcName = SVC_RUNTIME === "node" ? "Node" : "Deno";
    const table = markdown(results, svcName);
    const footer = [
      `Measured ${date} by \`npx deno run -A bench/peers/run.ts${QUICK ? " --quick" : ""}${
        SVC_RUNTIME === "node" ? " --node" : ""
      }\` (whole run ${elapsed()}): ${machineLine}. Load average (1 min): ${
        loads.map((l) => `${l.at} ${l.load.toFixed(2)}`).join(", ")
      }.`,
      `Rates are medians of ${ROUNDS} rounds per side (the slowest and fastest round in parentheses), the rounds ` +
      `alternating svc and the peer, ${SECONDS} s each (${SIGN_IN_SECONDS} s for sign-ins), through one ` +
      `load driver (\`bench/peers/driver.ts\`) in the same process; the peers run on Node, svc on ${svcName} ` +
      `on its own fresh Postgres database. Idle RSS: median of ${IDLE_SAMPLES} fresh start(s) each, ` +
      `read ${IDLE_SECONDS} s after ready, the process and its children. ` +
      `For RSS, lower is better (a ratio above 1× is svc using more).`,
    ].join("\n");
    console.log(table);
    console.log();
    console.log(footer);
    if (flag("--json")) {
      console.log(JSON.stringify({ ...results, loads, date, machine: machineLine }, null, 2));
    }
    if (flag("--docs")) {
      const page = new URL("../../docs/benchmarks.md", import.meta.url);
      await Deno.writeTextFile(
        page,
        replaceBetweenMarkers(
          await Deno.readTextFile(page),
          SVC_RUNTIME === "node" ? "peers-bench-node" : "peers-bench",
          `${table}\n\n${footer}`,
        ),
      );
      await new Deno.Command(Deno.execPath(), { args: ["fmt", "--quiet", page.pathname] }).output();
      console.error(`updated ${page.pathname}`);
    }
  } finally {
    for (const server of running.reverse()) await server.stop().catch((err) => console.error(err));
  }
}
