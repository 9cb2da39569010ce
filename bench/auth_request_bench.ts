/**
 * An authenticated request against the bare route of the same Hono app, in one run,
 * interleaved:
 *
 *     npx deno run -A bench/auth_request_bench.ts [rounds] [requests-per-round]
 *
 * - baseline: `GET /healthz` carrying the same `Authorization` header (the bare route never
 *   authenticates; the header is there so that both requests are the same bytes: an in-process
 *   `Request` validates every header value when it is built, a cost of the bench's client);
 * - `GET /healthz` without the header, for reference;
 * - `GET /profile/permissions` with a bearer access token, verified-token cache on (the
 *   default): one signature check, then cache hits until the token expires;
 * - the same without the cache: an RS256 signature check on every request.
 *
 * Both apps share one embedded database (PGlite, in memory); the subject snapshot cache is
 * warm, so the authenticated figure is token verification plus routing and the snapshot
 * lookup. The three cases run in rounds (default 31 rounds of 2,000 requests), their order
 * rotating from round to round, so that a load spike or a GC pause of the machine falls on
 * every case alike; each round's rate is divided by the same round's baseline rate, and the
 * median and p75 of those ratios are reported (means are skewed by outliers). Goal (issue 29):
 * the cached authenticated request at least 0.9 of the bare route.
 *
 * @module
 */
import { systemClock } from "../core/clock.ts";
import { loadConfig } from "../core/config/mod.ts";
import { nullEventSink } from "../core/events/sink.ts";
import { cryptoRandom } from "../core/random.ts";
import { InProcessCacheBus } from "../core/snapshots/bus.ts";
import { SubjectSnapshots } from "../core/snapshots/service.ts";
import { createApp } from "../http/app.ts";
import { createAuthStack } from "../http/auth/stack.ts";
import { authzRoutes } from "../http/routes/authz.ts";
import { openDatabase } from "../storage/open.ts";
import { createSqlSubjectGrantSource } from "../storage/sql/subject-grants.ts";
import { createSqlStorage } from "../storage/storage.ts";
import { seeder } from "../test/support/seed.ts";

const database = await openDatabase({ kind: "embedded" });
await database.ensureSchema();
const deps = { clock: systemClock, random: cryptoRandom };
const storage = createSqlStorage(database, deps);
const config = loadConfig({ env: {} }).config;
const snapshots = new SubjectSnapshots({
  source: createSqlSubjectGrantSource(database.db),
  bus: new InProcessCacheBus(),
  events: nullEventSink,
  clock: systemClock,
  ttlMs: 3_600_000,
  maxEntries: 1000,
});
await snapshots.start();

const seed = seeder(database.db);
const realmId = await seed.realm();
const userId = await seed.user(realmId);
const orgId = await seed.org(realmId, [userId]);
await seed.assign(realmId, await seed.role(realmId, "reader", [{ pattern: "docs:org:*" }]), {
  kind: "User",
  id: userId,
}, orgId);

function build(cacheEntries: number) {
  const auth = createAuthStack({
    config,
    storage,
    ...deps,
    events: nullEventSink,
    verifiedTokenCacheEntries: cacheEntries,
  });
  const app = createApp({
    config,
    readinessChecks: [],
    ...deps,
    authenticator: auth.authenticator,
    routes: [...auth.routes, authzRoutes(snapshots)],
  });
  return { auth, app };
}
const cached = build(10_000);
const uncached = build(0);
const { tokens } = await cached.auth.sessions.signIn({ realmId, userId, orgId, mfa: "Password" });
const headers = { Authorization: `Bearer ${tokens.accessToken}` };

// Warm up both paths and check they answer 200 (a failing bench must not look fast).
for (const { app } of [cached, uncached]) {
  const res = await app.request("/profile/permissions", { headers });
  if (res.status !== 200) {
    throw new Error(`GET /profile/permissions answered ${res.status}: ${await res.text()}`);
  }
  await res.body?.cancel();
}

type Case = { name: string; run: () => Promise<void> };
const cases: Case[] = [
  {
    // The same request bytes as the authenticated case (building a Request validates every header
    // value, which for a 900-byte bearer token is a visible share of an in-process request): the
    // bare route never asks for the principal, so the difference is what authentication costs.
    name: "GET /healthz with the same Authorization header (baseline, not authenticated)",
    async run() {
      const res = await cached.app.request("/healthz", { headers });
      await res.body?.cancel();
    },
  },
  {
    name: "GET /profile/permissions, bearer, verified-token cache",
    async run() {
      const res = await cached.app.request("/profile/permissions", { headers });
      await res.body?.cancel();
    },
  },
  {
    name: "GET /profile/permissions, bearer, no cache (RS256 verify each time)",
    async run() {
      const res = await uncached.app.request("/profile/permissions", { headers });
      await res.body?.cancel();
    },
  },
  {
    name: "GET /healthz without any header",
    async run() {
      const res = await cached.app.request("/healthz");
      await res.body?.cancel();
    },
  },
];

const rounds = Number(Deno.args[0] ?? 31);
const perRound = Number(Deno.args[1] ?? 2000);
async function timeRound(c: Case, n: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await c.run();
  return n / ((performance.now() - t0) / 1000);
}
// Warm-up (JIT) of every case.
for (const c of cases) await timeRound(c, Math.max(200, perRound / 4));
const rates: number[][] = cases.map(() => []);
for (let r = 0; r < rounds; r++) {
  for (let k = 0; k < cases.length; k++) {
    const i = (k + r) % cases.length;
    rates[i].push(await timeRound(cases[i], perRound));
  }
}
const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const load = (() => {
  try {
    return Deno.loadavg()[0].toFixed(2);
  } catch {
    return "n/a";
  }
})();
console.log(
  `Deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cores, ${rounds} interleaved rounds of ${perRound} requests, load ${load}`,
);
console.log("| case | median req/s | p75 req/s | ÷ baseline (median of per-round ratios) | p75 |");
console.log("| --- | ---: | ---: | ---: | ---: |");
cases.forEach((c, i) => {
  const ratios = rates[i].map((rate, r) => rate / rates[0][r]);
  console.log(
    `| ${c.name} | ${Math.round(quantile(rates[i], 0.5)).toLocaleString("en-US")} | ${
      Math.round(quantile(rates[i], 0.75)).toLocaleString("en-US")
    } | ${quantile(ratios, 0.5).toFixed(3)} | ${quantile(ratios, 0.75).toFixed(3)} |`,
  );
});
await snapshots.stop();
await database.close();
