import { strict as assert } from "node:assert";
import fc from "fast-check";
import { ValidationError } from "../../../core/errors.ts";
import {
  emailOtpMessage,
  emailVerificationMessage,
  escapeHtml,
  formatDuration,
  invitationMessage,
  linkUrl,
  mailMessages,
  type MailSettings,
  mailSettingsFromConfig,
  newDeviceAlertMessage,
  passwordResetMessage,
} from "../../../core/mail/messages.ts";
import { loadConfig } from "../../../core/config/mod.ts";

const settings: MailSettings = {
  baseUrl: "https://id.example.com/",
  pathBase: "/svc",
  from: "Example <no-reply@example.com>",
  productName: "Example ID",
};
const TOKEN = "eyJhbGciOiJSUzI1NiJ9.eyJqdGkiOiJ4In0.c2lnbmF0dXJl";

Deno.test("mail: links are base URL + mount path + page + ?token=", () => {
  assert.equal(
    linkUrl(settings, "passwordReset", TOKEN),
    `https://id.example.com/svc/auth/password/reset?token=${TOKEN}`,
  );
  assert.equal(
    linkUrl({ ...settings, pathBase: "", linkPaths: { invitation: "welcome" } }, "invitation", "a+b/c="),
    "https://id.example.com/welcome?token=a%2Bb%2Fc%3D",
  );
  assert.equal(
    linkUrl(settings, "emailVerification", "t"),
    "https://id.example.com/svc/auth/email/verify?token=t",
  );
});

Deno.test("mail: the OTP message carries the code in text and HTML, never in the subject", () => {
  const m = emailOtpMessage(settings, { to: "alice@example.com", code: "042917", ttlSeconds: 600 });
  assert.equal(m.kind, "email_otp");
  assert.equal(m.to, "alice@example.com");
  assert.equal(m.from, "Example <no-reply@example.com>");
  assert.equal(m.subject, "Your Example ID verification code");
  assert.match(m.text, /^ {4}042917$/m);
  assert.match(m.text, /expires in 10 minutes/);
  assert.match(m.html, /<strong>042917<\/strong>/);
  assert.ok(!m.text.includes("https://"), "no link in an OTP message");
});

Deno.test("mail: reset, verification and invitation carry their link once and nothing else secret", () => {
  const reset = passwordResetMessage(settings, { to: "a@example.com", token: TOKEN, ttlSeconds: 3600 });
  const verify = emailVerificationMessage(settings, { to: "a@example.com", token: TOKEN, ttlSeconds: 86400 });
  const invite = invitationMessage(settings, {
    to: "a@example.com",
    token: TOKEN,
    ttlSeconds: 7 * 86400,
    inviterName: "Bob <script>alert(1)</script>",
    organizationName: "Acme & Co",
  });
  const cases: [typeof reset, string, string][] = [
    [reset, "password_reset", "/svc/auth/password/reset"],
    [verify, "email_verification", "/svc/auth/email/verify"],
    [invite, "invitation", "/svc/auth/invitation/accept"],
  ];
  for (const [m, kind, path] of cases) {
    assert.equal(m.kind, kind);
    const url = `https://id.example.com${path}?token=${TOKEN}`;
    assert.equal(m.text.split(TOKEN).length - 1, 1, `${kind}: the token once in text`);
    assert.ok(m.text.includes(url), kind);
    assert.ok(m.html.includes(`<a href="${url}">${url}</a>`), kind);
    assert.ok(!m.subject.includes(TOKEN));
  }
  assert.match(reset.text, /expires in 1 hour/);
  assert.match(verify.text, /expires in 1 day/);
  assert.match(invite.text, /expires in 7 days/);
  assert.equal(invite.subject, "You are invited to Acme & Co on Example ID");
  assert.ok(invite.text.includes("Bob <script>alert(1)</script> invited you"));
  assert.ok(!invite.html.includes("<script>"), "names are escaped in HTML");
  assert.ok(invite.html.includes("Bob &lt;script&gt;alert(1)&lt;/script&gt;"));
  assert.ok(invite.html.includes("Acme &amp; Co"));
  const plain = invitationMessage(settings, { to: "a@example.com", token: "t", ttlSeconds: 60 });
  assert.match(plain.text, /^You are invited to join Example ID\./);
});

