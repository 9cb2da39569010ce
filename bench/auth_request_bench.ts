/**
 * An authenticated request against the bare route of the same Hono app, in one run:
 *
 *     deno bench -A bench/auth_request_bench.ts
 *
 * - baseline: `GET /healthz` (no authentication);
 * - `GET /profile/permissions` with a bearer access token, verified-token cache on (the
 *   default): one signature check, then cache hits until the token expires;
 * - the same without the cache: an RS256 signature check on every request.
 *
 * Both apps share one embedded database (PGlite, in memory); the subject snapshot cache is
 * warm, so the authenticated figure is token verification plus routing and the snapshot
 * lookup. Goal: with the cache, the authenticated route keeps at least half of the bare
 * route's throughput (the report prints each figure beside the baseline).
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

const group = "auth request";
Deno.bench({
  name: "GET /healthz (unauthenticated)",
  group,
  baseline: true,
  async fn() {
    const res = await cached.app.request("/healthz");
    await res.body?.cancel();
  },
});
Deno.bench({
  name: "GET /profile/permissions, bearer, verified-token cache",
  group,
  async fn() {
    const res = await cached.app.request("/profile/permissions", { headers });
    await res.body?.cancel();
  },
});
Deno.bench({
  name: "GET /profile/permissions, bearer, no cache (RS256 verify each time)",
  group,
  async fn() {
    const res = await uncached.app.request("/profile/permissions", { headers });
    await res.body?.cancel();
  },
});

globalThis.addEventListener("unload", () => {
  void snapshots.stop();
  void database.close();
});
