/**
 * `login_history` (issue 29), on both drivers: a `login.succeeded` append updates the user's row in
 * the same statement (latest time and address, the latest 500 times), other kinds leave it alone;
 * the risk gate's questions read that one row and answer as the ledger reader did (never fewer
 * sign-ins); erasure forgets the address, retention drops rows past it; a schema created before
 * the table is filled from the ledger when the table appears; concurrent sign-ins all count.
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { ManualClock } from "../../../core/clock.ts";
import { seededRandom } from "../../../core/random.ts";
import { securityEventLoginHistory } from "../../../core/risk/providers.ts";
import { LOGIN_HISTORY_KEEP } from "../../../storage/sql/login-history.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { drivers } from "../../support/db.ts";

const T0 = Date.UTC(2026, 0, 1);

for (const driver of drivers) {
  Deno.test(`login history (${driver.name}): kept by the sign-in appends, read in one row`, async () => {
    const database = await driver.open();
    try {
      const clock = new ManualClock(T0);
      const storage = createSqlStorage(database, { clock, random: seededRandom(1) });
      const realm = await storage.realms.create({ name: "r", displayName: "R", isDefault: true });
      const user = await storage.users.create({ realmId: realm.id, email: "h@example.test" });
      const other = await storage.users.create({ realmId: realm.id, email: "o@example.test" });
      const history = storage.loginHistory;
      assert.equal(await history.lastLogin(user.id), null);
      assert.equal(await history.countSince(user.id, 0), 0);
      for (let i = 0; i < 30; i++) {
        await storage.securityEvents.append({
          realmId: realm.id,
          userId: user.id,
          kind: i % 3 === 0 ? "login.succeeded" : "login.failed",
          occurredAt: new Date(T0 + i * 1000),
          ipAddress: `192.0.2.${i}`,
        });
      }
      // Out of order: an older sign-in does not replace the latest one.
      await storage.securityEvents.append({
        realmId: realm.id,
        userId: user.id,
        kind: "login.succeeded",
        occurredAt: new Date(T0 - 5000),
        ipAddress: "198.51.100.1",
      });
      assert.deepEqual(await history.lastLogin(user.id), { at: T0 + 27_000, ip: "192.0.2.27" });
      assert.equal(await history.countSince(user.id, T0), 10);
      assert.equal(await history.countSince(user.id, T0 - 5000), 11);
      assert.equal(await history.countSince(user.id, T0 + 28_000), 0);
      assert.equal(await history.countSince(other.id, 0), 0);
      assert.equal(await history.lastLogin("not-a-uuid"), null);
      // The same answers as the ledger reader it replaces.
      const ledger = securityEventLoginHistory(storage.securityEvents);
      assert.deepEqual(await history.lastLogin(user.id), await ledger.lastLogin(user.id));
      for (const since of [T0 - 10_000, T0, T0 + 13_500, T0 + 27_000]) {
        assert.equal(
          await history.countSince(user.id, since),
          await ledger.countSince(user.id, since),
          `${since}`,
        );
      }

      // Concurrent sign-ins all count (each append is one atomic upsert).
      await Promise.all(Array.from({ length: 10 }, (_, i) =>
        storage.securityEvents.append({
          realmId: realm.id,
          userId: other.id,
          kind: "login.succeeded",
          occurredAt: new Date(T0 + i),
          ipAddress: null,
        })));
      assert.equal(await history.countSince(other.id, 0), 10);

      // Erasure forgets the address, keeps the times; retention drops a row past it.
      await storage.securityEvents.redactForUser(user.id);
      assert.deepEqual(await history.lastLogin(user.id), { at: T0 + 27_000, ip: null });
      assert.equal(await history.countSince(user.id, T0), 10);
      await storage.securityEvents.deleteOlderThan(new Date(T0 + 10), { realmId: realm.id });
      assert.equal(await history.lastLogin(other.id), null);
      assert.notEqual(await history.lastLogin(user.id), null);
    } finally {
      await database.close();
    }
  });

  Deno.test(`login history (${driver.name}): keeps the latest ${LOGIN_HISTORY_KEEP}; filled from the ledger when the table appears`, async () => {
    const database = await driver.open();
    try {
      const clock = new ManualClock(T0);
      const storage = createSqlStorage(database, { clock, random: seededRandom(2) });
      const realm = await storage.realms.create({ name: "r", displayName: "R", isDefault: true });
      const user = await storage.users.create({ realmId: realm.id, email: "many@example.test" });
      // 520 sign-ins written straight into the ledger, as a schema from before the table held them.
      await sql`INSERT INTO security_events (id, realm_id, user_id, kind, occurred_at, ip_address)
        SELECT gen_random_uuid(), ${realm.id}::uuid, ${user.id}::uuid, 'login.succeeded',
          to_timestamp((${T0}::bigint + g * 1000) / 1000.0), '192.0.2.' || (g % 250)
        FROM generate_series(1, 520) AS g`.execute(database.db);
      await sql`DROP TABLE login_history`.execute(database.db);
      await sql`DELETE FROM svc_schema_state`.execute(database.db);
      await database.ensureSchema();
      const history = storage.loginHistory;
      assert.deepEqual(await history.lastLogin(user.id), { at: T0 + 520_000, ip: `192.0.2.${520 % 250}` });
      assert.equal(await history.countSince(user.id, 0), LOGIN_HISTORY_KEEP);
      assert.equal(await history.countSince(user.id, T0 + 511_000), 10);
      await storage.securityEvents.append({
        realmId: realm.id,
        userId: user.id,
        kind: "login.succeeded",
        occurredAt: new Date(T0 + 600_000),
        ipAddress: "203.0.113.9",
      });
      assert.equal(await history.countSince(user.id, 0), LOGIN_HISTORY_KEEP);
      assert.equal(await history.countSince(user.id, T0 + 511_000), 11);
      assert.deepEqual(await history.lastLogin(user.id), { at: T0 + 600_000, ip: "203.0.113.9" });
    } finally {
      await database.close();
    }
  });
}
