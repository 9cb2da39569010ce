import { strict as assert } from "node:assert";
import { ManualClock } from "../../../core/clock.ts";
import { ConflictError, ValidationError } from "../../../core/errors.ts";
import { cryptoRandom } from "../../../core/random.ts";
import { decodeBase32 } from "../../../core/totp/base32.ts";
import { TotpService } from "../../../core/totp/service.ts";
import { hotp, totpStep } from "../../../core/totp/totp.ts";
import { parseOtpauthUri } from "../../../core/totp/uri.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { drivers } from "../../support/db.ts";
import { testSecretCipher } from "../../support/secret-cipher.ts";
import { seeder } from "../../support/seed.ts";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 10);

function containsBytes(haystack: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

for (const driver of drivers) {
  Deno.test(`${driver.name}: totp enrollment, confirmation, verification and disable`, async (t) => {
    const database = await driver.open();
    try {
      const clock = new ManualClock(T0);
      const storage = createSqlStorage(database, { clock, random: cryptoRandom });
      const seed = seeder(database.db);
      const realm = await seed.realm();
      const cipher = testSecretCipher(storage.subjectKeys, cryptoRandom);
      const totp = new TotpService({
        store: storage.totpEnrollments,
        cipher,
        clock,
        random: cryptoRandom,
        issuer: "svc test",
        settings: { digits: 6, stepSeconds: 30, driftSteps: 1 },
      });
      const codeAt = (secret: Uint8Array, offset = 0) => hotp(secret, totpStep(clock.now()) + offset);

      await t.step("start: a 20-byte secret, stored encrypted, unconfirmed; the URI carries it", async () => {
        const user = await seed.user(realm);
        assert.equal(await totp.status(user), "none");
        const start = await totp.startEnrollment(user, "alice@example.com");
        const secret = decodeBase32(start.secret);
        assert.equal(secret.length, 20);
        assert.deepEqual([start.digits, start.period, start.algorithm], [6, 30, "SHA1"]);
        const uri = parseOtpauthUri(start.uri);
        assert.deepEqual(uri.secret, secret);
        assert.equal(uri.issuer, "svc test");
        assert.equal(uri.account, "alice@example.com");
        assert.equal(await totp.status(user), "pending");
        assert.equal(await totp.isEnrolled(user), false);
        const stored = await storage.totpEnrollments.get(user);
        assert.ok(stored);
        assert.equal(stored.confirmedAt, null);
        assert.equal(stored.secretCiphertext.length, 12 + 20 + 16, "IV + ciphertext + GCM tag");
        assert.ok(!containsBytes(stored.secretCiphertext, secret), "no plaintext at rest");
        assert.ok(await storage.subjectKeys.get(user), "the subject key was created");
      });

      await t.step("a pending enrollment does not verify; a wrong first code does not confirm", async () => {
        const user = await seed.user(realm);
        const secret = decodeBase32((await totp.startEnrollment(user, "bob@example.com")).secret);
        assert.deepEqual(await totp.verify(user, codeAt(secret)), { ok: false, reason: "not_enrolled" });
        assert.deepEqual(await totp.confirmEnrollment(user, codeAt(secret, 2)), {
          ok: false,
          reason: "invalid_code",
        });
        assert.deepEqual(await totp.confirmEnrollment(user, "12345"), { ok: false, reason: "invalid_code" });
        // Restarting replaces the secret: a code of the old one no longer confirms.
        const fresh = decodeBase32((await totp.startEnrollment(user, "bob@example.com")).secret);
        assert.notDeepEqual(fresh, secret);
        assert.equal((await totp.confirmEnrollment(user, codeAt(secret))).ok, false);
        assert.equal((await totp.confirmEnrollment(user, codeAt(fresh, -1))).ok, true, "drift applies");
        assert.equal(await totp.status(user), "confirmed");
        assert.deepEqual(await totp.confirmEnrollment(user, codeAt(fresh)), {
          ok: false,
          reason: "no_pending_enrollment",
        });
      });

      await t.step("the last accepted step only moves forward", async () => {
        const user = await seed.user(realm);
        const secret = decodeBase32((await totp.startEnrollment(user, "carol@example.com")).secret);
        const confirmed = await totp.confirmEnrollment(user, codeAt(secret));
        assert.deepEqual(confirmed, { ok: true, step: totpStep(clock.now()) });
        assert.equal(await totp.isEnrolled(user), true);
        // The confirming code is spent.
        assert.deepEqual(await totp.verify(user, codeAt(secret)), { ok: false, reason: "replayed" });
        assert.deepEqual(await totp.verify(user, codeAt(secret, -1)), { ok: false, reason: "replayed" });
        assert.deepEqual(await totp.verify(user, codeAt(secret, 2)), { ok: false, reason: "invalid_code" });
        // The next step's code (drift +1) is accepted now…
        const next = totpStep(clock.now()) + 1;
        assert.deepEqual(await totp.verify(user, ` ${codeAt(secret, 1).replace(/(\d{3})/, "$1 ")}`), {
          ok: true,
          step: next,
        });
        // …and then a code of the step after it is needed, even once the clock catches up.
        clock.advance(30_000);
        assert.deepEqual(await totp.verify(user, codeAt(secret)), { ok: false, reason: "replayed" });
        assert.deepEqual(await totp.verify(user, codeAt(secret, -1)), { ok: false, reason: "replayed" });
        assert.deepEqual(await totp.verify(user, codeAt(secret, 1)), { ok: true, step: next + 1 });
        clock.advance(5 * 60_000);
        assert.equal((await totp.verify(user, codeAt(secret))).ok, true);
        assert.equal((await storage.totpEnrollments.get(user))?.lastAcceptedStep, totpStep(clock.now()));
      });

      await t.step("concurrent presentations of one code: exactly one succeeds", async () => {
        const user = await seed.user(realm);
        const secret = decodeBase32((await totp.startEnrollment(user, "dave@example.com")).secret);
        assert.equal((await totp.confirmEnrollment(user, codeAt(secret, -1))).ok, true);
        const code = codeAt(secret);
        const results = await Promise.all(Array.from({ length: 6 }, () => totp.verify(user, code)));
        assert.equal(results.filter((r) => r.ok).length, 1);
        assert.ok(results.every((r) => r.ok || r.reason === "replayed"));
      });

      await t.step(
        "a confirmed enrollment must be disabled before re-enrolling; disable removes it",
        async () => {
          const user = await seed.user(realm);
          const secret = decodeBase32((await totp.startEnrollment(user, "erin@example.com")).secret);
          assert.equal((await totp.confirmEnrollment(user, codeAt(secret))).ok, true);
          await assert.rejects(totp.startEnrollment(user, "erin@example.com"), ConflictError);
          assert.equal(await totp.disable(user), true);
          assert.equal(await totp.disable(user), false);
          assert.equal(await totp.status(user), "none");
          clock.advance(30_000);
          assert.deepEqual(await totp.verify(user, codeAt(secret)), { ok: false, reason: "not_enrolled" });
          // Re-enrolling gives a new secret.
          const again = decodeBase32((await totp.startEnrollment(user, "erin@example.com")).secret);
          assert.notDeepEqual(again, secret);
        },
      );

      await t.step("a label with a colon is refused before anything is stored", async () => {
        const user = await seed.user(realm);
        await assert.rejects(totp.startEnrollment(user, "a:b"), ValidationError);
        assert.equal(await totp.status(user), "none");
      });

      await t.step("erasing the subject key makes the secret unrecoverable", async () => {
        const user = await seed.user(realm);
        const secret = decodeBase32((await totp.startEnrollment(user, "frank@example.com")).secret);
        assert.equal((await totp.confirmEnrollment(user, codeAt(secret))).ok, true);
        assert.equal(await storage.subjectKeys.delete(user), true);
        clock.advance(30_000);
        await assert.rejects(totp.verify(user, codeAt(secret)));
      });
    } finally {
      await database.close();
    }
  });
}
