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
  loginBlockedAlertMessage,
  mailLocaleOf,
  mailMessages,
  type MailSettings,
  mailSettingsFromConfig,
  newDeviceAlertMessage,
  pageUrl,
  passwordResetMessage,
  realmMessages,
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
    `https://id.example.com/svc/account/reset-password?token=${TOKEN}`,
  );
  assert.equal(
    linkUrl({ ...settings, pathBase: "", linkPaths: { invitation: "welcome" } }, "invitation", "a+b/c="),
    "https://id.example.com/welcome?token=a%2Bb%2Fc%3D",
  );
  assert.equal(
    linkUrl(settings, "emailVerification", "t"),
    "https://id.example.com/svc/account/verify-email?token=t",
  );
  // A base URL written with the path base: not doubled (`publicRoot`).
  assert.equal(
    linkUrl({ ...settings, baseUrl: "https://id.example.com/svc" }, "passwordReset", "t"),
    "https://id.example.com/svc/account/reset-password?token=t",
  );
  assert.equal(
    pageUrl({ ...settings, baseUrl: "https://id.example.com/svc/" }, "signIn"),
    "https://id.example.com/svc/account/sign-in",
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
    [reset, "password_reset", "/svc/account/reset-password"],
    [verify, "email_verification", "/svc/account/verify-email"],
    [invite, "invitation", "/svc/account/accept-invitation"],
  ];
  for (const [m, kind, path] of cases) {
    assert.equal(m.kind, kind);
    const url = `https://id.example.com${path}?token=${TOKEN}`;
    assert.equal(m.text.split(TOKEN).length - 1, 1, `${kind}: the token once in text`);
    assert.ok(m.text.includes(url), kind);
    assert.ok(m.html.includes(`<a href="${url}"`), kind);
    assert.ok(m.html.includes(`<small>${url}</small>`), `${kind}: the address shown for copying`);
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
  assert.match(plain.text, /choose a password/);
  // An account that already has a password is asked to sign in and accept, never to choose one.
  const join = invitationMessage(settings, {
    to: "a@example.com",
    token: "t",
    ttlSeconds: 60,
    existingAccount: true,
  });
  assert.match(join.text, /Sign in with your account and accept the invitation/);
  assert.doesNotMatch(join.text, /password/);
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
  assert.ok(m.text.includes("https://login.example.org/id/account/reset-password?token=abc"));
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

Deno.test("mail: the blocked-sign-in alert tells the password is known, with no link or secret", () => {
  const m = loginBlockedAlertMessage(settings, {
    to: "a@example.com",
    attemptedAt: new Date(Date.UTC(2026, 2, 4, 5, 6, 7, 890)),
    device: "Evil\r\nBcc: victim@example.com <img src=x>",
    ipAddress: "192.0.2.66",
  });
  assert.equal(m.kind, "login_blocked_alert");
  assert.match(m.subject, /Blocked sign-in to your Example ID account/);
  assert.match(m.text, /correct password/);
  assert.match(m.text, /Time: 2026-03-04T05:06:07Z/);
  assert.match(m.text, /IP address: 192\.0\.2\.66/);
  assert.ok(m.text.split("\n").some((l) => l.startsWith("Device: Evil Bcc: victim@example.com")));
  assert.ok(!m.html.includes("<img"), "escaped");
  assert.ok(!/https?:\/\//.test(m.text) && !m.html.includes("<a "), "no link");
  assert.equal(
    mailMessages(settings).loginBlockedAlert({ to: "a@example.com", attemptedAt: new Date(0) }).kind,
    m.kind,
  );
});

Deno.test("mail: French messages for a French Accept-Language; English otherwise", () => {
  assert.equal(mailLocaleOf("fr-FR,fr;q=0.9,en;q=0.8"), "fr");
  assert.equal(mailLocaleOf("de-DE, en;q=0.5, fr;q=0.4"), "en");
  assert.equal(mailLocaleOf("de, fr;q=0.7"), "fr");
  assert.equal(mailLocaleOf("en;q=0.2, fr;q=0.9"), "fr");
  assert.equal(mailLocaleOf("fr;q=0"), "en");
  assert.equal(mailLocaleOf(undefined), "en");
  const reset = passwordResetMessage(settings, {
    to: "a@example.com",
    token: TOKEN,
    ttlSeconds: 3600,
    locale: "fr",
  });
  assert.equal(reset.subject, "Réinitialisez votre mot de passe Example ID");
  assert.match(reset.text, /expire dans 1 heure\./);
  assert.ok(reset.text.includes(`https://id.example.com/svc/account/reset-password?token=${TOKEN}`));
  assert.match(reset.html, /<html lang="fr">/);
  const verify = emailVerificationMessage(settings, {
    to: "a@example.com",
    token: "t",
    ttlSeconds: 172800,
    locale: "fr",
  });
  assert.match(verify.text, /expire dans 2 jours\./);
  const otp = emailOtpMessage(settings, {
    to: "a@example.com",
    code: "042917",
    ttlSeconds: 600,
    locale: "fr",
  });
  assert.match(otp.text, /042917/);
  assert.match(otp.text, /expire dans 10 minutes\./);
  assert.ok(!otp.subject.includes("042917"));
});

Deno.test("realm messages: the realm's branding over the server's, links naming a non-default realm", () => {
  const base = mailMessages({
    baseUrl: "https://id.example.com",
    from: "id@example.com",
    productName: "Server ID",
  });
  const realm = {
    name: "beta",
    isDefault: false,
    branding: { productName: "Beta ID", color: "#123456", logoUrl: "https://cdn.example.com/beta.png" },
  };
  const reset = realmMessages(base, realm).passwordReset({ to: "a@example.com", token: "t", ttlSeconds: 60 });
  assert.match(reset.subject, /Beta ID/);
  assert.match(reset.html, /#123456/);
  assert.match(reset.html, /https:\/\/cdn\.example\.com\/beta\.png/);
  assert.ok(reset.text.includes("/account/reset-password?token=t&realm=beta"));
  const alert = realmMessages(base, {
    ...realm,
    isDefault: true,
    branding: { ...realm.branding, productName: null },
  })
    .newDeviceAlert({ to: "a@example.com", seenAt: new Date(0) });
  assert.match(alert.subject, /Server ID/, "a null field falls back to the server's");
  assert.equal(realmMessages(base, null), base);
});
