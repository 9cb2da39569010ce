import { strict as assert } from "node:assert";
import fc from "fast-check";
import { ManualClock } from "../../../core/clock.ts";
import { ValidationError } from "../../../core/errors.ts";
import { createOutboxTransport } from "../../../core/mail/outbox.ts";
import { MemoryMailTransport } from "../../../core/mail/transport.ts";
import { EmailOtpService, randomOtpCode } from "../../../core/mfa/email-otp.ts";
import { cryptoRandom, seededRandom } from "../../../core/random.ts";
import { hashOtpCode } from "../../../core/storage/email-otp.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { freshEmbedded } from "../../support/db.ts";

const T0 = Date.UTC(2026, 0, 1);
const mailSettings = {
  baseUrl: "https://id.example.com",
  from: "svc <no-reply@example.com>",
  productName: "Example",
};

/** The code in a mailed OTP message (the emphasized line of the text body). */
/** The realm and user every code of these tests is for. */
const ADDRESSEE = { realmId: "9b0c3c1e-1111-4a4a-8888-000000000001", userId: null };

function codeIn(text: string): string {
  const match = /^ {4}(\d{6})$/m.exec(text);
  assert.ok(match, `no code in ${text}`);
  return match[1];
}

Deno.test("randomOtpCode: six digits, deterministic under a seeded source, every digit position varies", () => {
  assert.equal(randomOtpCode(seededRandom(7)), randomOtpCode(seededRandom(7)));
  fc.assert(
    fc.property(fc.integer(), (seed) => /^\d{6}$/.test(randomOtpCode(seededRandom(seed)))),
    { numRuns: 200 },
  );
  const codes = Array.from({ length: 400 }, () => randomOtpCode(cryptoRandom));
  for (let i = 0; i < 6; i++) assert.ok(new Set(codes.map((c) => c[i])).size >= 8, `position ${i}`);
  assert.throws(() => randomOtpCode(cryptoRandom, 12), RangeError);
});

