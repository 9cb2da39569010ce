/**
 * Conformance of the single-use stores (spec 2.9, section 3) on both drivers.
 * One database per driver for the whole file (PGlite takes seconds to start);
 * every step uses its own ids and its own clock.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../../../core/clock.ts";
import { ConflictError } from "../../../core/errors.ts";
import { hashOtpCode } from "../../../core/storage/email-otp.ts";
import { isImpersonationCurrent } from "../../../core/storage/impersonations.ts";
import { hashRecoveryCode } from "../../../core/storage/recovery-codes.ts";
import { drivers } from "../../support/db.ts";
import { insertUser, newCode, singleUseStores, T0, uniqueId, uuid } from "./support.ts";

const MINUTE = 60_000;

for (const driver of drivers) {
  Deno.test(`${driver.name}: single-use stores conform`, async (t) => {
    const database = await driver.open();
    const db = database.db;
    try {
      // ---------------- Email OTP ----------------
      await t.step("otp: correct code succeeds once and deletes the challenge", async () => {
        const s = singleUseStores(db);
        const id = uniqueId("otp");
        await s.otp.store({
          challengeId: id,
          codeHash: hashOtpCode("123456"),
          expiresAt: new Date(T0 + 5 * MINUTE),
          remainingAttempts: 5,
        });
        assert.deepEqual(await s.otp.verify(id, "123456"), { outcome: "Success" });
        assert.equal(await s.otp.get(id), null);
        assert.deepEqual(await s.otp.verify(id, "123456"), { outcome: "ExpiredOrMissing" });
      });

      await t.step("otp: N wrong codes, then TooManyAttempts once, then ExpiredOrMissing", async () => {
        const s = singleUseStores(db);
        const id = uniqueId("otp");
        await s.otp.store({
          challengeId: id,
          codeHash: hashOtpCode("123456"),
          expiresAt: new Date(T0 + 5 * MINUTE),
          remainingAttempts: 3,
        });
        assert.deepEqual(await s.otp.verify(id, "000000"), { outcome: "WrongCode", remainingAttempts: 2 });
        assert.equal((await s.otp.get(id))?.remainingAttempts, 2);
        assert.deepEqual(await s.otp.verify(id, "000001"), { outcome: "WrongCode", remainingAttempts: 1 });
        assert.deepEqual(await s.otp.verify(id, "000002"), { outcome: "WrongCode", remainingAttempts: 0 });
        assert.equal((await s.otp.get(id))?.remainingAttempts, 0);
        // The budget is spent: even the correct code fails, and the challenge is deleted.
        assert.deepEqual(await s.otp.verify(id, "123456"), { outcome: "TooManyAttempts" });
        assert.equal(await s.otp.get(id), null);
        assert.deepEqual(await s.otp.verify(id, "123456"), { outcome: "ExpiredOrMissing" });
      });

      await t.step("otp: the last attempt may still be the correct one", async () => {
        const s = singleUseStores(db);
        const id = uniqueId("otp");
        await s.otp.store({
          challengeId: id,
          codeHash: hashOtpCode("42"),
          expiresAt: new Date(T0 + MINUTE),
          remainingAttempts: 2,
        });
        assert.equal((await s.otp.verify(id, "41")).outcome, "WrongCode");
        assert.deepEqual(await s.otp.verify(id, "42"), { outcome: "Success" });
      });

      await t.step("otp: expiry is exclusive and deletes the challenge", async () => {
        const s = singleUseStores(db);
        const id = uniqueId("otp");
        await s.otp.store({
          challengeId: id,
          codeHash: hashOtpCode("1"),
          expiresAt: new Date(T0 + MINUTE),
          remainingAttempts: 5,
        });
        s.clock.advance(MINUTE - 1);
        assert.equal((await s.otp.verify(id, "2")).outcome, "WrongCode");
        s.clock.advance(1);
        assert.deepEqual(await s.otp.verify(id, "1"), { outcome: "ExpiredOrMissing" });
        assert.equal(await s.otp.get(id), null);
      });

      await t.step("otp: expired and exhausted reports ExpiredOrMissing", async () => {
        const s = singleUseStores(db);
        const id = uniqueId("otp");
        await s.otp.store({
          challengeId: id,
          codeHash: hashOtpCode("1"),
          expiresAt: new Date(T0 + MINUTE),
          remainingAttempts: 0,
        });
        s.clock.advance(MINUTE);
        assert.deepEqual(await s.otp.verify(id, "2"), { outcome: "ExpiredOrMissing" });
      });

      await t.step("otp: missing challenge", async () => {
        const s = singleUseStores(db);
        assert.deepEqual(await s.otp.verify(uniqueId("otp"), "1"), { outcome: "ExpiredOrMissing" });
      });

      await t.step("otp: re-storing replaces code, expiry and budget", async () => {
        const s = singleUseStores(db);
        const id = uniqueId("otp");
        await s.otp.store({
          challengeId: id,
          codeHash: hashOtpCode("old"),
          expiresAt: new Date(T0 + MINUTE),
          remainingAttempts: 1,
        });
        assert.equal((await s.otp.verify(id, "x")).outcome, "WrongCode");
        await s.otp.store({
          challengeId: id,
          codeHash: hashOtpCode("new"),
          expiresAt: new Date(T0 + 10 * MINUTE),
          remainingAttempts: 4,
        });
        assert.deepEqual(await s.otp.get(id), {
          challengeId: id,
          codeHash: hashOtpCode("new"),
          expiresAt: new Date(T0 + 10 * MINUTE),
          remainingAttempts: 4,
        });
        assert.deepEqual(await s.otp.verify(id, "old"), { outcome: "WrongCode", remainingAttempts: 3 });
        s.clock.advance(5 * MINUTE);
        assert.deepEqual(await s.otp.verify(id, "new"), { outcome: "Success" });
      });

      await t.step("otp: prune deletes only expired challenges", async () => {
        const s = singleUseStores(db, new ManualClock(T0 + 1000 * MINUTE));
        const a = uniqueId("otp");
        const b = uniqueId("otp");
        const now = s.clock.now();
        await s.otp.store({
          challengeId: a,
          codeHash: "h",
          expiresAt: new Date(now - 1),
          remainingAttempts: 1,
        });
        await s.otp.store({
          challengeId: b,
          codeHash: "h",
          expiresAt: new Date(now + 1),
          remainingAttempts: 1,
        });
        assert.ok((await s.otp.prune()) >= 1);
        assert.equal(await s.otp.get(a), null);
        assert.notEqual(await s.otp.get(b), null);
      });

      // ---------------- Consumed tokens ----------------
      await t.step("jti: first presentation only; prune after expiry", async () => {
        const s = singleUseStores(db, new ManualClock(T0 + 2000 * MINUTE));
        const jti = uniqueId("jti");
        const exp = new Date(s.clock.now() + MINUTE);
        assert.equal(await s.tokens.isConsumed(jti), false);
        assert.equal(await s.tokens.consume(jti, exp), true);
        assert.equal(await s.tokens.consume(jti, exp), false);
        assert.equal(await s.tokens.isConsumed(jti), true);
        await s.tokens.prune();
        assert.equal(await s.tokens.isConsumed(jti), true, "not pruned before expiry");
        s.clock.advance(MINUTE);
        assert.ok((await s.tokens.prune()) >= 1);
        assert.equal(await s.tokens.isConsumed(jti), false);
        assert.equal(await s.tokens.consume(jti, exp), true, "a pruned jti is forgotten");
      });

      // ---------------- SAML assertions ----------------
      await t.step("saml: mark once per connection and assertion id; prune", async () => {
        const s = singleUseStores(db, new ManualClock(T0 + 3000 * MINUTE));
        const connection = uniqueId("conn");
        const other = uniqueId("conn");
        const exp = new Date(s.clock.now() + MINUTE);
        assert.equal(await s.saml.mark(connection, "_a1", exp), true);
        assert.equal(await s.saml.mark(connection, "_a1", exp), false);
        assert.equal(await s.saml.mark(other, "_a1", exp), true, "keyed by connection too");
        assert.equal(await s.saml.isMarked(connection, "_a1"), true);
        assert.equal(await s.saml.isMarked(connection, "_a2"), false);
        s.clock.advance(MINUTE);
        assert.ok((await s.saml.prune()) >= 2);
        assert.equal(await s.saml.isMarked(connection, "_a1"), false);
      });

      await t.step("saml: the key is {connectionId}:{assertionId}", async () => {
        const s = singleUseStores(db);
        const connection = uniqueId("conn");
        await s.saml.mark(connection, "_x", new Date(T0 + MINUTE));
        const row = await db.selectFrom("consumed_saml_assertions").select("assertion_id")
          .where("assertion_id", "=", `${connection}:_x`).executeTakeFirst();
        assert.ok(row);
      });

      // ---------------- Authorization codes ----------------
      await t.step("code: Consumed once, then Reused (kept until purged), Unknown when absent", async () => {
        const s = singleUseStores(db, new ManualClock(T0 + 4000 * MINUTE));
        const hash = hashOtpCode(uniqueId("code"));
        const input = newCode(hash, s.clock.now());
        await s.codes.store(input);
        const stored = await s.codes.get(hash);
        assert.deepEqual(stored, { ...input, orgId: null, consumed: false });
        const first = await s.codes.exchange(hash);
        assert.equal(first.outcome, "Consumed");
        assert.deepEqual(first.outcome === "Consumed" && first.code, {
          ...input,
          orgId: null,
          consumed: true,
        });
        const second = await s.codes.exchange(hash);
        assert.equal(second.outcome, "Reused");
        assert.equal(second.outcome === "Reused" && second.code.consumed, true);
        assert.equal((await s.codes.get(hash))?.consumed, true);
        assert.deepEqual(await s.codes.exchange(hashOtpCode("never stored")), { outcome: "Unknown" });
        // A consumed code replayed after its expiry is still Reused until purged.
        s.clock.advance(2 * MINUTE);
        assert.equal((await s.codes.exchange(hash)).outcome, "Reused");
        assert.ok((await s.codes.purge()) >= 1);
        assert.deepEqual(await s.codes.exchange(hash), { outcome: "Unknown" });
      });

      await t.step("code: an unconsumed code past its expiry is Unknown and stays unconsumed", async () => {
        const s = singleUseStores(db, new ManualClock(T0 + 5000 * MINUTE));
        const hash = hashOtpCode(uniqueId("code"));
        await s.codes.store({ ...newCode(hash, s.clock.now(), MINUTE), orgId: uuid(), nonce: null });
        s.clock.advance(MINUTE);
        assert.deepEqual(await s.codes.exchange(hash), { outcome: "Unknown" });
        assert.equal((await s.codes.get(hash))?.consumed, false);
      });

      await t.step("code: storing a duplicate hash is rejected", async () => {
        const s = singleUseStores(db);
        const hash = hashOtpCode(uniqueId("code"));
        await s.codes.store(newCode(hash, T0));
        await assert.rejects(() => s.codes.store(newCode(hash, T0)));
      });

      // ---------------- Token grants ----------------
      await t.step("grant: store, find by code hash, replace, delete by refresh family", async () => {
        const s = singleUseStores(db);
        const family = uuid();
        const grant = {
          codeHash: hashOtpCode(uniqueId("grant")),
          clientId: "client-a",
          realmId: uuid(),
          userId: uuid(),
          sessionId: uuid(),
          scopes: ["openid", "offline_access"],
          issuedAt: new Date(T0),
          refreshFamilyId: family,
        };
        const sibling = { ...grant, codeHash: hashOtpCode(uniqueId("grant")) };
        const offline = {
          ...grant,
          codeHash: hashOtpCode(uniqueId("grant")),
          refreshFamilyId: null,
          scopes: [],
        };
        await s.grants.store(grant);
        await s.grants.store(sibling);
        await s.grants.store(offline);
        assert.deepEqual(await s.grants.findByCodeHash(grant.codeHash), grant);
        assert.deepEqual(await s.grants.findByCodeHash(offline.codeHash), offline);
        assert.equal(await s.grants.findByCodeHash(hashOtpCode("none")), null);
        await s.grants.store({ ...grant, scopes: ["openid"] });
        assert.deepEqual((await s.grants.findByCodeHash(grant.codeHash))?.scopes, ["openid"]);
        assert.equal(await s.grants.deleteByRefreshFamily(family), 2);
        assert.equal(await s.grants.findByCodeHash(grant.codeHash), null);
        assert.equal(await s.grants.findByCodeHash(sibling.codeHash), null);
        assert.notEqual(await s.grants.findByCodeHash(offline.codeHash), null);
        assert.equal(await s.grants.deleteByRefreshFamily(family), 0);
      });

      // ---------------- Break-glass ----------------
      const NO_ROTATION = { rotationRequired: false, lastRotatedAt: null, rotationRemindedAt: null };
      const HOUR = 60 * MINUTE;
      await t.step("break-glass: drill and use are recorded independently", async () => {
        const s = singleUseStores(db);
        const realm = uuid();
        assert.equal(await s.breakGlass.get(realm), null);
        assert.deepEqual(await s.breakGlass.recordDrill(realm), {
          realmId: realm,
          lastDrillAt: new Date(T0),
          lastUseAt: null,
          ...NO_ROTATION,
        });
        s.clock.advance(MINUTE);
        assert.deepEqual(await s.breakGlass.recordUse(realm), {
          realmId: realm,
          lastDrillAt: new Date(T0),
          lastUseAt: new Date(T0 + MINUTE),
          ...NO_ROTATION,
        });
        s.clock.advance(MINUTE);
        await s.breakGlass.recordDrill(realm);
        assert.deepEqual(await s.breakGlass.get(realm), {
          realmId: realm,
          lastDrillAt: new Date(T0 + 2 * MINUTE),
          lastUseAt: new Date(T0 + MINUTE),
          ...NO_ROTATION,
        });
        const other = uuid();
        assert.deepEqual(await s.breakGlass.recordUse(other), {
          realmId: other,
          lastDrillAt: null,
          lastUseAt: new Date(T0 + 2 * MINUTE),
          ...NO_ROTATION,
        });
      });

      await t.step(
        "break-glass: a login requires rotation until a rotation; reminders at most per interval",
        async () => {
          const s = singleUseStores(db);
          const realm = uuid();
          assert.equal(await s.breakGlass.claimRotationReminder(realm, HOUR), null, "nothing recorded");
          const used = await s.breakGlass.recordLogin(realm);
          assert.equal(used.rotationRequired, true);
          assert.deepEqual(used.rotationRemindedAt, new Date(s.clock.now()), "the login reminds itself");
          s.clock.advance(HOUR - 1);
          assert.equal(await s.breakGlass.claimRotationReminder(realm, HOUR), null, "within the hour");
          s.clock.advance(1);
          const claims = await Promise.all(
            [1, 2, 3].map(() => s.breakGlass.claimRotationReminder(realm, HOUR)),
          );
          assert.equal(claims.filter((c) => c !== null).length, 1, "one reminder per interval, concurrently");
          const rotated = await s.breakGlass.recordRotation(realm);
          assert.equal(rotated.rotationRequired, false);
          assert.deepEqual(rotated.lastUseAt, used.lastUseAt);
          s.clock.advance(2 * HOUR);
          assert.equal(await s.breakGlass.claimRotationReminder(realm, HOUR), null, "rotated: no reminder");
        },
      );

      // ---------------- Impersonations ----------------
      const start = (actorId: string, consentRequired: boolean, expiresAt: number) => ({
        id: uuid(),
        realmId: uuid(),
        actorId,
        targetId: uuid(),
        reason: "support ticket 42",
        consentRequired,
        expiresAt: new Date(expiresAt),
      });

      await t.step(
        "impersonation: direct start is Active and current; a second start is rejected",
        async () => {
          const s = singleUseStores(db);
          const actor = uuid();
          const input = start(actor, false, T0 + 30 * MINUTE);
          const created = await s.impersonations.create(input);
          assert.deepEqual(created, {
            ...input,
            orgId: null,
            status: "Active",
            createdAt: new Date(T0),
            startedAt: new Date(T0),
            endedAt: null,
            durationSeconds: 30 * 60,
            tokenIssuedAt: new Date(T0),
          });
          assert.deepEqual(await s.impersonations.get(input.id), created);
          assert.deepEqual(await s.impersonations.current(actor), created);
          await assert.rejects(
            () => s.impersonations.create(start(actor, false, T0 + 30 * MINUTE)),
            (e) => e instanceof ConflictError && e.code === "conflict",
          );
          assert.equal(await s.impersonations.current(uuid()), null);
        },
      );

      await t.step("impersonation: expiry is a read-side filter, never written", async () => {
        const s = singleUseStores(db);
        const actor = uuid();
        const first = await s.impersonations.create(start(actor, false, T0 + 30 * MINUTE));
        s.clock.advance(30 * MINUTE);
        assert.equal(await s.impersonations.current(actor), null);
        const stored = await s.impersonations.get(first.id);
        assert.equal(stored?.status, "Active", "status unchanged by expiry");
        assert.equal(isImpersonationCurrent(stored!, new Date(s.clock.now())), false);
        const second = await s.impersonations.create(start(actor, false, T0 + 60 * MINUTE));
        assert.equal((await s.impersonations.current(actor))?.id, second.id);
      });

      await t.step(
        "impersonation: consent moves PendingConsent to Active; pending counts as current",
        async () => {
          const s = singleUseStores(db);
          const actor = uuid();
          const input = start(actor, true, T0 + 30 * MINUTE);
          const pending = await s.impersonations.create(input);
          assert.equal(pending.status, "PendingConsent");
          assert.equal(pending.startedAt, null);
          assert.equal((await s.impersonations.current(actor))?.id, input.id);
          await assert.rejects(
            () => s.impersonations.create(start(actor, false, T0 + 30 * MINUTE)),
            ConflictError,
          );
          s.clock.advance(MINUTE);
          const active = await s.impersonations.approveConsent(input.id, {
            expiresAt: new Date(T0 + 31 * MINUTE),
          });
          assert.equal(active?.status, "Active");
          assert.deepEqual(active?.startedAt, new Date(T0 + MINUTE));
          assert.deepEqual(active?.expiresAt, new Date(T0 + 31 * MINUTE));
          assert.equal(await s.impersonations.approveConsent(input.id), null, "only from PendingConsent");
        },
      );

      await t.step("impersonation: consent cannot be approved after expiry", async () => {
        const s = singleUseStores(db);
        const input = start(uuid(), true, T0 + 5 * MINUTE);
        await s.impersonations.create(input);
        s.clock.advance(5 * MINUTE);
        assert.equal(await s.impersonations.approveConsent(input.id), null);
        assert.equal((await s.impersonations.get(input.id))?.status, "PendingConsent");
      });

      await t.step("impersonation: ending frees the actor", async () => {
        const s = singleUseStores(db);
        const actor = uuid();
        const input = start(actor, false, T0 + 30 * MINUTE);
        await s.impersonations.create(input);
        s.clock.advance(MINUTE);
        const ended = await s.impersonations.end(input.id);
        assert.equal(ended?.status, "Ended");
        assert.deepEqual(ended?.endedAt, new Date(T0 + MINUTE));
        assert.equal(await s.impersonations.end(input.id), null);
        assert.equal(await s.impersonations.current(actor), null);
        await s.impersonations.create(start(actor, true, T0 + 30 * MINUTE));
        assert.equal(await s.impersonations.get(uuid()), null);
      });

      await t.step("impersonation: concurrent starts by one actor give exactly one winner", async () => {
        const s = singleUseStores(db);
        const actor = uuid();
        const results = await Promise.allSettled(
          Array.from({ length: 8 }, () => s.impersonations.create(start(actor, false, T0 + 30 * MINUTE))),
        );
        assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
        for (const r of results) {
          if (r.status === "rejected") assert.ok(r.reason instanceof ConflictError);
        }
      });

      // ---------------- Recovery codes ----------------
      await t.step("recovery: replace, consume once, count, regenerate", async () => {
        const s = singleUseStores(db);
        const user = await insertUser(db);
        const other = await insertUser(db);
        const codes = ["aaaa-1111", "bbbb-2222", "cccc-3333"];
        await s.recovery.replace(user, codes.map((c) => ({ id: uuid(), codeHash: hashRecoveryCode(c) })));
        await s.recovery.replace(other, [{ id: uuid(), codeHash: hashRecoveryCode("aaaa-1111") }]);
        assert.equal(await s.recovery.countRemaining(user), 3);
        assert.equal(await s.recovery.consume(user, "bbbb-2222"), true);
        assert.equal(await s.recovery.consume(user, "bbbb-2222"), false);
        assert.equal(await s.recovery.consume(user, "zzzz-0000"), false);
        assert.equal(await s.recovery.countRemaining(user), 2);
        assert.equal(await s.recovery.countRemaining(other), 1, "other users untouched");
        const stored = await db.selectFrom("recovery_codes").selectAll().where("user_id", "=", user)
          .execute();
        assert.ok(stored.every((r) => /^[0-9a-f]{64}$/.test(r.code_hash)), "only hashes at rest");
        await s.recovery.replace(user, [
          { id: uuid(), codeHash: hashRecoveryCode("new-1") },
          { id: uuid(), codeHash: hashRecoveryCode("new-1") },
        ]);
        assert.equal(await s.recovery.countRemaining(user), 1, "old set gone, duplicates stored once");
        assert.equal(await s.recovery.consume(user, "aaaa-1111"), false);
        assert.equal(await s.recovery.consume(user, "new-1"), true);
        await s.recovery.replace(other, []);
        assert.equal(await s.recovery.countRemaining(other), 0);
      });

      await t.step("stores compose inside a caller's transaction", async () => {
        const user = await insertUser(db);
        await assert.rejects(() =>
          db.transaction().execute(async (trx) => {
            const s = singleUseStores(trx);
            await s.recovery.replace(user, [{ id: uuid(), codeHash: hashRecoveryCode("t-1") }]);
            await s.impersonations.create(start(uuid(), false, T0 + MINUTE));
            throw new Error("roll back");
          })
        );
        assert.equal(await singleUseStores(db).recovery.countRemaining(user), 0);
      });
    } finally {
      await database.close();
    }
  });
}
