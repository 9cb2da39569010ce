/**
 * Mail delivery over a real SMTP server (issue 14): the outbox queue, the delivery worker and the
 * SMTP relay against `smtp-server` (parsed with `mailparser`): multipart delivery with STARTTLS
 * and authentication; an SMTP server that is down when mail is sent gets it once it is back,
 * exactly once; concurrent workers on real Postgres deliver each message exactly once.
 */
import { strict as assert } from "node:assert";
import { ManualClock } from "../../core/clock.ts";
import { cryptoRandom } from "../../core/random.ts";
import { MailDeliveryWorker } from "../../core/mail/delivery.ts";
import { createLogRelay, linksOf } from "../../core/mail/log-relay.ts";
import { mailMessages } from "../../core/mail/messages.ts";
import { createOutboxTransport } from "../../core/mail/outbox.ts";
import { createSqlMailOutboxStore } from "../../storage/sql/mail-outbox.ts";
import { createSmtpRelay } from "../../cli/smtp-relay.ts";
import { mailRelayFromConfig } from "../../cli/mail-relay.ts";
import { loadConfig } from "../../core/config/mod.ts";
import { freshEmbedded, freshPostgres } from "../support/db.ts";
import { startTestSmtp } from "../support/smtp.ts";

const T0 = Date.UTC(2026, 5, 1, 12);
const messages = mailMessages({ baseUrl: "https://id.example.com", from: "Example <no-reply@example.com>" });

/** The realm and user the messages of these tests are for. */
const ADDRESSEE = { realmId: "9b0c3c1e-1111-4a4a-8888-000000000001", userId: null };

Deno.test("mail delivery: a reset mail reaches a real SMTP server over STARTTLS with auth, multipart", async () => {
  const smtp = await startTestSmtp({ starttls: true, auth: { user: "svc", password: "s3cret pass" } });
  const database = await freshEmbedded();
  const clock = new ManualClock(T0);
  const store = createSqlMailOutboxStore(database.db, { clock, random: cryptoRandom });
  const relay = createSmtpRelay({
    host: "127.0.0.1",
    port: smtp.port,
    security: "starttls",
    user: "svc",
    password: "s3cret pass",
    timeoutMs: 10_000,
    verifyCertificate: false,
  });
  const worker = new MailDeliveryWorker({ store, relay, clock });
  try {
    await createOutboxTransport(store).send(
      messages.passwordReset({ to: "ada@example.org", token: "tok-123", ttlSeconds: 3600 }),
      ADDRESSEE,
    );
    const outcomes = await worker.drain();
    assert.deepEqual(outcomes.map((o) => [o.ok, o.status, o.error]), [[true, "sent", null]]);
    assert.equal(smtp.received.length, 1);
    const mail = smtp.received[0];
    assert.deepEqual(mail.to, ["ada@example.org"]);
    assert.equal(mail.user, "svc");
    assert.equal(mail.secure, true, "STARTTLS was used");
    assert.match(mail.raw, /Content-Type: multipart\/alternative/i);
    assert.match(mail.text, /https:\/\/id\.example\.com\S*token=tok-123/);
    assert.match(mail.html, /<a href="https:\/\/id\.example\.com[^"]*token=tok-123"/);
    const [stored] = await store.list();
    assert.equal(mail.messageId, `<${stored.id}@example.com>`);
    assert.equal(stored.deliveryStatus, "sent");
    assert.equal(stored.attempts, 1);
    assert.deepEqual(stored.sentAt, new Date(T0));
    assert.deepEqual(await worker.drain(), [], "nothing left to deliver");
  } finally {
    await worker.stop();
    await database.close();
    await smtp.stop();
  }
});

