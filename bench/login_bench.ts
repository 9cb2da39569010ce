/**
 * Password login cost and its effect on other requests, each beside its baseline measured in
 * the same run:
 *
 *     deno run -A bench/login_bench.ts [--logins 24] [--seconds 8] [--postgres] [--history 600]
 *
 * 0. Sign-ins before and after issue 29, interleaved in one run on the same database and users:
 *    "after" is the login stack as svc builds it (the risk gate's login history one row read, an
 *    event nobody subscribes to one ledger statement, the abuse counters' hits one statement on
 *    the SQL store); "before" rebuilds the earlier path beside it (the history paged from the
 *    ledger 100 events at a time, every event in its own transaction, one statement per counter).
 *    Each user starts with `--history` ledger events of the last hour (a busy account). Medians of
 *    the per-login time one at a time, and sign-ins/s with one login in flight per worker.
 * 1. Per-login cost: `POST /auth/login` through the whole pipeline (abuse gate, user lookup,
 *    argon2id verification on the worker pool, risk gate with the ledger's login history, session,
 *    tokens, device and ledger writes), one login at a time, against the raw argon2id hash
 *    (the default WebAssembly SIMD backend, in this thread, same parameters) of the same run. Goal: at most 1.15× the raw hash.
 *    Throughput with as many logins in flight as there are workers is printed beside it.
 * 2. The latency of an authenticated `GET /profile/permissions` (bearer, verified-token cache and
 *    snapshot cache warm) while logins run concurrently (one in flight per worker), against the
 *    same requests with no logins. Goal: p99 during the burst at most 2× the idle p99.
 *
 * GETs run one after another (about one per millisecond, yielding to the event loop between them)
 * for `--seconds` in each phase. The spec's argon2id parameters (64 MiB,
 * 3 iterations, one lane), a worker pool of one Web Worker per core, PGlite in memory (or, with
 * `--postgres`, the server named by `SVC_TEST_DATABASE_URL`, default
 * postgres://postgres@127.0.0.1:5432/test, in a scratch schema), the in-memory abuse counters
 * (limits raised so the gate never blocks), the event publisher writing the security ledger.
 *
 * @module
 */
import { simdArgon2idRaw } from "../core/passwords/argon2-simd.ts";
import { sql } from "kysely";
import { systemClock } from "../core/clock.ts";
import type { SvcEvent } from "../core/events/sink.ts";
import { securityEventLoginHistory } from "../core/risk/providers.ts";
import { createSqlCounterStore } from "../storage/sql/abuse-counters.ts";
import { loadConfig } from "../core/config/mod.ts";
import { EventPublisher } from "../core/events/publisher.ts";
import { nullEventSink } from "../core/events/sink.ts";
import { argon2idParamsFromConfig } from "../core/passwords/argon2-params.ts";
import { defaultWorkerCount, webWorkerFactory, WorkerPoolPasswordHasher } from "../core/passwords/pool.ts";
import { cryptoRandom } from "../core/random.ts";
import { InProcessCacheBus } from "../core/snapshots/bus.ts";
import { SubjectSnapshots } from "../core/snapshots/service.ts";
import { createApp } from "../http/app.ts";
import { createLoginStack } from "../http/auth/login-stack.ts";
import { createAuthStack } from "../http/auth/stack.ts";
import { authzRoutes } from "../http/routes/authz.ts";
import { openDatabase } from "../storage/open.ts";
import { createSqlSubjectGrantSource } from "../storage/sql/subject-grants.ts";
import { createSqlStorage } from "../storage/storage.ts";

function arg(name: string, fallback: number): number {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Number(Deno.args[i + 1]) : fallback;
}
const LOGINS = arg("logins", 24);
const SECONDS = arg("seconds", 8);
const POSTGRES = Deno.args.includes("--postgres");
const HISTORY = arg("history", 600);
const WORKERS = defaultWorkerCount();

const schema = `svc_login_bench_${Date.now().toString(36)}`;
const database = POSTGRES
  ? await openDatabase({
    kind: "postgres",
    url: Deno.env.get("SVC_TEST_DATABASE_URL") ?? "postgres://postgres@127.0.0.1:5432/test",
    schema,
  })
  : await openDatabase({ kind: "embedded" });
