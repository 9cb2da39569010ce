import assert from "node:assert/strict";
import { sha256Hex } from "../../../core/digest.ts";
import { ConflictError, ValidationError } from "../../../core/errors.ts";
import { challengeMatches } from "../../../core/storage/passkey-ceremonies.ts";
import { drivers } from "../../support/db.ts";
import { bytesOf, clockAt, makeRealm, makeUser, storesFor, uuid } from "./fixtures.ts";

for (const driver of drivers) {
  Deno.test(`${driver.name}: authentication factor stores`, async (t) => {
    const database = await driver.open();
    const db = database.db;
    try {
      const realm = await makeRealm(db);

      await t.step("password: upsert per (user, algorithm), replace leaves exactly one", async () => {
        const clock = clockAt();
        const { passwords } = storesFor(db, clock);
        const user = await makeUser(db, realm);
        assert.equal(await passwords.get(user), null);
        const a = await passwords.upsert(user, { algorithm: "bcrypt", hash: "$2b$10$x" });
        assert.equal(a.created, true);
        clock.advance(1000);
        const b = await passwords.upsert(user, { algorithm: "bcrypt", hash: "$2b$10$y" });
        assert.equal(b.created, false);
        assert.equal(b.credential.id, a.credential.id);
        assert.equal(b.credential.hash, "$2b$10$y");
        clock.advance(1000);
        await passwords.upsert(user, { algorithm: "pbkdf2-sha256", hash: "$pbkdf2-sha256$1$a$b" });
        assert.equal((await passwords.list(user)).length, 2);
        assert.equal((await passwords.get(user))?.algorithm, "pbkdf2-sha256");
        clock.advance(1000);
        const replaced = await passwords.replace(user, { algorithm: "argon2id", hash: "$argon2id$new" });
        assert.deepEqual((await passwords.list(user)).map((c) => c.id), [replaced.id]);
        // Replacing creates for a password-less user.
        const fresh = await makeUser(db, realm);
        await passwords.replace(fresh, { algorithm: "argon2id", hash: "$argon2id$1" });
        assert.equal((await passwords.get(fresh))?.hash, "$argon2id$1");
      });

      await t.step("password: rehash is a compare-and-swap", async () => {
        const { passwords } = storesFor(db, clockAt());
        const user = await makeUser(db, realm);
        await passwords.replace(user, { algorithm: "pbkdf2-sha256", hash: "old" });
        const next = { algorithm: "argon2id", hash: "new" };
        assert.equal(
          await passwords.rehash(user, { algorithm: "pbkdf2-sha256", hash: "stale" }, next),
          false,
        );
        assert.equal(await passwords.rehash(user, { algorithm: "pbkdf2-sha256", hash: "old" }, next), true);
        assert.deepEqual((await passwords.list(user)).map((c) => [c.algorithm, c.hash]), [[
          "argon2id",
          "new",
        ]]);
        // A second rehash from the old value no longer applies.
        assert.equal(await passwords.rehash(user, { algorithm: "pbkdf2-sha256", hash: "old" }, next), false);
        // Same-tag rehash (new parameters).
        assert.equal(await passwords.rehash(user, next, { algorithm: "argon2id", hash: "newer" }), true);
        assert.equal((await passwords.get(user))?.hash, "newer");
        assert.equal(await passwords.deleteAllForUser(user), 1);
        assert.equal(await passwords.get(user), null);
      });

      await t.step("totp: confirm spends a step; steps only move forward", async () => {
        const clock = clockAt();
        const { totp } = storesFor(db, clock);
        const user = await makeUser(db, realm);
        const pending = await totp.begin(user, bytesOf(20));
        assert.equal(pending.confirmedAt, null);
        assert.deepEqual(pending.secretCiphertext, bytesOf(20));
        // Not confirmed yet: no step is accepted.
        assert.equal(await totp.advanceStep(user, 100), false);
        // Restarting an unconfirmed enrollment replaces the secret.
        await totp.begin(user, bytesOf(20, 7));
        assert.deepEqual((await totp.get(user))?.secretCiphertext, bytesOf(20, 7));
        assert.equal(await totp.confirm(user, 100), true);
        assert.equal(await totp.confirm(user, 101), false);
        assert.equal((await totp.get(user))?.lastAcceptedStep, 100);
        await assert.rejects(totp.begin(user, bytesOf(20)), ConflictError);

        assert.equal(await totp.advanceStep(user, 100), false, "the confirming step is spent");
        assert.equal(await totp.advanceStep(user, 99), false);
        assert.equal(await totp.advanceStep(user, 102), true);
        assert.equal(await totp.advanceStep(user, 102), false, "same step twice");
        assert.equal(await totp.advanceStep(user, 101), false, "an older step inside the drift window");
        assert.equal(await totp.advanceStep(user, 103), true);
        // Steps beyond int4.
        assert.equal(await totp.advanceStep(user, 2 ** 40), true);
        assert.equal((await totp.get(user))?.lastAcceptedStep, 2 ** 40);
        assert.equal(await totp.advanceStep(uuid(), 5), false);
        assert.equal(await totp.delete(user), true);
        assert.equal(await totp.get(user), null);
      });

      await t.step("totp: concurrent presentations of one step have one winner", async () => {
        const { totp } = storesFor(db, clockAt());
        const user = await makeUser(db, realm);
        await totp.begin(user, bytesOf(20));
        await totp.confirm(user, 10);
        const results = await Promise.all(Array.from({ length: 6 }, () => totp.advanceStep(user, 11)));
        assert.equal(results.filter(Boolean).length, 1);
      });

      await t.step("passkey credentials: create, lookup, duplicate id", async () => {
        const clock = clockAt();
        const { passkeys } = storesFor(db, clock);
        const user = await makeUser(db, realm);
        const credentialId = bytesOf(16, 42);
        const created = await passkeys.create({
          userId: user,
          credentialId,
          publicKey: bytesOf(77),
          userVerificationCapable: true,
          transports: ["internal", "hybrid"],
          name: "Laptop",
        });
        assert.equal(created.signCount, 0);
        assert.deepEqual(created.transports, ["internal", "hybrid"]);
        assert.deepEqual(await passkeys.getByCredentialId(credentialId), created);
        assert.deepEqual(await passkeys.get(created.id), created);
        assert.deepEqual(await passkeys.listByUser(user), [created]);
        assert.equal(await passkeys.getByCredentialId(bytesOf(16, 43)), null);
        await assert.rejects(
          passkeys.create({
            userId: user,
            credentialId,
            publicKey: bytesOf(1),
            userVerificationCapable: false,
          }),
          ConflictError,
        );
      });

      await t.step("passkey credentials: the counter only moves forward", async () => {
        const clock = clockAt();
        const { passkeys } = storesFor(db, clock);
        const user = await makeUser(db, realm);
        const zero = await passkeys.create({
          userId: user,
          credentialId: bytesOf(16, 1),
          publicKey: bytesOf(8),
          userVerificationCapable: true,
        });
        // Authenticators without counters report 0 forever: accepted.
        clock.advance(1000);
        assert.equal(await passkeys.updateCounter(zero.id, 0), true);
        assert.equal((await passkeys.get(zero.id))?.lastUsedAt?.getTime(), clock.now());
        assert.equal(await passkeys.updateCounter(zero.id, 5), true);
        assert.equal(await passkeys.updateCounter(zero.id, 5), false, "equal is a regression");
        assert.equal(await passkeys.updateCounter(zero.id, 4), false);
        assert.equal(await passkeys.updateCounter(zero.id, 0), false, "0 after a counter was seen");
        const used = new Date(clock.now() + 5000);
        assert.equal(await passkeys.updateCounter(zero.id, 2 ** 32 - 1, used), true);
        const after = await passkeys.get(zero.id);
        assert.equal(after?.signCount, 2 ** 32 - 1);
        assert.equal(after?.lastUsedAt?.getTime(), used.getTime());
        assert.equal(await passkeys.updateCounter(uuid(), 10), false);
        await assert.rejects(passkeys.updateCounter(zero.id, -1), ValidationError);
        // Concurrent updates to the same value: one applies.
        const results = await Promise.all(
          Array.from({ length: 5 }, () => passkeys.updateCounter(zero.id, 2 ** 32)),
        );
        assert.equal(results.filter(Boolean).length, 1);
      });

      await t.step("passkey credentials: delete is scoped to the owner", async () => {
        const { passkeys } = storesFor(db, clockAt());
        const owner = await makeUser(db, realm);
        const stranger = await makeUser(db, realm);
        const c = await passkeys.create({
          userId: owner,
          credentialId: bytesOf(16, 99),
          publicKey: bytesOf(8),
          userVerificationCapable: false,
        });
        assert.equal(await passkeys.rename(owner, c.id, "Phone"), true);
        assert.equal((await passkeys.get(c.id))?.name, "Phone");
        assert.equal(await passkeys.delete(stranger, c.id), false);
        assert.equal(await passkeys.delete(owner, c.id), true);
        assert.equal(await passkeys.delete(owner, c.id), false);
        assert.deepEqual(await passkeys.listByUser(owner), []);
      });

      await t.step("passkey ceremonies: single use, challenge stored hashed", async () => {
        const clock = clockAt();
        const { ceremonies } = storesFor(db, clock);
        const user = await makeUser(db, realm);
        const c = await ceremonies.create({
          kind: "authentication",
          challenge: "chal-123",
          realmId: realm,
          userId: user,
          data: { rpId: "example.test" },
        });
        assert.equal(c.challengeHash, sha256Hex("chal-123"));
        assert.equal(c.expiresAt.getTime(), clock.now() + 5 * 60_000);
        const raw = await db.selectFrom("passkey_ceremonies").selectAll().where("id", "=", c.id)
          .executeTakeFirst();
        assert.equal(JSON.stringify(raw).includes("chal-123"), false);
        const consumed = await ceremonies.consume(c.id);
        assert.deepEqual(consumed, c);
        assert.equal(challengeMatches(consumed!, "chal-123"), true);
        assert.equal(challengeMatches(consumed!, "chal-124"), false);
        assert.equal(await ceremonies.consume(c.id), null, "second attempt");
        assert.equal(await ceremonies.consume("unknown"), null);
      });

      await t.step("passkey ceremonies: expiry and concurrent consumption", async () => {
        const clock = clockAt();
        const { ceremonies } = storesFor(db, clock);
        const expiring = await ceremonies.create({ kind: "registration", challenge: bytesOf(32) });
        clock.advance(5 * 60_000);
        assert.equal(await ceremonies.consume(expiring.id), null);
        clock.advance(-1);
        assert.equal(await ceremonies.consume(expiring.id), null, "the expired attempt deleted it");

        const raced = await ceremonies.create({ kind: "registration", challenge: bytesOf(32) });
        const results = await Promise.all(Array.from({ length: 5 }, () => ceremonies.consume(raced.id)));
        assert.equal(results.filter((r) => r !== null).length, 1);

        await ceremonies.create({ kind: "registration", challenge: "x", ttlMs: 1000 });
        clock.advance(2000);
        assert.ok(await ceremonies.pruneExpired() >= 1);
      });

      await t.step("known devices: first sighting is new, later ones move last seen", async () => {
        const clock = clockAt();
        const { devices } = storesFor(db, clock);
        const user = await makeUser(db, realm);
        const fp = sha256Hex("device-fingerprint");
        const first = await devices.recordSeen(user, fp, "Firefox on Linux");
        assert.equal(first.isNew, true);
        assert.equal(first.device.firstSeenAt.getTime(), clock.now());
        clock.advance(60_000);
        const second = await devices.recordSeen(user, fp);
        assert.equal(second.isNew, false);
        assert.equal(second.device.firstSeenAt.getTime(), first.device.firstSeenAt.getTime());
        assert.equal(second.device.lastSeenAt.getTime(), clock.now());
        assert.equal(second.device.description, "Firefox on Linux");
        // The same fingerprint for another user is a new device.
        const other = await makeUser(db, realm);
        assert.equal((await devices.recordSeen(other, fp)).isNew, true);
        await assert.rejects(devices.recordSeen(user, "raw-fingerprint"), ValidationError);
        const racer = sha256Hex("racer");
        const raced = await Promise.all(Array.from({ length: 5 }, () => devices.recordSeen(user, racer)));
        assert.equal(raced.filter((r) => r.isNew).length, 1);
        assert.equal((await devices.listByUser(user)).length, 2);
        assert.equal(await devices.delete(user, fp), true);
        assert.equal(await devices.get(user, fp), null);
        assert.equal(await devices.deleteAllForUser(user), 1);
      });

      await t.step("federated identities: link, find, unlink", async () => {
        const { federated } = storesFor(db, clockAt());
        const user = await makeUser(db, realm);
        const other = await makeUser(db, realm);
        const provider = `google-${uuid()}`;
        const link = await federated.link(user, provider, "sub-1");
        assert.deepEqual(await federated.find(provider, "sub-1"), link);
        assert.equal(await federated.find(provider, "sub-2"), null);
        await assert.rejects(federated.link(other, provider, "sub-1"), ConflictError);
        await federated.link(user, provider, "sub-2");
        assert.equal((await federated.listByUser(user)).length, 2);
        assert.equal(await federated.unlink(other, link.id), false);
        assert.equal(await federated.unlink(user, link.id), true);
        assert.equal(await federated.deleteAllForUser(user), 1);
      });
    } finally {
      await database.close();
    }
  });
}
