/**
 * The one-statement stores of a password sign-in (issue 29), on both drivers: the sign-in read
 * (realm by id, by name or the default, an id winning over a name; the account, its latest
 * credential, its device, history and enrolled factors; one row of nulls for an unknown account),
 * the session created with its first refresh token, and `recordSignIn` (ledger entry, login
 * history, the account's counter cleared, the device recorded and told new or not).
 */
import assert from "node:assert/strict";
import { ManualClock } from "../../../core/clock.ts";
import { KnownDevices } from "../../../core/devices/known-devices.ts";
import { seededRandom } from "../../../core/random.ts";
import { createSqlCounterStore } from "../../../storage/sql/abuse-counters.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { drivers } from "../../support/db.ts";

const T0 = Date.UTC(2026, 0, 1);

for (const driver of drivers) {
  Deno.test(`sign-in read (${driver.name}): everything a sign-in reads, in one row`, async () => {
    const database = await driver.open();
    try {
      const clock = new ManualClock(T0);
      const storage = createSqlStorage(database, { clock, random: seededRandom(7) });
      const main = await storage.realms.create({ name: "main", displayName: "Main", isDefault: true });
      const other = await storage.realms.create({ name: "other", displayName: "Other" });
      // A realm named after the other realm's id: the id wins.
      await storage.realms.create({ name: other.id, displayName: "Confusing" });
      const user = await storage.users.create({ realmId: other.id, email: "ada@example.test" });
      await storage.users.create({ realmId: main.id, email: "ada@example.test" });
      await storage.passwordCredentials.replace(user.id, { algorithm: "argon2id", hash: "$argon2id$x" });
      const device = KnownDevices.fingerprintHash("device-1");
      await storage.knownDevices.recordSeen(user.id, device, "Firefox");
      await storage.emailOtpEnrollments.enroll(user.id);
      await storage.securityEvents.append({
        realmId: other.id,
        userId: user.id,
        kind: "login.succeeded",
        occurredAt: new Date(T0 - 60_000),
        ipAddress: "192.0.2.7",
      });

      const byId = await storage.signIns.read({
        realm: other.id,
        email: " ADA@example.test ",
        deviceHash: device,
      });
      assert.equal(byId.realm?.id, other.id);
      assert.equal(byId.user?.id, user.id);
      assert.equal(byId.credential?.hash, "$argon2id$x");
      assert.equal(byId.credentialStamp, (await storage.users.credentialStamp(user.id)) ?? "");
      assert.equal(byId.deviceKnown, true);
      assert.deepEqual(byId.history, { lastAt: T0 - 60_000, lastIp: "192.0.2.7", recentMs: [T0 - 60_000] });
      assert.equal(byId.totpConfirmed, false);
      assert.equal(byId.emailOtpEnrolled, true);

      const byName = await storage.signIns.read({
        realm: "other",
        email: "ada@example.test",
        deviceHash: null,
      });
      assert.equal(byName.user?.id, user.id);
      assert.equal(byName.deviceKnown, false);

      const byDefault = await storage.signIns.read({
        realm: null,
        email: "ada@example.test",
        deviceHash: device,
      });
      assert.equal(byDefault.realm?.id, main.id);
      assert.notEqual(byDefault.user?.id, user.id);
      assert.equal(byDefault.credential, null);
      assert.equal(byDefault.deviceKnown, false); // the device is the other account's
      assert.equal(byDefault.history, null);

      const unknown = await storage.signIns.read({
        realm: "",
        email: "nobody@example.test",
        deviceHash: device,
      });
      assert.equal(unknown.realm?.id, main.id);
      assert.deepEqual(
        [unknown.user, unknown.credential, unknown.credentialStamp, unknown.deviceKnown, unknown.history],
        [null, null, null, false, null],
      );
      const noRealm = await storage.signIns.read({
        realm: "absent",
        email: "ada@example.test",
        deviceHash: null,
      });
      assert.equal(noRealm.realm, null);
      assert.equal(noRealm.user, null);
    } finally {
      await database.close();
    }
  });

  Deno.test(`sign-in writes (${driver.name}): session with its refresh token; the sign-in's one statement`, async () => {
    const database = await driver.open();
    try {
      const clock = new ManualClock(T0);
      const storage = createSqlStorage(database, { clock, random: seededRandom(8) });
      const realm = await storage.realms.create({ name: "r", displayName: "R", isDefault: true });
      const user = await storage.users.create({ realmId: realm.id, email: "b@example.test" });

      const session = await storage.sessions.createWithRefreshToken({
        realmId: realm.id,
        userId: user.id,
        mfa: "Password",
        idleTimeoutMs: 60_000,
        absoluteTimeoutMs: 120_000,
      }, {
        tokenHash: "h".repeat(64),
        familyId: crypto.randomUUID(),
        orgId: null,
        audience: "svc",
        ttlMs: 600_000,
      });
      assert.equal(session.absoluteExpiresAt.getTime(), T0 + 120_000);
      const token = await storage.refreshTokens.get("h".repeat(64));
      assert.equal(token?.sessionId, session.id);
      assert.equal(token?.expiresAt.getTime(), T0 + 120_000); // bounded by the session's absolute expiry

      const counters = createSqlCounterStore(database.db, { clock });
      await counters.increment("acct:x", 60_000);
      const device = KnownDevices.fingerprintHash("d");
      const ledger = {
        realmId: realm.id,
        userId: user.id,
        kind: "login.succeeded",
        occurredAt: new Date(T0),
        ipAddress: "192.0.2.9",
      };
      const first = await storage.securityEvents.recordSignIn(ledger, null, {
        clearCounter: "acct:x",
        device: { userId: user.id, fingerprintHash: device, description: "Safari" },
      });
      assert.equal(first.queued, 0);
      assert.equal(first.device?.isNew, true);
      assert.equal((await counters.peek("acct:x")).count, 0);
      assert.equal((await storage.loginHistory.lastLogin(user.id))?.ip, "192.0.2.9");
      clock.advance(5_000);
      const again = await storage.securityEvents.recordSignIn(
        { ...ledger, occurredAt: new Date(T0 + 5_000) },
        null,
        {
          clearCounter: null,
          device: { userId: user.id, fingerprintHash: device, description: null },
        },
      );
      assert.equal(again.device?.isNew, false);
      assert.equal(again.device?.record.description, "Safari");
      assert.equal(again.device?.record.lastSeenAt.getTime(), T0 + 5_000);
      assert.equal(await storage.loginHistory.countSince(user.id, 0), 2);
      assert.equal((await storage.securityEvents.listByUser(user.id)).length, 2);
    } finally {
      await database.close();
    }
  });
}