await database.ensureSchema();
const deps = { clock: systemClock, random: cryptoRandom };
const storage = createSqlStorage(database, deps);
const config = loadConfig({
  env: {
    SVC_ABUSE_PER_IP_LIMIT: "1000000",
    SVC_ABUSE_PER_IP_ACCOUNT_LIMIT: "1000000",
    SVC_ABUSE_ACCOUNT_LOCKOUT_LIMIT: "1000000",
  },
}).config;
const params = argon2idParamsFromConfig(config.password);
const realm = await storage.realms.create({ name: "default", displayName: "Default", isDefault: true });
const publisher = new EventPublisher({ storage, sink: nullEventSink, ...deps });
const auth = createAuthStack({ config, storage, ...deps, events: publisher });
await auth.ensureKeys();
const snapshots = new SubjectSnapshots({
  source: createSqlSubjectGrantSource(database.db),
  bus: new InProcessCacheBus(),
  events: nullEventSink,
  clock: systemClock,
  ttlMs: 3_600_000,
  maxEntries: 1000,
});
await snapshots.start();
const hasher = new WorkerPoolPasswordHasher({ size: WORKERS, factory: webWorkerFactory() });
// The abuse counters in the database, as svc start builds them.
const counters = createSqlCounterStore(database.db, { clock: systemClock });
const login = createLoginStack({
  config,
  storage,
  ...deps,
  auth,
  events: publisher,
  snapshots,
  hasher,
  counters,
});
// The path before issue 29, beside it: history paged from the ledger, an event per transaction,
// one statement per counter.
const legacyEvents = {
  transaction: publisher.transaction.bind(publisher),
  emit: (event: SvcEvent) => void publisher.transaction((_tx, emit) => emit(event)).catch(() => {}),
};
const { reserveAll: _batched, ...unbatched } = counters;
const legacy = createLoginStack({
  config,
  storage,
  ...deps,
  auth,
  events: legacyEvents,
  snapshots,
  hasher,
  passwords: login.passwords,
  counters: unbatched,
  history: securityEventLoginHistory(storage.securityEvents),
});
const app = createApp({
  config,
  readinessChecks: [],
  ...deps,
  authenticator: auth.authenticator,
  routes: [...auth.routes, authzRoutes(snapshots), ...login.routes],
});
const legacyApp = createApp({
  config,
  readinessChecks: [],
  ...deps,
  authenticator: auth.authenticator,
  routes: [...auth.routes, ...legacy.routes],
});

const PASSWORD = "correct horse battery staple";
const users = Array.from({ length: WORKERS + 1 }, (_, i) => `user${i}@example.test`);
for (const email of users) {
  const user = await storage.users.create({ realmId: realm.id, email, emailVerified: true });
  await storage.passwordCredentials.replace(user.id, await login.passwords.hash(PASSWORD));
  // A busy account: ledger events of the last hour, one in a hundred a sign-in.
  await sql`INSERT INTO security_events (id, realm_id, user_id, kind, occurred_at, ip_address)
    SELECT gen_random_uuid(), ${realm.id}::uuid, ${user.id}::uuid,
      CASE WHEN g % 100 = 0 THEN 'login.succeeded' ELSE 'token.refreshed' END,
      now() - make_interval(secs => 3500) + make_interval(secs => g * 3000.0 / ${HISTORY}), '192.0.2.1'
    FROM generate_series(1, ${HISTORY}) AS g`.execute(database.db);
}
// The login history of those events, as a schema from before it gets on its first start.
await sql`DROP TABLE login_history`.execute(database.db);
await sql`DELETE FROM svc_schema_state`.execute(database.db);
await database.ensureSchema();
await login.passwords.prepare();

async function doLogin(email: string, on: typeof app = app): Promise<{ accessToken: string }> {
  const res = await on.request("/auth/login", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ email, password: PASSWORD, deviceFingerprint: `device-of-${email}` }),
  }, { clientAddress: "203.0.113.10" });
  const body = await res.json();
  // A failing bench must not look fast.
  if (res.status !== 200 || !body.accessToken) {
    throw new Error(`login failed: ${res.status} ${JSON.stringify(body)}`);
  }
  return body;
}

// Warm up: every worker compiled, every device known, every path taken once.
for (const email of users) await doLogin(email);
await Promise.all(users.slice(0, WORKERS).map((email) => doLogin(email)));
const { accessToken } = await doLogin(users[WORKERS]);
const headers = { Authorization: `Bearer ${accessToken}` };
async function get(): Promise<number> {
  const start = performance.now();
  const res = await app.request("/profile/permissions", { headers });
  if (res.status !== 200) throw new Error(`GET failed: ${res.status}`);
  await res.arrayBuffer();
  return performance.now() - start;
}
for (let i = 0; i < 200; i++) await get();

// 0. Before and after issue 29, interleaved: sequential logins, then logins in flight per worker.
for (const email of users) await doLogin(email, legacyApp);
const phases = { after: app, before: legacyApp } as const;
const perLogin: Record<keyof typeof phases, number[]> = { after: [], before: [] };
const perSecond: Record<keyof typeof phases, number[]> = { after: [], before: [] };
const COMPARE_ROUNDS = 3;
for (let round = 0; round < COMPARE_ROUNDS; round++) {
  const order = (round % 2 === 0 ? ["after", "before"] : ["before", "after"]) as (keyof typeof phases)[];
  for (const phase of order) {
    for (let i = 0; i < Math.ceil(LOGINS / COMPARE_ROUNDS); i++) {
      const start = performance.now();
      await doLogin(users[WORKERS], phases[phase]);
      perLogin[phase].push(performance.now() - start);
    }
    const begun = performance.now();
    let count = 0;
    await Promise.all(
      users.slice(0, WORKERS).map(async (email) => {
        for (let i = 0; i < Math.ceil(LOGINS / WORKERS / COMPARE_ROUNDS) + 1; i++) {
          await doLogin(email, phases[phase]);
          count++;
        }
      }),
    );
    perSecond[phase].push(count / ((performance.now() - begun) / 1000));
  }
}
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

