/**
 * `deno run -A bench/refresh_profile.ts [--grants 400] [--chains 16]`: where the time of a refresh
 * grant goes. One in-process app on the test Postgres server (no sockets: `app.fetch`), the
 * refresh path's parts timed by wrapping them: the HTTP layer (Hono routing, body parsing, the
 * JSON answer), the refresh token's SHA-256, the grant's one statement (rotation, session touch,
 * user status and membership), the access token's RS256 signature. Two rounds: one chain (each part's own latency,
 * nothing queued) and `--chains` concurrent chains (throughput, and how each part stretches when
 * the event loop and the pool are shared). Database round trips per grant are read from the pool
 * figures (`database.pool.acquisitions`: one per query, one per transaction).
 */
import { cryptoRandom } from "../core/random.ts";
import { systemClock } from "../core/clock.ts";
import { loadConfig } from "../core/config/mod.ts";
import { createApp } from "../http/app.ts";
import { createAuthStack } from "../http/auth/stack.ts";
import { createSqlStorage } from "../storage/storage.ts";
import * as refresh from "../core/tokens/refresh.ts";
import { freshPostgres } from "../test/support/db.ts";
import { seeder } from "../test/support/seed.ts";

const arg = (name: string, fallback: number) =>
  Deno.args.includes(name) ? Number(Deno.args[Deno.args.indexOf(name) + 1]) : fallback;
const GRANTS = arg("--grants", 400);
const CHAINS = arg("--chains", 16);

/** Accumulated time per part, in milliseconds. */
const spent = new Map<string, { ms: number; calls: number }>();
function add(part: string, ms: number): void {
  const entry = spent.get(part) ?? { ms: 0, calls: 0 };
  entry.ms += ms;
  entry.calls++;
  spent.set(part, entry);
}
// deno-lint-ignore no-explicit-any
function timed<T extends (...args: any[]) => Promise<any>>(part: string, fn: T): T {
  return (async (...args: Parameters<T>) => {
    const started = performance.now();
    try {
      return await fn(...args);
    } finally {
      add(part, performance.now() - started);
    }
  }) as T;
}

const database = await freshPostgres({ maxConnections: 10 });
try {
  const config = loadConfig({ env: { SVC_BASE_URL: "http://localhost:8080" } }).config;
  const storage = createSqlStorage(database, { clock: systemClock, random: cryptoRandom });
  const seed = seeder(database.db);
  const realmId =
    (await storage.realms.create({ name: "default", displayName: "Default", isDefault: true })).id;
  const userId = await seed.user(realmId);

  // The grant's database part: one statement (rotation, session touch, user status, membership).
  const rotateForGrant = storage.refreshTokens.rotateForGrant.bind(storage.refreshTokens);
  storage.refreshTokens.rotateForGrant = timed(
    "the grant's statement (rotation, session touch, user status, membership)",
    rotateForGrant,
  );
  const auth = createAuthStack({
    config,
    storage,
    clock: systemClock,
    random: cryptoRandom,
    events: { emit: () => {} },
  });
  await auth.keys.ensurePrimary(realmId);
  const mint = auth.tokens.mint.bind(auth.tokens);
  auth.tokens.mint = timed("access token signature (RS256)", mint);
  const app = createApp({
    config,
    readinessChecks: [],
    clock: systemClock,
    random: cryptoRandom,
    authenticator: auth.authenticator,
    routes: auth.routes,
  });
  const serviceRefresh = auth.sessions.refresh.bind(auth.sessions);
  auth.sessions.refresh = timed("SessionService.refresh (all of the above and more)", serviceRefresh);

  const grant = async (token: string): Promise<string> => {
    const started = performance.now();
    const res = await app.request("/auth/refresh", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ refreshToken: token }),
    });
    const body = await res.json();
    add("request through the app (app.fetch)", performance.now() - started);
    if (!body.refreshToken) throw new Error(`refresh: ${JSON.stringify(body)}`);
    return body.refreshToken;
  };

  // SHA-256 of a refresh token, timed on its own (it is a plain function the service calls inline).
  const sample = refresh.newRefreshToken(cryptoRandom).token;
  const hashStarted = performance.now();
  for (let i = 0; i < 10_000; i++) refresh.hashRefreshToken(sample);
  const hashMs = (performance.now() - hashStarted) / 10_000;

  const signIn = async () =>
    (await auth.sessions.signIn({ realmId, userId, mfa: "Password" })).tokens.refreshToken;

  const round = async (chains: number) => {
    const tokens = await Promise.all(Array.from({ length: chains }, signIn));
    for (let i = 0; i < 20; i++) tokens[i % chains] = await grant(tokens[i % chains]); // warm-up
    spent.clear();
    const acquisitions = database.pool.acquisitions;
    const perChain = Math.ceil(GRANTS / chains);
    const started = performance.now();
    await Promise.all(tokens.map(async (token) => {
      for (let i = 0; i < perChain; i++) token = await grant(token);
    }));
    const seconds = (performance.now() - started) / 1000;
    const grants = perChain * chains;
    console.log(
      `\n${chains} chain(s): ${grants} grants in ${seconds.toFixed(2)} s = ${
        (grants / seconds).toFixed(0)
      } grants/s; ${((database.pool.acquisitions - acquisitions) / grants).toFixed(1)} database round trips` +
        ` (queries or transactions) per grant`,
    );
    const whole = spent.get("request through the app (app.fetch)")!.ms / grants;
    console.log("| part | mean per grant | share of the request |");
    console.log("| --- | --- | --- |");
    for (const [part, { ms }] of spent) {
      console.log(
        `| ${part} | ${(ms / grants).toFixed(2)} ms | ${(100 * ms / grants / whole).toFixed(0)} % |`,
      );
    }
    console.log(`| refresh token SHA-256 (alone) | ${hashMs.toFixed(4)} ms | |`);
  };

  await round(1);
  await round(CHAINS);
} finally {
  await database.close();
}
