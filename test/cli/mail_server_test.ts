/**
 * Mail through `svc start` (issue 14): a real server whose SMTP server is down when a reset mail
 * is asked for keeps it queued (`GET /svc-admin/mail` shows it retrying), and delivers it once
 * the SMTP server is back, exactly once; then it shows as sent.
 */
import { strict as assert } from "node:assert";
import { httpClient, startTestServer } from "../support/server.ts";
import { startTestSmtp } from "../support/smtp.ts";

Deno.test({
  name: "svc start: mail asked while the SMTP server is down is delivered once it is back, exactly once",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const smtp = await startTestSmtp();
    const port = smtp.port;
    await smtp.stop();
    const server = await startTestServer({
      SVC_SMTP_HOST: "127.0.0.1",
      SVC_SMTP_PORT: String(port),
      SVC_SMTP_SECURITY: "none",
      SVC_SMTP_TIMEOUT_SECONDS: "5",
      SVC_MAIL_RETRY_SCHEDULE_SECONDS: "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,20",
      SVC_MAIL_POLL_INTERVAL_MS: "100",
    });
    try {
      const http = httpClient(server.url);
      const token = await http.signIn(server.adminEmail, server.adminPassword);
      const forgot = await http.call("POST", "/auth/password/forgot", null, { email: server.adminEmail });
      assert.equal(forgot.status, 202);

      const resetMail = async () => {
        const list = await http.call("GET", "/svc-admin/mail?kind=password_reset", token);
        assert.equal(list.status, 200, JSON.stringify(list.json));
        return list.json.items[0] as { id: string; deliveryStatus: string; attempts: number } | undefined;
      };
      // Down: the message waits in the queue, retried.
      let queued = await resetMail();
      for (let i = 0; i < 100 && (queued === undefined || queued.attempts < 2); i++) {
        await new Promise((r) => setTimeout(r, 200));
        queued = await resetMail();
      }
      assert.ok(queued, "the reset mail is queued");
      assert.equal(queued.deliveryStatus, "retrying");
      assert.equal(smtp.received.length, 0);

      // Back up: delivered, once.
      await smtp.start();
      const mail = await smtp.waitFor((m) => /reset/i.test(m.subject), 30_000);
      assert.match(mail.text, /\/account\/reset-password\?token=/);
      let sent = await resetMail();
      for (let i = 0; i < 50 && sent?.deliveryStatus !== "sent"; i++) {
        await new Promise((r) => setTimeout(r, 200));
        sent = await resetMail();
      }
      assert.equal(sent?.deliveryStatus, "sent");
      await new Promise((r) => setTimeout(r, 2000));
      assert.equal(smtp.received.filter((m) => /reset/i.test(m.subject)).length, 1, "delivered exactly once");
      assert.equal(mail.messageId, `<${sent!.id}@localhost>`);
    } finally {
      await server.close();
      await smtp.stop();
    }
    assert.match(await server.stdout, /^mail: smtp 127\.0\.0\.1:\d+ \(none\)$/m);
  },
});
