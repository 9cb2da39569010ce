/**
 * The messages svc mails (issue 5 item 8): a one-time code, a password-reset link, an
 * email-verification link, an invitation link and a new-device alert. Each is plain text plus
 * minimal HTML; every interpolated value is HTML-escaped and free text (names, device
 * descriptions) is stripped of control characters and shortened. Links are built from the
 * configured public base URL and mount path.
 *
 * Each message carries at most the one secret it exists to deliver (the code, or the token in
 * its link) and never anything else secret; the code is kept out of the subject line, which
 * lock screens and mail lists show.
 *
 * @module
 */
import { assertMailAddress, type MailMessage } from "./transport.ts";

/** Paths (under the mount path) of the pages that mailed links open; the token is the `token` query parameter. */
export interface MailLinkPaths {
  readonly passwordReset: string;
  readonly emailVerification: string;
  readonly invitation: string;
}

/** Default link paths. */
export const DEFAULT_MAIL_LINK_PATHS: MailLinkPaths = Object.freeze({
  passwordReset: "/auth/password/reset",
  emailVerification: "/auth/email/verify",
  invitation: "/auth/invitation/accept",
});

/** What message builders need. */
export interface MailSettings {
  /** The public URL of svc (`config.server.baseUrl`), no trailing slash needed. */
  readonly baseUrl: string;
  /** The mount path of every route (`config.server.pathBase`); default "". */
  readonly pathBase?: string;
  /** The sender (`config.mail.from`). */
  readonly from: string;
  /** The service name messages mention; default "svc". */
  readonly productName?: string;
  /** Overrides of {@link DEFAULT_MAIL_LINK_PATHS}. */
  readonly linkPaths?: Partial<MailLinkPaths>;
}

/** The part of svc's configuration mail settings come from. */
export interface MailConfigSource {
  readonly server: { readonly baseUrl: string; readonly pathBase: string };
  readonly mail: { readonly from: string };
  readonly relyingParty?: { readonly name: string };
}

/** Mail settings from the loaded configuration (product name: the relying-party name). */
export function mailSettingsFromConfig(config: MailConfigSource): MailSettings {
  return {
    baseUrl: config.server.baseUrl,
    pathBase: config.server.pathBase,
    from: config.mail.from,
    productName: config.relyingParty?.name,
  };
}

/** Input of {@link emailOtpMessage}. */
export interface EmailOtpMessageInput {
  readonly to: string;
  /** The one-time code. */
  readonly code: string;
  /** How long the code stays valid. */
  readonly ttlSeconds: number;
}

/** Input of the link messages (reset, verification). */
export interface TokenLinkMessageInput {
  readonly to: string;
  /** The single-use token the link carries. */
  readonly token: string;
  /** How long the link works. */
  readonly ttlSeconds: number;
}

/** Input of {@link invitationMessage}. */
export interface InvitationMessageInput extends TokenLinkMessageInput {
  /** Who invited (display name or email), if known. */
  readonly inviterName?: string;
  /** The organization or realm the invitation is for, if worth naming. */
  readonly organizationName?: string;
}

/** Input of {@link newDeviceAlertMessage}. */
export interface NewDeviceAlertInput {
  readonly to: string;
  /** When the device signed in. */
  readonly seenAt: Date;
  /** A description of the device, such as a browser and OS. Untrusted text (from the user agent). */
  readonly device?: string;
  readonly ipAddress?: string;
  /** An approximate location, such as "Lisbon, PT". */
  readonly location?: string;
}

/** The mail of an email one-time code. The code is the message's one secret. */
export function emailOtpMessage(settings: MailSettings, input: EmailOtpMessageInput): MailMessage {
  const product = productOf(settings);
  const code = clean(input.code, 32);
  const ttl = formatDuration(input.ttlSeconds);
  return compose(settings, "email_otp", input.to, `Your ${product} verification code`, [
    { text: `Your ${product} verification code is:` },
    { text: code, strong: true },
    { text: `It expires in ${ttl}. Never share it: ${product} will never ask you for it.` },
    { text: "If you did not try to sign in, ignore this message and consider changing your password." },
  ]);
}

/** The mail of a password-reset link. */
export function passwordResetMessage(settings: MailSettings, input: TokenLinkMessageInput): MailMessage {
  const product = productOf(settings);
  const url = linkUrl(settings, "passwordReset", input.token);
  return compose(settings, "password_reset", input.to, `Reset your ${product} password`, [
    { text: `Someone asked to reset the password of your ${product} account.` },
    { text: "Choose a new password:", link: url },
    { text: `The link works once and expires in ${formatDuration(input.ttlSeconds)}.` },
    { text: "If you did not ask for this, ignore this message: your password stays unchanged." },
  ]);
}

/** The mail of an email-verification link. */
export function emailVerificationMessage(settings: MailSettings, input: TokenLinkMessageInput): MailMessage {
  const product = productOf(settings);
  const url = linkUrl(settings, "emailVerification", input.token);
  return compose(settings, "email_verification", input.to, `Verify your email address for ${product}`, [
    { text: `Confirm that this address belongs to your ${product} account:` },
    { text: "Verify your email address:", link: url },
    { text: `The link works once and expires in ${formatDuration(input.ttlSeconds)}.` },
    { text: "If you did not create an account, ignore this message." },
  ]);
}