Deno.test("email OTP service over the challenge store and the outbox", async (t) => {
  const database = await freshEmbedded();
  try {
    const clock = new ManualClock(T0);
    const storage = createSqlStorage(database, { clock, random: cryptoRandom });
    const service = new EmailOtpService({
      store: storage.emailOtp,
      mail: createOutboxTransport(storage.mailOutbox),
      mailSettings,
      clock,
      random: cryptoRandom,
      settings: { ttlSeconds: 600, attempts: 5 },
    });
    const lastCode = async (to: string) => {
      const message = await storage.mailOutbox.latest({ to, kind: "email_otp" });
      assert.ok(message);
      return codeIn(message.text);
    };

    await t.step("issue stores only a hash with TTL and budget, and mails the code", async () => {
      const issued = await service.issue({
        addressee: ADDRESSEE,
        to: "alice@example.com",
        challengeId: "login-1",
      });
      assert.deepEqual(issued, {
        challengeId: "login-1",
        expiresAt: new Date(T0 + 600_000),
        attempts: 5,
      });
      const code = await lastCode("alice@example.com");
      const stored = await storage.emailOtp.get("login-1");
      assert.deepEqual(stored, {
        challengeId: "login-1",
        codeHash: hashOtpCode(code),
        expiresAt: new Date(T0 + 600_000),
        remainingAttempts: 5,
      });
      const message = await storage.mailOutbox.latest({ to: "alice@example.com" });
      assert.equal(message?.from, "svc <no-reply@example.com>");
      assert.ok(!message?.subject.includes(code), "the code stays out of the subject");
      assert.ok(message?.html.includes(code));
      assert.deepEqual(await service.verify("login-1", code), { ok: true, outcome: "Success" });
      assert.deepEqual(await service.verify("login-1", code), { ok: false, outcome: "ExpiredOrMissing" });
    });

    await t.step(
      "the attempt budget: N wrong guesses, then TooManyAttempts, and the right code is dead",
      async () => {
        await service.issue({ addressee: ADDRESSEE, to: "bob@example.com", challengeId: "login-2" });
        const code = await lastCode("bob@example.com");
        const wrong = code === "000000" ? "000001" : "000000";
        for (let left = 4; left >= 0; left--) {
          assert.deepEqual(await service.verify("login-2", wrong), {
            ok: false,
            outcome: "WrongCode",
            remainingAttempts: left,
          });
        }
        assert.deepEqual(await service.verify("login-2", code), { ok: false, outcome: "TooManyAttempts" });
        assert.deepEqual(await service.verify("login-2", code), { ok: false, outcome: "ExpiredOrMissing" });
      },
    );

    await t.step("malformed codes cost an attempt; spaces and hyphens are ignored", async () => {
      await service.issue({ addressee: ADDRESSEE, to: "carol@example.com", challengeId: "login-3" });
      const code = await lastCode("carol@example.com");
      assert.deepEqual(await service.verify("login-3", "abc"), {
        ok: false,
        outcome: "WrongCode",
        remainingAttempts: 4,
      });
      assert.deepEqual(await service.verify("login-3", ` ${code.slice(0, 3)}-${code.slice(3)} `), {
        ok: true,
        outcome: "Success",
      });
    });

    await t.step("expiry: valid until the TTL, dead from it on", async () => {
      await service.issue({ addressee: ADDRESSEE, to: "dave@example.com", challengeId: "login-4" });
      const code = await lastCode("dave@example.com");
      clock.advance(600_000);
      assert.deepEqual(await service.verify("login-4", code), { ok: false, outcome: "ExpiredOrMissing" });
      await service.issue({ addressee: ADDRESSEE, to: "dave@example.com", challengeId: "login-5" });
      const second = await lastCode("dave@example.com");
      clock.advance(599_999);
      assert.equal((await service.verify("login-5", second)).ok, true);
    });

    await t.step(
      "re-issuing under the same id replaces the code; a random id is used when none is given",
      async () => {
        await service.issue({ addressee: ADDRESSEE, to: "erin@example.com", challengeId: "login-6" });
        const first = await lastCode("erin@example.com");
        await service.verify("login-6", first === "123456" ? "654321" : "123456");
        await service.issue({ addressee: ADDRESSEE, to: "erin@example.com", challengeId: "login-6" });
        const second = await lastCode("erin@example.com");
        assert.equal((await storage.emailOtp.get("login-6"))?.remainingAttempts, 5);
        if (first !== second) {
          assert.equal((await service.verify("login-6", first)).outcome, "WrongCode");
        }
        assert.equal((await service.verify("login-6", second)).ok, true);

        const a = await service.issue({ addressee: ADDRESSEE, to: "erin@example.com" });
        const b = await service.issue({ addressee: ADDRESSEE, to: "erin@example.com" });
        assert.match(a.challengeId, /^[A-Za-z0-9_-]{22}$/);
        assert.notEqual(a.challengeId, b.challengeId);
        assert.equal((await storage.mailOutbox.list({ to: "ERIN@example.com" })).length, 4);
      },
    );

    await t.step("concurrent guesses never overspend the budget", async () => {
      await service.issue({ addressee: ADDRESSEE, to: "frank@example.com", challengeId: "login-7" });
      const code = await lastCode("frank@example.com");
      const wrong = code === "999999" ? "999998" : "999999";
      const results = await Promise.all(Array.from({ length: 9 }, () => service.verify("login-7", wrong)));
      const outcomes = results.map((r) => r.outcome).sort();
      assert.equal(outcomes.filter((o) => o === "WrongCode").length, 5);
      assert.equal(outcomes.filter((o) => o === "TooManyAttempts").length, 1);
      assert.equal(outcomes.filter((o) => o === "ExpiredOrMissing").length, 3);
    });

    await t.step("a bad recipient or challenge id stores and sends nothing", async () => {
      const before = (await storage.mailOutbox.list()).length;
      await assert.rejects(
        service.issue({ addressee: ADDRESSEE, to: "a@b.c\r\nBcc: x@y.z", challengeId: "bad-1" }),
        ValidationError,
      );
      await assert.rejects(
        service.issue({ addressee: ADDRESSEE, to: "a@b.c", challengeId: "" }),
        ValidationError,
      );
      await assert.rejects(
        service.issue({ addressee: ADDRESSEE, to: "a@b.c", challengeId: "x".repeat(201) }),
        ValidationError,
      );
      assert.equal(await storage.emailOtp.get("bad-1"), null);
      assert.equal((await storage.mailOutbox.list()).length, before);
    });
  } finally {
    await database.close();
  }
});

Deno.test("email OTP service: the defaults are 10 minutes and 5 attempts; any transport works", async () => {
  const mail = new MemoryMailTransport();
  const stored: unknown[] = [];
  const service = new EmailOtpService({
    store: {
      store: (c) => (stored.push(c), Promise.resolve()),
      verify: () => Promise.resolve({ outcome: "ExpiredOrMissing" }),
      get: () => Promise.resolve(null),
      prune: () => Promise.resolve(0),
    },
    mail,
    mailSettings,
    clock: new ManualClock(T0),
    random: seededRandom(1),
  });
  assert.deepEqual(service.settings, { ttlSeconds: 600, attempts: 5 });
  const issued = await service.issue({ addressee: ADDRESSEE, to: "x@example.com", challengeId: "c" });
  assert.equal(issued.expiresAt.getTime(), T0 + 600_000);
  assert.equal(mail.messages.length, 1);
  assert.match(mail.latest("X@example.com", "email_otp")!.text, /expires in 10 minutes/);
});
