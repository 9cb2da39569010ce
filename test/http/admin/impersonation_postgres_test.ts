/**
 * Impersonation on Postgres (issue 12): 50 concurrent starts by one actor give exactly one
 * impersonation (the rest 409), and ending an impersonation on instance A stops its token on
 * instance B at once (two app instances on one database, `NotificationCacheBus`).
 */
import { checkedSink } from "../../support/events.ts";
import { strict as assert } from "node:assert";
import { sql } from "kysely";
import { ManualClock } from "../../../core/clock.ts";
import { loadConfig } from "../../../core/config/mod.ts";
import { EventPublisher } from "../../../core/events/publisher.ts";
import { argon2idParamsFromConfig } from "../../../core/passwords/argon2-params.ts";
import { createPasswordHasher } from "../../../core/passwords/create.ts";
import { PasswordService } from "../../../core/passwords/service.ts";
import { seededRandom } from "../../../core/random.ts";
import { NotificationCacheBus } from "../../../core/snapshots/bus.ts";
import { SubjectSnapshots } from "../../../core/snapshots/service.ts";
import { createApp } from "../../../http/app.ts";
import { createAuthStack } from "../../../http/auth/stack.ts";
import { createLoginStack } from "../../../http/auth/login-stack.ts";
import { createPasskeyRoutes } from "../../../http/routes/passkeys.ts";
import { svcRoutes } from "../../../http/svc-routes.ts";
import { openDatabase, type SvcDatabase } from "../../../storage/open.ts";
import { createSqlSubjectGrantSource } from "../../../storage/sql/subject-grants.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { adminBed } from "../../support/admin.ts";
import { freshPostgres, TEST_DATABASE_URL } from "../../support/db.ts";
import { FAST_PASSWORD_ENV } from "../../support/login.ts";
import { seeder } from "../../support/seed.ts";

Deno.test("impersonation on Postgres: 50 concurrent starts by one actor give exactly one", async () => {
  const admin = await adminBed({}, { postgres: true });
  try {
    const seed = seeder(admin.bed.database.db);
    const targets = await Promise.all(Array.from({ length: 50 }, () => seed.user(admin.realmId)));
    const before = await admin.chainLength();
    const answers = await Promise.all(
      targets.map((targetUserId, i) =>
        admin.request("POST", "/svc-admin/impersonation", { body: { targetUserId, reason: `race ${i}` } })
      ),
    );
    const statuses = answers.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 201).length, 1, statuses.join(","));
    assert.equal(statuses.filter((s) => s === 409).length, 49, statuses.join(","));
    for (const res of answers) await res.body?.cancel();
    const current = await admin.bed.storage.impersonations.list(admin.realmId, { state: "current" });
    assert.equal(current.total, 1);
    assert.equal(await admin.chainLength(), before + 1, "one start, one audit entry");
  } finally {
    await admin.close();
  }
});

Deno.test("impersonation on Postgres: end on instance A stops the token on instance B at once", async () => {
  const first = await freshPostgres();
  const schema = (await sql<{ s: string }>`SELECT current_schema() AS s`.execute(first.db)).rows[0].s;
  const second = await openDatabase({ kind: "postgres", url: TEST_DATABASE_URL, schema });
  const clock = new ManualClock(Date.now());
  const config = loadConfig({ env: FAST_PASSWORD_ENV }).config;
  const instance = (database: SvcDatabase, seed: number) => {
    const random = seededRandom(seed);
    const storage = createSqlStorage(database, { clock, random });
    const bus = new NotificationCacheBus(database.notifications);
    const publisher = new EventPublisher({ storage, sink: checkedSink(() => {}), random });
    const auth = createAuthStack({ config, storage, clock, random, events: publisher, bus });
    const snapshots = new SubjectSnapshots({
      source: createSqlSubjectGrantSource(database.db),
      bus,
      events: { emit: () => {} },
      clock,
      ttlMs: 60_000,
      maxEntries: 100,
    });
    const passwords = new PasswordService({
      hasher: createPasswordHasher({ workers: 0 }),
      params: argon2idParamsFromConfig(config.password),
    });
    const app = createApp({
      config,
      readinessChecks: [],
      clock,
      random,
      authenticator: auth.authenticator,
      routes: svcRoutes({
        storage,
        snapshots,
        publisher,
        auth,
        login: {
          ...createLoginStack({
            config,
            storage,
            clock,
            random,
            auth,
            events: publisher,
            snapshots,
            passwords,
          }),
          routes: [],
        },
        passkeys: createPasskeyRoutes({ config, storage, clock, random, events: publisher, auth }),
      }),
    });
    return { auth, app, storage, snapshots };
  };
  const a = instance(first, 1);
  const b = instance(second, 2);
  try {
    await a.auth.start();
    await b.auth.start();
    const realmId =
      (await a.storage.realms.create({ name: "default", displayName: "Default", isDefault: true })).id;
    await a.auth.ensureKeys();
    const seed = seeder(first.db);
    const adminId = await seed.user(realmId);
    const role = await seed.role(realmId, "admin", [{ pattern: "svc:*:*" }]);
    await seed.assign(realmId, role, { kind: "User", id: adminId });
    const target = await seed.user(realmId);
    const adminToken = (await a.auth.sessions.signIn({ realmId, userId: adminId, mfa: "MultiFactor" })).tokens
      .accessToken;
    const started = await a.app.request("/svc-admin/impersonation", {
      method: "POST",
      headers: { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/json" },
      body: JSON.stringify({ targetUserId: target, reason: "two instances" }),
    });
    assert.equal(started.status, 201, await started.clone().text());
    const { accessToken, impersonationId } = await started.json();
    const headers = { Authorization: `Bearer ${accessToken}` };
    assert.equal((await b.app.request("/profile/me", { headers })).status, 200, "verified and cached on B");

    const delivered = Promise.withResolvers<void>();
    const unlisten = await second.notifications.listen("svc_authz_snapshots", () => delivered.resolve());
    const end = await a.app.request(`/svc-admin/impersonation/${impersonationId}/end`, {
      method: "POST",
      headers: { Authorization: `Bearer ${adminToken}` },
    });
    assert.equal(end.status, 200, await end.clone().text());
    await delivered.promise;
    await unlisten();
    const refused = await b.app.request("/profile/me", { headers });
    assert.equal(refused.status, 401);
    assert.equal((await refused.json()).error.code, "invalid_token");
  } finally {
    await a.snapshots.stop();
    await b.snapshots.stop();
    await a.auth.stop();
    await b.auth.stop();
    await second.close();
    await first.close();
  }
});
