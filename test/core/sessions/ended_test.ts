/**
 * The ended-session set (issue 19 item 3): bounded in time (ids leave once their last token
 * expired) and in size (overflow answers `unknown`, never `live`, for what it may have dropped),
 * fed through the cache bus and preloaded at start; and two real app instances on one Postgres
 * database with `NotificationCacheBus`: a logout on A refuses the token on B at once, and an
 * instance started after the logout refuses it too.
 */
import { strict as assert } from "node:assert";
import { sql } from "kysely";
import fc from "fast-check";
import { ManualClock } from "../../../core/clock.ts";
import { loadConfig } from "../../../core/config/mod.ts";
import { seededRandom } from "../../../core/random.ts";
import { EndedSessions } from "../../../core/sessions/ended.ts";
import {
  type CacheInvalidation,
  InProcessCacheBus,
  NotificationCacheBus,
} from "../../../core/snapshots/bus.ts";
import { createApp } from "../../../http/app.ts";
import { createAuthStack } from "../../../http/auth/stack.ts";
import { openDatabase, type SvcDatabase } from "../../../storage/open.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { T0 } from "../../support/auth.ts";
import { freshPostgres, TEST_DATABASE_URL } from "../../support/db.ts";
import { seeder, uuid } from "../../support/seed.ts";

const RETAIN = 660_000;

Deno.test("ended sessions: an id is kept until its last token expired, then evicted", () => {
  const clock = new ManualClock(T0);
  const ended = new EndedSessions({ clock, retainMs: RETAIN });
  const a = uuid();
  const b = uuid();
  ended.record([{ id: a, endedAt: clock.now() }]);
  clock.advance(1000);
  ended.record([{ id: b, endedAt: clock.now() }]);
  assert.equal(ended.status(a, T0 - 5000), "ended");
  assert.equal(ended.status(a.toUpperCase(), T0), "ended");
  assert.equal(ended.status(uuid(), T0), "live");
  clock.advance(RETAIN - 1000);
  assert.equal(ended.status(a, T0), "live", "its tokens are dead anyway");
  assert.equal(ended.status(b, T0), "ended");
  ended.record([]);
  assert.equal(ended.size, 1, "expired ids leave the set");
  clock.advance(1000);
  ended.record([]);
  assert.equal(ended.size, 0);
  ended.record([{ id: uuid(), endedAt: clock.now() - RETAIN }, {
    id: "not-a-session",
    endedAt: clock.now(),
  }]);
  assert.equal(ended.size, 0, "already expired or malformed ids are not kept");
});

Deno.test("ended sessions: the size bound never turns an ended session live", () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 60 }), (max, count) => {
      const clock = new ManualClock(T0);
      const ended = new EndedSessions({ clock, retainMs: RETAIN, maxEntries: max });
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        const id = uuid();
        ids.push(id);
        ended.record([{ id, endedAt: clock.now() }]);
        clock.advance(1000);
      }
      assert.ok(ended.size <= max);
      // A token issued before its session ended is never reported live while the window lasts.
      for (const id of ids) assert.notEqual(ended.status(id, T0), "live");
      clock.advance(RETAIN);
      for (const id of ids) assert.equal(ended.status(id, T0), "live");
    }),
  );
});

Deno.test("ended sessions: announced on the bus, preloaded at start", async () => {
  const clock = new ManualClock(T0);
  const bus = new InProcessCacheBus();
  const seen: CacheInvalidation[] = [];
  await bus.subscribe((m) => seen.push(m));
  const a = new EndedSessions({ clock, retainMs: RETAIN, bus });
  const b = new EndedSessions({ clock, retainMs: RETAIN, bus });
  await a.start();
  await b.start();
  const ids = Array.from({ length: 250 }, () => uuid());
  await a.announce(ids.map((id) => ({ id, endedAt: clock.now() })));
  assert.equal(seen.length, 3, "chunked below the NOTIFY payload limit");
  assert.ok(seen.every((m) => m.scope === "sessions" && JSON.stringify(m).length < 8000));
  for (const id of ids) assert.equal(b.status(id, T0), "ended");
  await b.stop();

  const stored = uuid();
  const c = new EndedSessions({
    clock,
    retainMs: RETAIN,
    source: {
      listEndedSince: (since, limit) => {
        assert.equal(since.getTime(), T0 - RETAIN);
        assert.ok(limit > 1);
        return Promise.resolve([{ id: stored, endedAt: T0 - 1000 }]);
      },
    },
  });
  await c.start();
  assert.equal(c.status(stored, T0 - 2000), "ended");
});

Deno.test("two instances on one Postgres: a logout on A stops the token on B at once", async () => {
  const first = await freshPostgres();
  const schema = (await sql<{ s: string }>`SELECT current_schema() AS s`.execute(first.db)).rows[0].s;
  const second = await openDatabase({ kind: "postgres", url: TEST_DATABASE_URL, schema });
  const third = await openDatabase({ kind: "postgres", url: TEST_DATABASE_URL, schema });
  const clock = new ManualClock(Date.now());
  const config = loadConfig({ env: {} }).config;
  const instance = (database: SvcDatabase, seed: number) => {
    const storage = createSqlStorage(database, { clock, random: seededRandom(seed) });
    const auth = createAuthStack({
      config,
      storage,
      clock,
      random: seededRandom(seed),
      events: { emit: () => {} },
      bus: new NotificationCacheBus(database.notifications),
    });
    const app = createApp({
      config,
      readinessChecks: [],
      clock,
      random: seededRandom(seed),
      authenticator: auth.authenticator,
      routes: auth.routes,
    });
    return { auth, app, storage, database };
  };
  const a = instance(first, 1);
  const b = instance(second, 2);
  try {
    await a.auth.start();
    await b.auth.start();
    const realmId =
      (await a.storage.realms.create({ name: "default", displayName: "Default", isDefault: true }))
        .id;
    const userId = await seeder(first.db).user(realmId);
    await a.auth.ensureKeys();
    const { tokens } = await a.auth.sessions.signIn({ realmId, userId, mfa: "Password" });
    const headers = { Authorization: `Bearer ${tokens.accessToken}` };
    assert.equal((await b.app.request("/profile/me", { headers })).status, 200, "verified and cached on B");

    // B's own listener runs before this one on the same connection: once this fires, B knows.
    const delivered = Promise.withResolvers<void>();
    const unlisten = await second.notifications.listen("svc_authz_snapshots", () => delivered.resolve());
    assert.equal((await a.app.request("/auth/logout", { method: "POST", headers })).status, 204);
    await delivered.promise;
    await unlisten();
    const refused = await b.app.request("/profile/me", { headers });
    assert.equal(refused.status, 401);
    assert.equal((await refused.json()).error.code, "invalid_token");

    const c = instance(third, 3);
    await c.auth.start();
    assert.equal((await c.app.request("/profile/me", { headers })).status, 401, "preloaded at start");
    await c.auth.stop();
  } finally {
    await a.auth.stop();
    await b.auth.stop();
    await third.close();
    await second.close();
    await first.close();
  }
});
