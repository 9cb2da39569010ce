/**
 * The mail catalogue (issue 14): English and French hold the same messages, and every message
 * svc mails is written in the recipient's language: subject, body and the HTML `lang`, with no
 * English sentence left in a French mail.
 */
import { strict as assert } from "node:assert";
import { MAIL_CATALOGUE, type MailLocale } from "../../../core/mail/catalogue.ts";
import { mailMessages } from "../../../core/mail/messages.ts";
import type { MailMessage } from "../../../core/mail/transport.ts";

function shape(value: unknown): unknown {
  if (typeof value === "function") return "function";
  if (Array.isArray(value)) return value.map(shape);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, shape((value as any)[k])]));
  }
  return typeof value;
}

Deno.test("mail catalogue: French has exactly the messages English has", () => {
  assert.deepEqual(shape(MAIL_CATALOGUE.fr), shape(MAIL_CATALOGUE.en));
});

const messages = mailMessages({
  baseUrl: "https://id.example.com",
  from: "id@example.com",
  productName: "Acme",
});
const at = new Date("2026-01-02T03:04:05Z");
const all = (locale: MailLocale): Record<string, MailMessage> => ({
  emailOtp: messages.emailOtp({ locale, to: "a@example.com", code: "123456", ttlSeconds: 600 }),
  passwordReset: messages.passwordReset({ locale, to: "a@example.com", token: "t", ttlSeconds: 1800 }),
  emailVerification: messages.emailVerification({
    locale,
    to: "a@example.com",
    token: "t",
    ttlSeconds: 86400,
  }),
  invitation: messages.invitation({
    locale,
    to: "a@example.com",
    token: "t",
    ttlSeconds: 86400,
    inviterName: "Bo",
  }),
  signUp: messages.signUp({ locale, to: "a@example.com", token: "t", ttlSeconds: 86400 }),
  signUpExisting: messages.signUpExisting({ locale, to: "a@example.com" }),
  emailChange: messages.emailChange({ locale, to: "a@example.com", token: "t", ttlSeconds: 86400 }),
  emailChangeInUse: messages.emailChangeInUse({ locale, to: "a@example.com" }),
  newDeviceAlert: messages.newDeviceAlert({ locale, to: "a@example.com", seenAt: at, device: "Firefox" }),
  loginBlockedAlert: messages.loginBlockedAlert({
    locale,
    to: "a@example.com",
    attemptedAt: at,
    ipAddress: "1.2.3.4",
  }),
  factorsReset: messages.factorsReset({
    locale,
    to: "a@example.com",
    resetAt: at,
    factors: [MAIL_CATALOGUE[locale].factorLabels.totp],
  }),
  impersonationConsent: messages.impersonationConsent({
    locale,
    to: "a@example.com",
    token: "t",
    ttlSeconds: 1800,
    actorName: "",
    reason: "ticket 42",
    durationSeconds: 1800,
  }),
});

Deno.test("mail catalogue: every message in French, and none with an English sentence left", () => {
  const en = all("en");
  const fr = all("fr");
  assert.deepEqual(Object.keys(fr), Object.keys(MAIL_CATALOGUE.fr).filter((k) => k in fr));
  for (const [name, message] of Object.entries(fr)) {
    assert.match(message.html, /<html lang="fr">/, name);
    assert.match(en[name].html, /<html lang="en">/, name);
    assert.notEqual(message.subject, en[name].subject, name);
    const englishLines = en[name].text.split("\n").filter((l) =>
      /[a-z]{4,}/.test(l) && !/https?:\/\//.test(l)
    );
    for (const line of englishLines) {
      if (/^(Time|-- |Acme|123456)/.test(line) || line.trim() === "") continue;
      assert.ok(!message.text.includes(line), `${name}: "${line}" left in English`);
    }
  }
  assert.match(fr.impersonationConsent.text, /Un administrateur demande à agir en votre nom/);
  assert.match(fr.factorsReset.text, /application d’authentification \(TOTP\)/);
  assert.match(fr.newDeviceAlert.text, /Appareil: Firefox/);
});
