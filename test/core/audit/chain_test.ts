import { strict as assert } from "node:assert";
import { sql } from "kysely";
import { applyRetention, eraseUser } from "../../../core/audit/erasure.ts";
import { runAdminMutation } from "../../../core/audit/mutation.ts";
import { ManualClock } from "../../../core/clock.ts";
import { sha256Hex } from "../../../core/digest.ts";
import { cryptoRandom, randomUuid } from "../../../core/random.ts";
import { GENESIS_HASH } from "../../../core/storage/admin-audit.ts";
import { auditEntryHash, canonicalJson, payloadDigest } from "../../../storage/sql/admin-audit.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { freshPostgres } from "../../support/db.ts";
import { seeder } from "../../support/seed.ts";

const WRITERS = 20;
const PER_WRITER = 5;

Deno.test("admin audit chain on Postgres: concurrent appenders, tampering, redaction and erasure", async (t) => {
  const database = await freshPostgres({ maxConnections: WRITERS + 2 });
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const storage = createSqlStorage(database, { clock, random: cryptoRandom });
  const seed = seeder(database.db);
  const realm = await seed.realm();
  const total = 2 * WRITERS * PER_WRITER;
  try {
    await t.step(`${WRITERS} concurrent appenders on one realm: gap-free and verifiable`, async () => {
      await Promise.all(Array.from({ length: WRITERS }, async (_, w) => {
        for (let i = 0; i < PER_WRITER; i++) {
          // Through admin mutations (one transaction each) and through the store directly.
          await runAdminMutation(
            { storage },
            realm,
            { id: `writer-${w}`, kind: "System" },
            () =>
              Promise.resolve({
                value: null,
                audit: {
                  action: "test.mutate",
                  target: `w${w}-m${i}`,
                  before: { i },
                  after: { i: i + 1, w },
                },
              }),
          );
          await storage.adminAudit.append(realm, {
            action: "test.append",
            actorId: `writer-${w}`,
            actorKind: "User",
            target: `w${w}-a${i}`,
            after: { nested: { b: [1, 2], a: w } },
          });
        }
      }));
      const entries = await storage.adminAudit.list(realm, { limit: 1000 });
      assert.deepEqual(entries.map((e) => e.seq), Array.from({ length: total }, (_, i) => i + 1));
      assert.equal(entries[0].prevHash, GENESIS_HASH);
      for (let i = 1; i < entries.length; i++) assert.equal(entries[i].prevHash, entries[i - 1].entryHash);
      // Each writer's own entries keep their order.
      for (let w = 0; w < WRITERS; w++) {
        const mine = entries.filter((e) => e.target?.startsWith(`w${w}-m`)).map((e) => e.target);
        assert.deepEqual(mine, Array.from({ length: PER_WRITER }, (_, i) => `w${w}-m${i}`));
      }
      const report = await storage.adminAudit.verify(realm);
      assert.deepEqual(report, {
        realmId: realm,
        valid: true,
        checked: total,
        headHash: entries.at(-1)!.entryHash,
        headSeq: total,
        firstBad: null,
      });
    });

    await t.step("the documented canonical serialization reproduces every stored hash", async () => {
      for (const e of await storage.adminAudit.list(realm, { limit: 1000 })) {
        assert.equal(e.beforeDigest, sha256Hex(canonicalJson(e.before)));
        assert.equal(e.afterDigest, payloadDigest(e.after));
        const content = JSON.stringify([
          "svc.audit.v1",
          e.realmId,
          e.seq,
          e.occurredAt.toISOString(),
          e.action,
          e.actorId,
          e.actorKind,
          e.target,
          e.orgId,
          e.beforeDigest,
          e.afterDigest,
          e.prevHash,
        ]);
        assert.equal(e.entryHash, sha256Hex(content));
        assert.equal(e.entryHash, auditEntryHash(e));
      }
    });

    await t.step("editing any one stored row makes verification name that row", async () => {
      const otherOrg = randomUuid(cryptoRandom);
      const edits: { column: string; set: string; reason: string; notLast?: true }[] = [
        { column: "action", set: `'forged'`, reason: "entry_hash_mismatch" },
        { column: "actor_id", set: `'mallory'`, reason: "entry_hash_mismatch" },
        {
          column: "actor_kind",
          set: `CASE actor_kind WHEN 'User' THEN 'BreakGlass' ELSE 'User' END`,
          reason: "entry_hash_mismatch",
        },
        { column: "target", set: `'someone-else'`, reason: "entry_hash_mismatch" },
        { column: "org_id", set: `'${otherOrg}'::uuid`, reason: "entry_hash_mismatch" },
        { column: "occurred_at", set: `occurred_at + interval '1 second'`, reason: "entry_hash_mismatch" },
        { column: "before_json", set: `'{"i": 99}'::jsonb`, reason: "payload_digest_mismatch" },
        { column: "after_json", set: `'{"forged": true}'::jsonb`, reason: "payload_digest_mismatch" },
        { column: "before_digest", set: `repeat('a', 64)`, reason: "entry_hash_mismatch" },
        { column: "after_digest", set: `repeat('b', 64)`, reason: "entry_hash_mismatch" },
        { column: "prev_hash", set: `repeat('c', 64)`, reason: "prev_hash_mismatch" },
        { column: "entry_hash", set: `repeat('d', 64)`, reason: "entry_hash_mismatch" },
        { column: "seq", set: `seq + 1000000`, reason: "sequence_gap" },
        { column: "realm_id", set: `'${otherOrg}'::uuid`, reason: "sequence_gap", notLast: true },
      ];
      for (const seq of [1, 37, 123, total]) {
        for (const edit of edits) {
          if (edit.notLast && seq === total) continue;
          await database.db.transaction().execute(async (trx) => {
            await sql.raw(
              `UPDATE admin_audit_entries SET ${edit.column} = ${edit.set} WHERE realm_id = '${realm}' AND seq = ${seq}`,
            ).execute(trx);
            const report = await createSqlStorage({ db: trx }, { clock, random: cryptoRandom }).adminAudit
              .verify(realm);
            assert.equal(report.valid, false, `${edit.column} at ${seq}`);
            assert.deepEqual(report.firstBad, { seq, reason: edit.reason }, `${edit.column} at ${seq}`);
            assert.equal(report.checked, seq - 1);
            // Roll the edit back.
            throw new Rollback();
          }).catch((error) => {
            if (!(error instanceof Rollback)) throw error;
          });
        }
      }
      // Deleting a row in the middle leaves a gap named by its sequence number.
      await database.db.transaction().execute(async (trx) => {
        await sql.raw(`DELETE FROM admin_audit_entries WHERE realm_id = '${realm}' AND seq = 50`).execute(
          trx,
        );
        const report = await createSqlStorage({ db: trx }, { clock, random: cryptoRandom }).adminAudit.verify(
          realm,
        );
        assert.deepEqual(report.firstBad, { seq: 50, reason: "sequence_gap" });
        throw new Rollback();
      }).catch((error) => {
        if (!(error instanceof Rollback)) throw error;
      });
      assert.equal((await storage.adminAudit.verify(realm)).valid, true);
    });

    await t.step("retention redaction keeps the chain valid", async () => {
      const old = await storage.adminAudit.list(realm, { limit: 1000 });
      clock.advance(400 * 86_400_000);
      const user = await seed.user(realm);
      await storage.securityEvents.append({
        realmId: realm,
        userId: user,
        kind: "login.succeeded",
        data: { a: 1 },
      });
      const report = await applyRetention({ storage }, realm, {
        auditPayloadsBefore: new Date(clock.now() - 365 * 86_400_000),
        securityEventsBefore: new Date(clock.now() - 365 * 86_400_000),
      }, { id: "operator", kind: "System" });
      assert.equal(report.auditPayloadsRedacted, old.length);
      const after = await storage.adminAudit.list(realm, { limit: 1000 });
      assert.equal(after.length, old.length + 1);
      for (let i = 0; i < old.length; i++) {
        assert.equal(after[i].before, null);
        assert.equal(after[i].after, null);
        assert.equal(after[i].afterDigest, old[i].afterDigest);
        assert.equal(after[i].entryHash, old[i].entryHash);
      }
      assert.equal(after.at(-1)!.action, "audit.retention");
      const verified = await storage.adminAudit.verify(realm);
      assert.equal(verified.valid, true);
      assert.equal(verified.checked, old.length + 1);
      assert.equal((await storage.securityEvents.listByUser(user)).length, 1, "recent events stay");
    });

    await t.step(
      "erasure redacts, deletes authenticators, anonymizes, and keeps the chain valid",
      async () => {
        const user = await seed.user(realm);
        const bystander = await seed.user(realm);
        const mutate = (actor: string, target: string) =>
          runAdminMutation({ storage }, realm, { id: actor, kind: "User" }, () =>
            Promise.resolve({
              value: null,
              audit: {
                action: "user.update",
                target,
                // The target's own address before a change (erasure forgets it wherever it shows).
                before: { email: `${target}@old.example.test` },
                after: { name: "X" },
              },
            }));
        await mutate("admin", user);
        await mutate(user, bystander);
        await mutate("admin", bystander);
        for (let i = 0; i < 3; i++) {
          await storage.securityEvents.append({
            realmId: realm,
            userId: user,
            kind: "login.succeeded",
            data: { i },
            ipAddress: "192.0.2.9",
            deviceDescription: "Safari on iPhone",
          });
        }
        await storage.passwordCredentials.replace(user, { algorithm: "argon2id", hash: "$argon2id$v=19$x" });
        await storage.passkeyCredentials.create({
          userId: user,
          credentialId: crypto.getRandomValues(new Uint8Array(16)),
          publicKey: new Uint8Array([1, 2, 3]),
          userVerificationCapable: true,
        });
        await storage.totpEnrollments.begin(user, new Uint8Array([9, 9]));
        await storage.recoveryCodes.replace(user, [{
          id: randomUuid(cryptoRandom),
          codeHash: "ab".repeat(32),
        }]);
        await storage.federatedIdentities.link(user, "google", "sub-123");
        await storage.subjectKeys.getOrCreate(user, crypto.getRandomValues(new Uint8Array(32)));

        clock.advance(1000);
        const report = await eraseUser({ storage, clock }, realm, user, { id: "dpo", kind: "User" });
        assert.equal(report.securityEventsRedacted, 3);
        assert.equal(report.auditEntriesRedacted, 2);
        assert.equal(report.passwordCredentialsDeleted, 1);
        assert.equal(report.passkeysDeleted, 1);
        assert.equal(report.totpDeleted, true);
        assert.equal(report.recoveryCodesDeleted, 1);
        assert.equal(report.federatedIdentitiesDeleted, 1);
        assert.equal(report.subjectKeyDestroyed, true);

        const events = await storage.securityEvents.listByUser(user, { limit: 10 });
        assert.equal(events.length, 4);
        assert.equal(events[0].kind, "user.erased");
        for (const e of events) {
          assert.equal(e.data, null);
          assert.equal(e.ipAddress, null);
          assert.equal(e.deviceDescription, null);
          assert.ok(e.kind && e.occurredAt instanceof Date);
        }
        const entries = await storage.adminAudit.list(realm, { limit: 1000 });
        const touching = entries.filter((e) => e.actorId === user || e.target === user);
        assert.ok(touching.length >= 3);
        assert.ok(touching.every((e) => e.before === null && e.after === null));
        const untouched = entries.find((e) => e.actorId === "admin" && e.target === bystander)!;
        assert.deepEqual(untouched.after, { name: "X" });
        assert.equal(entries.at(-1)!.action, "user.erase");
        assert.equal(entries.at(-1)!.actorId, "dpo");

        assert.equal(await storage.passwordCredentials.get(user), null);
        assert.deepEqual(await storage.passkeyCredentials.listByUser(user), []);
        assert.equal(await storage.totpEnrollments.get(user), null);
        assert.equal(await storage.recoveryCodes.countRemaining(user), 0);
        assert.deepEqual(await storage.federatedIdentities.listByUser(user), []);
        assert.equal(await storage.subjectKeys.get(user), null);
        const anonymized = (await storage.users.get(user))!;
        assert.ok(anonymized.anonymizedAt instanceof Date);
        assert.equal(anonymized.email, `${user}@erased.invalid`);
        assert.deepEqual(anonymized.attributes, {});
        assert.equal(anonymized.status, "Suspended");

        const verified = await storage.adminAudit.verify(realm);
        assert.equal(verified.valid, true);
        assert.equal(verified.checked, entries.length);
        await assert.rejects(
          eraseUser({ storage, clock }, realm, randomUuid(cryptoRandom), { id: "dpo", kind: "User" }),
          { code: "not_found" },
        );
      },
    );
  } finally {
    await database.close();
  }
});

class Rollback extends Error {}