/** The mail of an invitation link. */
export function invitationMessage(settings: MailSettings, input: InvitationMessageInput): MailMessage {
  const product = productOf(settings);
  const url = linkUrl(settings, "invitation", input.token);
  const inviter = input.inviterName ? clean(input.inviterName, 100) : "";
  const org = input.organizationName ? clean(input.organizationName, 100) : "";
  const who = inviter ? `${inviter} invited you` : "You are invited";
  const where = org ? `${org} on ${product}` : product;
  return compose(settings, "invitation", input.to, `You are invited to ${where}`, [
    { text: `${who} to join ${where}.` },
    { text: "Accept the invitation and choose a password:", link: url },
    { text: `The link works once and expires in ${formatDuration(input.ttlSeconds)}.` },
    { text: "If you did not expect this invitation, ignore this message." },
  ]);
}

/** The alert mailed when a device signs in for the first time. It carries no secret and no link. */
export function newDeviceAlertMessage(settings: MailSettings, input: NewDeviceAlertInput): MailMessage {
  const product = productOf(settings);
  const details = [
    `Time: ${input.seenAt.toISOString().replace(/\.\d{3}Z$/, "Z")}`,
    input.device ? `Device: ${clean(input.device, 200)}` : null,
    input.ipAddress ? `IP address: ${clean(input.ipAddress, 64)}` : null,
    input.location ? `Location: ${clean(input.location, 100)}` : null,
  ].filter((line): line is string => line !== null);
  return compose(settings, "new_device_alert", input.to, `New sign-in to your ${product} account`, [
    { text: `Your ${product} account was just signed in to from a device it had not seen before.` },
    { text: details.join("\n"), lines: true },
    { text: "If this was you, there is nothing to do." },
    { text: "If it was not, change your password right away and review your sign-in methods." },
  ]);
}

/** The mail builders bound to one set of settings. */
export interface MailMessages {
  readonly settings: MailSettings;
  emailOtp(input: EmailOtpMessageInput): MailMessage;
  passwordReset(input: TokenLinkMessageInput): MailMessage;
  emailVerification(input: TokenLinkMessageInput): MailMessage;
  invitation(input: InvitationMessageInput): MailMessage;
  newDeviceAlert(input: NewDeviceAlertInput): MailMessage;
}

/** Binds every builder to `settings`. */
export function mailMessages(settings: MailSettings): MailMessages {
  return {
    settings,
    emailOtp: (input) => emailOtpMessage(settings, input),
    passwordReset: (input) => passwordResetMessage(settings, input),
    emailVerification: (input) => emailVerificationMessage(settings, input),
    invitation: (input) => invitationMessage(settings, input),
    newDeviceAlert: (input) => newDeviceAlertMessage(settings, input),
  };
}

/** The absolute URL of a mailed link: base URL + mount path + page path + `?token=`. */
export function linkUrl(settings: MailSettings, page: keyof MailLinkPaths, token: string): string {
  const path = settings.linkPaths?.[page] ?? DEFAULT_MAIL_LINK_PATHS[page];
  const base = settings.baseUrl.replace(/\/+$/, "") + (settings.pathBase ?? "").replace(/\/+$/, "");
  return `${base}${path.startsWith("/") ? path : `/${path}`}?token=${encodeURIComponent(token)}`;
}

/** A duration in words: "45 seconds", "10 minutes", "1 hour", "2 days" (rounded down to the largest unit). */
export function formatDuration(seconds: number): string {
  const units: [number, string][] = [[86400, "day"], [3600, "hour"], [60, "minute"], [1, "second"]];
  for (const [size, name] of units) {
    if (seconds >= size || size === 1) {
      const n = Math.max(0, Math.floor(seconds / size));
      return `${n} ${name}${n === 1 ? "" : "s"}`;
    }
  }
  return `${seconds} seconds`;
}

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

interface Paragraph {
  readonly text: string;
  /** Shown as its own line in text, and a link in HTML. */
  readonly link?: string;
  /** Emphasized (the code). */
  readonly strong?: boolean;
  /** Keep line breaks (as `<br>` in HTML). */
  readonly lines?: boolean;
}

function compose(
  settings: MailSettings,
  kind: MailMessage["kind"],
  to: string,
  subject: string,
  paragraphs: readonly Paragraph[],
): MailMessage {
  assertMailAddress(to);
  const product = productOf(settings);
  const text = paragraphs.map((p) => {
    if (p.link) return `${p.text}\n${p.link}`;
    return p.strong ? `    ${p.text}` : p.text;
  }).join("\n\n") + `\n\n-- \n${product}\n`;
  const html = [
    `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>`,
    `<body style="font-family:sans-serif;line-height:1.5">`,
    ...paragraphs.map((p) => {
      if (p.link) {
        const href = escapeHtml(p.link);
        return `<p>${escapeHtml(p.text)}<br><a href="${href}">${href}</a></p>`;
      }
      if (p.strong) {
        return `<p style="font-size:1.5em;letter-spacing:0.2em"><strong>${escapeHtml(p.text)}</strong></p>`;
      }
      if (p.lines) return `<p>${p.text.split("\n").map(escapeHtml).join("<br>")}</p>`;
      return `<p>${escapeHtml(p.text)}</p>`;
    }),
    `<p style="color:#666">${escapeHtml(product)}</p>`,
    `</body></html>`,
  ].join("\n");
  return { kind, to, from: settings.from, subject: clean(subject, 200), text, html };
}

function productOf(settings: MailSettings): string {
  return clean(settings.productName ?? "svc", 100) || "svc";
}

/** Untrusted free text on one line: control characters become spaces, runs collapse, then truncate. */
function clean(text: string, max: number): string {
  // deno-lint-ignore no-control-regex
  const one = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ").replace(/\s+/g, " ").trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}