Deno.test("mail delivery: wrong SMTP credentials fail the attempt and schedule a retry", async () => {
  const smtp = await startTestSmtp({ starttls: true, auth: { user: "svc", password: "right" } });
  const database = await freshEmbedded();
  const clock = new ManualClock(T0);
  const store = createSqlMailOutboxStore(database.db, { clock, random: cryptoRandom });
  const errors: string[] = [];
  const worker = new MailDeliveryWorker({
    store,
    clock,
    relay: createSmtpRelay({
      host: "127.0.0.1",
      port: smtp.port,
      security: "starttls",
      user: "svc",
      password: "wrong-password-value",
      timeoutMs: 10_000,
      verifyCertificate: false,
    }),
    onError: (line) => errors.push(line),
  });
  try {
    await createOutboxTransport(store).send(
      messages.emailOtp({ to: "a@example.org", code: "123456", ttlSeconds: 60 }),
      ADDRESSEE,
    );
    const [outcome] = await worker.drain();
    assert.equal(outcome.ok, false);
    assert.equal(outcome.status, "retrying");
    assert.equal(smtp.received.length, 0);
    assert.ok(
      errors.length === 1 && !errors[0].includes("wrong-password-value"),
      "the password is never logged",
    );
    assert.ok(!errors[0].includes("123456"), "the body is never logged");
  } finally {
    await worker.stop();
    await database.close();
    await smtp.stop();
  }
});

Deno.test("mail delivery: the SMTP server is down when mail is sent; it gets the mail once back, exactly once", async () => {
  const smtp = await startTestSmtp();
  const port = smtp.port;
  await smtp.stop();
  const database = await freshEmbedded();
  const clock = new ManualClock(T0);
  const store = createSqlMailOutboxStore(database.db, { clock, random: cryptoRandom });
  const relay = createSmtpRelay({
    host: "127.0.0.1",
    port,
    security: "none",
    timeoutMs: 5_000,
    verifyCertificate: true,
  });
  const worker = new MailDeliveryWorker({ store, relay, clock, retryDelaysMs: [30_000, 120_000] });
  try {
    await createOutboxTransport(store).send(
      messages.invitation({ to: "new@example.org", token: "inv-1", ttlSeconds: 86400 }),
      ADDRESSEE,
    );
    // Down: the attempt fails and the next one is scheduled from the clock.
    const [first] = await worker.drain();
    assert.deepEqual([first.ok, first.status], [false, "retrying"]);
    let [stored] = await store.list();
    assert.equal(stored.attempts, 1);
    assert.deepEqual(stored.nextAttemptAt, new Date(T0 + 30_000));
    assert.match(stored.lastError ?? "", /ECONNREFUSED|connect/i);
    // Not due yet: nothing is claimed.
    clock.advance(29_000);
    assert.deepEqual(await worker.drain(), []);
    // Back up, and the retry is due: delivered once.
    await smtp.start();
    clock.advance(1_000);
    const [second] = await worker.drain();
    assert.deepEqual([second.ok, second.status], [true, "sent"]);
    [stored] = await store.list();
    assert.equal(stored.deliveryStatus, "sent");
    assert.equal(stored.attempts, 2);
    // Later polls never send it again.
    clock.advance(86_400_000);
    assert.deepEqual(await worker.drain(), []);
    assert.equal(smtp.received.length, 1);
    assert.match(smtp.received[0].text, /token=inv-1/);
  } finally {
    await worker.stop();
    await database.close();
    await smtp.stop();
  }
});

Deno.test("mail delivery: past the last retry the message is dead-lettered and not tried again", async () => {
  const database = await freshEmbedded();
  const clock = new ManualClock(T0);
  const store = createSqlMailOutboxStore(database.db, { clock, random: cryptoRandom });
  let tries = 0;
  const worker = new MailDeliveryWorker({
    store,
    clock,
    retryDelaysMs: [1000],
    relay: {
      name: "failing",
      deliver: () => {
        tries++;
        return Promise.reject(new Error("421 try later"));
      },
    },
  });
  await createOutboxTransport(store).send(
    messages.emailOtp({ to: "a@example.org", code: "1", ttlSeconds: 60 }),
    ADDRESSEE,
  );
  assert.equal((await worker.drain())[0].status, "retrying");
  clock.advance(1000);
  assert.equal((await worker.drain())[0].status, "dead_letter");
  clock.advance(86_400_000);
  assert.deepEqual(await worker.drain(), []);
  assert.equal(tries, 2);
  const [stored] = await store.list();
  assert.deepEqual([stored.deliveryStatus, stored.lastError], ["dead_letter", "421 try later"]);
  await database.close();
});