// 1. Raw argon2id against one login at a time (interleaved rounds, so drift hits both alike).
const salt = crypto.getRandomValues(new Uint8Array(16));
const raw: number[] = [];
const sequential: number[] = [];
for (let i = 0; i < LOGINS; i++) {
  let start = performance.now();
  await simdArgon2idRaw(new TextEncoder().encode(PASSWORD), params, salt, 32);
  raw.push(performance.now() - start);
  start = performance.now();
  await doLogin(users[0]);
  sequential.push(performance.now() - start);
}

// Throughput with one login in flight per worker.
let started = performance.now();
let done = 0;
await Promise.all(
  users.slice(0, WORKERS).map(async (email) => {
    for (let i = 0; i < Math.ceil(LOGINS / WORKERS); i++) {
      await doLogin(email);
      done++;
    }
  }),
);
const concurrentPerSecond = done / ((performance.now() - started) / 1000);

// 2. Authenticated GET latency, idle, then during a login burst.
async function gets(seconds: number): Promise<number[]> {
  const out: number[] = [];
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    out.push(await get());
    // Like a client pacing its requests: back to back on microtasks would starve the logins'
    // worker replies and timers (macrotasks) and measure nothing.
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return out;
}
// Alternating rounds (idle, burst, idle, burst…), so that drift and warm-up hit both alike.
const ROUNDS = 4;
const idle: number[] = [];
const busy: number[] = [];
let burstLogins = 0;
let busySeconds = 0;
for (let round = 0; round < ROUNDS; round++) {
  idle.push(...await gets(SECONDS / ROUNDS));
  let burst = true;
  const burstLoops = users.slice(0, WORKERS).map(async (email) => {
    while (burst) {
      await doLogin(email);
      burstLogins++;
    }
  });
  await new Promise((r) => setTimeout(r, 50));
  started = performance.now();
  busy.push(...await gets(SECONDS / ROUNDS));
  busySeconds += (performance.now() - started) / 1000;
  burst = false;
  await Promise.all(burstLoops);
}

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const ms = (n: number) => n.toFixed(n < 10 ? 2 : 1);

const rawMs = mean(raw);
const loginMs = mean(sequential);
console.log(
  `${
    POSTGRES ? "Postgres" : "PGlite"
  }; argon2id m=${params.memoryKiB} KiB t=${params.iterations} p=${params.parallelism}; ${WORKERS} password workers; ${LOGINS} logins per figure; GETs: ${idle.length} idle, ${busy.length} during logins`,
);
console.log("");
console.log("| measure | figure | baseline (same run) | ratio | goal |");
console.log("| --- | ---: | ---: | ---: | ---: |");
console.log(
  `| per-login cost, one at a time (mean) | ${ms(loginMs)} ms | raw argon2id hash ${ms(rawMs)} ms | ${
    (loginMs / rawMs).toFixed(2)
  }× | ≤ 1.15× |`,
);
console.log(
  `| logins/s, ${WORKERS} in flight | ${concurrentPerSecond.toFixed(1)} | raw hashes/s, one thread ${
    (1000 / rawMs).toFixed(1)
  } | ${(concurrentPerSecond / (1000 / rawMs)).toFixed(2)}× | |`,
);
console.log(
  `| GET /profile/permissions p99 during logins | ${ms(pct(busy, 99))} ms | idle p99 ${
    ms(pct(idle, 99))
  } ms | ${(pct(busy, 99) / pct(idle, 99)).toFixed(2)}× | ≤ 2× |`,
);
console.log(
  `| GET /profile/permissions p50 during logins | ${ms(pct(busy, 50))} ms | idle p50 ${
    ms(pct(idle, 50))
  } ms | ${(pct(busy, 50) / pct(idle, 50)).toFixed(2)}× | |`,
);
console.log("");
console.log(
  `(${burstLogins} logins completed during the bursts; GETs measured for ${
    busySeconds.toFixed(1)
  } s of them, in ${ROUNDS} rounds alternating with idle ones)`,
);

console.log("");
console.log(
  `Before/after issue 29 (${COMPARE_ROUNDS} interleaved rounds, medians; ${HISTORY} ledger events per user):`,
);
console.log("");
console.log("| measure | after | before | after ÷ before |");
console.log("| --- | ---: | ---: | ---: |");
console.log(
  `| per-login time, one at a time | ${ms(median(perLogin.after))} ms | ${ms(median(perLogin.before))} ms | ${
    (median(perLogin.after) / median(perLogin.before)).toFixed(2)
  }× |`,
);
console.log(
  `| sign-ins/s, ${WORKERS} in flight | ${median(perSecond.after).toFixed(1)} | ${
    median(perSecond.before).toFixed(1)
  } | ${(median(perSecond.after) / median(perSecond.before)).toFixed(2)}× |`,
);

await legacy.idle();
await login.close();
await snapshots.stop();
if (POSTGRES) await sql.raw(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).execute(database.db);
await database.close();