Deno.test("mail: the new-device alert has no link or secret, and tames the untrusted device text", () => {
  const m = newDeviceAlertMessage(settings, {
    to: "a@example.com",
    seenAt: new Date(Date.UTC(2026, 2, 4, 5, 6, 7, 890)),
    device: "Evil\r\nBcc: victim@example.com <img src=x onerror=alert(1)> " + "x".repeat(500),
    ipAddress: "203.0.113.9",
    location: "Lisbon, PT",
  });
  assert.equal(m.kind, "new_device_alert");
  assert.match(m.text, /Time: 2026-03-04T05:06:07Z/);
  assert.match(m.text, /IP address: 203\.0\.113\.9/);
  assert.match(m.text, /Location: Lisbon, PT/);
  const deviceLine = m.text.split("\n").find((l) => l.startsWith("Device: "))!;
  assert.ok(deviceLine.startsWith("Device: Evil Bcc: victim@example.com"), "line breaks removed");
  assert.ok(deviceLine.length <= "Device: ".length + 200);
  assert.ok(!m.html.includes("<img"), "escaped");
  assert.ok(!/https?:\/\//.test(m.text) && !m.html.includes("<a "), "no link");
  const minimal = newDeviceAlertMessage(settings, { to: "a@example.com", seenAt: new Date(0) });
  assert.ok(!minimal.text.includes("Device:") && !minimal.text.includes("IP address:"));
});

Deno.test("mail: recipients must be one address (no header injection)", () => {
  for (const to of ["", "no-at-sign", "a@b.c\nBcc: d@e.f", "a@b.c, d@e.f", "Name <a@b.c>"]) {
    assert.throws(
      () => emailOtpMessage(settings, { to, code: "123456", ttlSeconds: 60 }),
      ValidationError,
      to,
    );
  }
});

Deno.test("mail: builders bound to settings from the configuration", () => {
  const { config } = loadConfig({
    env: {
      SVC_BASE_URL: "https://login.example.org",
      SVC_RP_ID: "login.example.org",
      SVC_RP_NAME: "Example Login",
      SVC_RP_ORIGINS: "https://login.example.org",
      SVC_PATH_BASE: "/id",
      SVC_MAIL_FROM: "Login <l@example.org>",
    },
  });
  const mail = mailMessages(mailSettingsFromConfig(config));
  const m = mail.passwordReset({ to: "u@example.org", token: "abc", ttlSeconds: 900 });
  assert.ok(m.text.includes("https://login.example.org/id/auth/password/reset?token=abc"));
  assert.equal(m.from, "Login <l@example.org>");
  assert.match(m.text, /\n-- \nExample Login\n$/);
  assert.equal(loadConfig({ env: {} }).config.mail.from, "no-reply@localhost");
  assert.deepEqual(loadConfig({ env: {} }).config.emailOtp, { ttlSeconds: 600, attempts: 5 });
  assert.throws(() => loadConfig({ env: { SVC_MAIL_FROM: "a@b\r\nBcc: c@d" } }), /SVC_MAIL_FROM/);
  assert.throws(() => loadConfig({ env: { SVC_EMAIL_OTP_ATTEMPTS: "0" } }), /SVC_EMAIL_OTP_ATTEMPTS/);
});

Deno.test("mail: durations and escaping", () => {
  assert.equal(formatDuration(1), "1 second");
  assert.equal(formatDuration(45), "45 seconds");
  assert.equal(formatDuration(60), "1 minute");
  assert.equal(formatDuration(600), "10 minutes");
  assert.equal(formatDuration(5400), "1 hour");
  assert.equal(formatDuration(172800), "2 days");
  fc.assert(
    fc.property(fc.string(), (s) => {
      const e = escapeHtml(s);
      return !/[<>"']/.test(e) && !/&(?!amp;|lt;|gt;|quot;|#39;)/.test(e);
    }),
  );
});