Deno.test("mail delivery: an SMTP server that never greets times out", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of listener) held.push(conn);
  })();
  const relay = createSmtpRelay({
    host: "127.0.0.1",
    port: listener.addr.port,
    security: "none",
    timeoutMs: 300,
    verifyCertificate: true,
  });
  const database = await freshEmbedded();
  const clock = new ManualClock(T0);
  const store = createSqlMailOutboxStore(database.db, { clock, random: cryptoRandom });
  try {
    const message = await store.add({
      ...messages.emailOtp({ to: "a@example.org", code: "1", ttlSeconds: 60 }),
      ...ADDRESSEE,
    });
    await assert.rejects(relay.deliver(message), /timeout|ETIMEDOUT|greeting/i);
  } finally {
    await relay.close?.();
    listener.close();
    for (const c of held) c.close();
    await accepting.catch(() => {});
    await database.close();
  }
});

Deno.test("mail delivery: concurrent workers on real Postgres deliver each message exactly once", async () => {
  const smtp = await startTestSmtp();
  const database = await freshPostgres({ maxConnections: 12 });
  const clock = new ManualClock(T0);
  const store = createSqlMailOutboxStore(database.db, { clock, random: cryptoRandom });
  const workers = Array.from({ length: 4 }, () =>
    new MailDeliveryWorker({
      store,
      clock,
      batchSize: 3,
      relay: createSmtpRelay({
        host: "127.0.0.1",
        port: smtp.port,
        security: "none",
        timeoutMs: 10_000,
        verifyCertificate: true,
      }),
    }));
  try {
    const transport = createOutboxTransport(store);
    const count = 40;
    for (let i = 0; i < count; i++) {
      await transport.send(
        messages.emailOtp({ to: `user${i}@example.org`, code: String(i), ttlSeconds: 60 }),
        ADDRESSEE,
      );
    }
    const outcomes = (await Promise.all(workers.map((w) => w.drain()))).flat();
    assert.equal(outcomes.length, count, "each message claimed once across the workers");
    assert.ok(outcomes.every((o) => o.ok && o.status === "sent"));
    assert.equal(smtp.received.length, count);
    assert.equal(new Set(smtp.received.map((m) => m.messageId)).size, count, "no message delivered twice");
    const stored = await store.list({ limit: 1000 });
    assert.ok(stored.every((m) => m.deliveryStatus === "sent" && m.attempts === 1));
  } finally {
    for (const w of workers) await w.stop();
    await database.close();
    await smtp.stop();
  }
});

Deno.test("mail delivery: the log relay prints each message with its links", async () => {
  const lines: string[] = [];
  const relay = createLogRelay((line) => lines.push(line));
  const m = messages.passwordReset({ to: "ada@example.org", token: "abc", ttlSeconds: 60 });
  await relay.deliver({
    ...m,
    ...ADDRESSEE,
    id: "00000000-0000-4000-8000-000000000001",
    seq: 1,
    createdAt: new Date(T0),
    sentAt: null,
    deliveryStatus: "pending",
    attempts: 1,
    nextAttemptAt: null,
    lastError: null,
  });
  assert.match(lines[0], /password_reset to ada@example\.org/);
  assert.deepEqual(linksOf(m.text).length, 1);
  assert.ok(lines.some((l) => l.includes(`link: ${linksOf(m.text)[0]}`)));
});

Deno.test("mail delivery: the transport the configuration picks", () => {
  const pick = (env: Record<string, string>) =>
    mailRelayFromConfig(loadConfig({ env }).config, () => {}).description;
  assert.match(pick({}), /^log/, "development without SMTP: the log");
  assert.match(pick({ SVC_SMTP_HOST: "smtp.example.com" }), /^smtp smtp\.example\.com:587 \(starttls\)/);
  assert.match(pick({ SVC_MAIL_TRANSPORT: "outbox" }), /^outbox/);
  const prod = {
    SVC_BASE_URL: "https://id.example.com",
    SVC_RP_ID: "id.example.com",
    SVC_RP_NAME: "Example",
    SVC_RP_ORIGINS: "https://id.example.com",
  };
  assert.match(pick(prod), /^outbox/, "production without SMTP: the outbox, never the log");
  const withPassword = pick({ SVC_SMTP_HOST: "h", SVC_SMTP_USER: "u", SVC_SMTP_PASSWORD: "hunter2-secret" });
  assert.ok(!withPassword.includes("hunter2-secret"));
});
