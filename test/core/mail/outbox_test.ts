import { strict as assert } from "node:assert";
import { ManualClock } from "../../../core/clock.ts";
import { ValidationError } from "../../../core/errors.ts";
import { mailMessages } from "../../../core/mail/messages.ts";
import { createOutboxTransport } from "../../../core/mail/outbox.ts";
import { cryptoRandom } from "../../../core/random.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { freshEmbedded } from "../../support/db.ts";

/** The realm and user the messages of these tests are for. */
const ADDRESSEE = { realmId: "9b0c3c1e-1111-4a4a-8888-000000000001", userId: null };

Deno.test("outbox transport: every message is stored as composed and listable in order", async () => {
  const database = await freshEmbedded();
  try {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const storage = createSqlStorage(database, { clock, random: cryptoRandom });
    const transport = createOutboxTransport(storage.mailOutbox);
    const mail = mailMessages({ baseUrl: "http://localhost:8080", from: "no-reply@localhost" });
    const sent = [
      mail.emailOtp({ to: "a@example.com", code: "123456", ttlSeconds: 600 }),
      mail.passwordReset({ to: "b@example.com", token: "reset-token", ttlSeconds: 3600 }),
      mail.emailVerification({ to: "A@example.com", token: "verify-token", ttlSeconds: 86400 }),
      mail.invitation({ to: "c@example.com", token: "invite-token", ttlSeconds: 604800 }),
      mail.newDeviceAlert({ to: "a@example.com", seenAt: new Date(clock.now()), device: "Firefox on Linux" }),
    ];
    for (const m of sent) await transport.send(m, ADDRESSEE);

    const all = await storage.mailOutbox.list();
    assert.deepEqual(
      all.map(({ kind, to, from, subject, text, html }) => ({ kind, to, from, subject, text, html })),
      sent,
    );
    assert.ok(all.every((m, i) => i === 0 || m.seq > all[i - 1].seq));
    assert.ok(all.every((m) => m.sentAt === null && m.createdAt.getTime() === clock.now()));
    assert.deepEqual((await storage.mailOutbox.list({ to: "a@EXAMPLE.com" })).map((m) => m.kind), [
      "email_otp",
      "email_verification",
      "new_device_alert",
    ]);
    assert.equal((await storage.mailOutbox.latest({ to: "a@example.com" }))?.kind, "new_device_alert");
    assert.match((await storage.mailOutbox.latest({ kind: "password_reset" }))!.text, /token=reset-token/);
    await assert.rejects(transport.send({ ...sent[0], to: "x@y.z\nBcc: q@r.s" }, ADDRESSEE), ValidationError);
    assert.equal((await storage.mailOutbox.list()).length, 5);
  } finally {
    await database.close();
  }
});
