/**
 * The messages svc mails (issue 5 item 8): a one-time code, a password-reset link, an
 * email-verification link, an invitation link, a new-device alert, a blocked-sign-in alert and
 * an impersonation consent link (issue 12). Each is plain text plus
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
import { type MailLocale, mailTexts } from "./catalogue.ts";
import { assertMailAddress, type MailMessage } from "./transport.ts";
import { publicRoot } from "../net/public-url.ts";

/** Paths (under the mount path) of the pages that mailed links open; the token is the `token` query parameter. */
export interface MailLinkPaths {
  /** Path of the password-reset page. */
  readonly passwordReset: string;
  /** Path of the email-verification page. */
  readonly emailVerification: string;
  /** Path of the invitation-acceptance page. */
  readonly invitation: string;
  /** Path of the impersonation-consent page. */
  readonly impersonationConsent: string;
  /** Where a self sign-up is completed (password or passkey). */
  readonly signUp: string;
  /** The sign-in page (no token). */
  readonly signIn: string;
}

/** The pages of the hosted account app (issue 14) that mailed links open, under its mount path. */
export const ACCOUNT_LINK_PAGES = Object.freeze({
  passwordReset: "reset-password",
  emailVerification: "verify-email",
  invitation: "accept-invitation",
  impersonationConsent: "impersonation-consent",
  signUp: "complete-sign-up",
  signIn: "sign-in",
});

/** The link paths of the hosted account pages mounted at `mountPath` (default `/account`). */
export function accountLinkPaths(mountPath = "/account"): MailLinkPaths {
  const mount = mountPath.replace(/\/+$/, "");
  return {
    passwordReset: `${mount}/${ACCOUNT_LINK_PAGES.passwordReset}`,
    emailVerification: `${mount}/${ACCOUNT_LINK_PAGES.emailVerification}`,
    invitation: `${mount}/${ACCOUNT_LINK_PAGES.invitation}`,
    impersonationConsent: `${mount}/${ACCOUNT_LINK_PAGES.impersonationConsent}`,
    signUp: `${mount}/${ACCOUNT_LINK_PAGES.signUp}`,
    signIn: `${mount}/${ACCOUNT_LINK_PAGES.signIn}`,
  };
}

/** Default link paths: the hosted account pages at `/account`. */
export const DEFAULT_MAIL_LINK_PATHS: MailLinkPaths = Object.freeze(accountLinkPaths());

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
  /** The accent colour (`#rrggbb`) of the HTML part. */
  readonly brandColor?: string;
  /** An https logo URL the HTML part shows. */
  readonly logoUrl?: string;
  /** The realm (name) links name (`&realm=`), when not the default one. */
  readonly realm?: string;
}

/** The part of svc's configuration mail settings come from. */
export interface MailConfigSource {
  /** Where svc is reached (`baseUrl`) and the mount path of its routes (`pathBase`). */
  readonly server: { readonly baseUrl: string; readonly pathBase: string };
  /** The mail section: `from` is the sender address. */
  readonly mail: { readonly from: string };
  /** The relying party; its name is the product name when branding names none. */
  readonly relyingParty?: { readonly name: string };
  /** The hosted account app; links open its pages under `mountPath` (default `/account`). */
  readonly account?: { readonly mountPath: string };
  /** The branding: product name, accent colour (`#rrggbb`) and https logo URL, each optional. */
  readonly branding?: { readonly productName?: string; readonly color?: string; readonly logoUrl?: string };
}

/**
 * Mail settings from the loaded configuration: links to the hosted account pages at their mount
 * path, the branding's product name (default: the relying-party name), colour and logo.
 */
export function mailSettingsFromConfig(config: MailConfigSource): MailSettings {
  return {
    baseUrl: config.server.baseUrl,
    pathBase: config.server.pathBase,
    from: config.mail.from,
    productName: config.branding?.productName ?? config.relyingParty?.name,
    linkPaths: accountLinkPaths(config.account?.mountPath),
    brandColor: config.branding?.color,
    logoUrl: config.branding?.logoUrl,
  };
}

export type { MailLocale } from "./catalogue.ts";

/** The mail language that best fits an `Accept-Language` header (English when nothing fits). */
export function mailLocaleOf(acceptLanguage: string | null | undefined): MailLocale {
  const tags = (acceptLanguage ?? "").split(",").map((part) => {
    const [tag, ...params] = part.trim().split(";");
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)).find((m) => m !== null);
    return { base: tag.trim().toLowerCase().split("-")[0], q: q ? Number(q[1]) : 1 };
  }).filter((t) => t.base !== "" && t.q > 0).sort((a, b) => b.q - a.q);
  for (const { base } of tags) if (base === "en" || base === "fr") return base;
  return "en";
}

/** Input of {@link emailOtpMessage}. */
export interface EmailOtpMessageInput {
  /** The language (default English). */
  readonly locale?: MailLocale;
  /** Recipient address. */
  readonly to: string;
  /** The one-time code. */
  readonly code: string;
  /** How long the code stays valid. */
  readonly ttlSeconds: number;
}

/** Input of the link messages (reset, verification). */
export interface TokenLinkMessageInput {
  /** The language (default English). */
  readonly locale?: MailLocale;
  /** Recipient address. */
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
  /** The invitee already has a password: they accept signed in instead of choosing one. */
  readonly existingAccount?: boolean;
}

/** Input of {@link newDeviceAlertMessage}. */
export interface NewDeviceAlertInput {
  /** The language (default English). */
  readonly locale?: MailLocale;
  /** Recipient address. */
  readonly to: string;
  /** When the device signed in. */
  readonly seenAt: Date;
  /** A description of the device, such as a browser and OS. Untrusted text (from the user agent). */
  readonly device?: string;
  /** The client IP address of the sign-in, when known. */
  readonly ipAddress?: string;
  /** An approximate location, such as "Lisbon, PT". */
  readonly location?: string;
}

/** The mail of an email one-time code. The code is the message's one secret. */
export function emailOtpMessage(settings: MailSettings, input: EmailOtpMessageInput): MailMessage {
  const product = productOf(settings);
  const T = mailTexts(input.locale).emailOtp;
  const ttl = formatDuration(input.ttlSeconds, input.locale);
  return compose(settings, "email_otp", input.to, T.subject(product), [
    { text: T.intro(product) },
    { text: clean(input.code, 32), strong: true },
    { text: T.expires(ttl, product) },
    { text: T.ignore },
  ], input.locale);
}

/** A link message: intro, the link, "works once", "ignore if not you". */
function linkMessage(
  settings: MailSettings,
  kind: MailMessage["kind"],
  texts: { subject(product: string): string; intro(product: string): string; action: string; ignore: string },
  url: string,
  input: TokenLinkMessageInput,
): MailMessage {
  const product = productOf(settings);
  return compose(settings, kind, input.to, texts.subject(product), [
    { text: texts.intro(product) },
    { text: texts.action, link: url },
    { text: mailTexts(input.locale).linkOnce(formatDuration(input.ttlSeconds, input.locale)) },
    { text: texts.ignore },
  ], input.locale);
}

/** The mail of a password-reset link. */
export function passwordResetMessage(settings: MailSettings, input: TokenLinkMessageInput): MailMessage {
  const url = linkUrl(settings, "passwordReset", input.token);
  return linkMessage(settings, "password_reset", mailTexts(input.locale).passwordReset, url, input);
}

/** The mail of an email-verification link. */
export function emailVerificationMessage(settings: MailSettings, input: TokenLinkMessageInput): MailMessage {
  const url = linkUrl(settings, "emailVerification", input.token);
  return linkMessage(settings, "email_verification", mailTexts(input.locale).emailVerification, url, input);
}

/** The mail of an invitation link. */
export function invitationMessage(settings: MailSettings, input: InvitationMessageInput): MailMessage {
  const product = productOf(settings);
  const texts = mailTexts(input.locale);
  const T = texts.invitation;
  const url = linkUrl(settings, "invitation", input.token);
  const inviter = input.inviterName ? clean(input.inviterName, 100) : "";
  const where = T.where(input.organizationName ? clean(input.organizationName, 100) : "", product);
  return compose(settings, "invitation", input.to, T.subject(where), [
    { text: T.intro(inviter, where) },
    { text: input.existingAccount ? T.actionExisting : T.actionNew, link: url },
    { text: texts.linkOnce(formatDuration(input.ttlSeconds, input.locale)) },
    { text: T.ignore },
  ], input.locale);
}

/** Input of {@link signUpExistingMessage}. */
export interface SignUpExistingInput {
  /** The language (default English). */
  readonly locale?: MailLocale;
  /** Recipient address. */
  readonly to: string;
}

/**
 * The mail of a self sign-up: a link to finish creating the account (choose a password or
 * register a passkey). The link is an `invite+svc` token the person sends themselves.
 */
export function signUpMessage(settings: MailSettings, input: TokenLinkMessageInput): MailMessage {
  return linkMessage(
    settings,
    "sign_up",
    mailTexts(input.locale).signUp,
    linkUrl(settings, "signUp", input.token),
    input,
  );
}

/**
 * The mail sent instead of a sign-up link when the address already has an account: the sign-up
 * page answers alike either way, and the owner learns that someone tried. No secret in it.
 */
export function signUpExistingMessage(settings: MailSettings, input: SignUpExistingInput): MailMessage {
  const product = productOf(settings);
  const T = mailTexts(input.locale).signUpExisting;
  return compose(settings, "sign_up_existing", input.to, T.subject(product), [
    { text: T.intro(product) },
    { text: T.action, link: pageUrl(settings, "signIn") },
    { text: T.ignore },
  ], input.locale);
}

/**
 * The mail asking the owner of a new address to confirm an email change an organization
 * administrator made (the change is pending until then). The link is an `everify+svc` token
 * naming the new address and the one it replaces; it opens the email-verification page.
 */
export function emailChangeMessage(settings: MailSettings, input: TokenLinkMessageInput): MailMessage {
  return linkMessage(
    settings,
    "email_change",
    mailTexts(input.locale).emailChange,
    linkUrl(settings, "emailVerification", input.token),
    input,
  );
}

/**
 * The mail sent instead of an email-change link when the new address already has an account:
 * the administrator's answer is the same either way, and only the owner learns of the clash. No
 * secret in it.
 */
export function emailChangeInUseMessage(settings: MailSettings, input: SignUpExistingInput): MailMessage {
  const product = productOf(settings);
  const T = mailTexts(input.locale).emailChangeInUse;
  return compose(settings, "email_change_in_use", input.to, T.subject(product), [
    { text: T.intro(product) },
    { text: T.ignore },
  ], input.locale);
}

/** "Time: …", "Device: …" lines of an alert, in the recipient's language. */
function detailLines(
  locale: MailLocale | undefined,
  at: Date,
  input: { device?: string; ipAddress?: string; location?: string },
): string {
  const L = mailTexts(locale).labels;
  return [
    `${L.time}: ${at.toISOString().replace(/\.\d{3}Z$/, "Z")}`,
    input.device ? `${L.device}: ${clean(input.device, 200)}` : null,
    input.ipAddress ? `${L.ip}: ${clean(input.ipAddress, 64)}` : null,
    input.location ? `${L.location}: ${clean(input.location, 100)}` : null,
  ].filter((line): line is string => line !== null).join("\n");
}

/** The alert mailed when a device signs in for the first time. It carries no secret and no link. */
export function newDeviceAlertMessage(settings: MailSettings, input: NewDeviceAlertInput): MailMessage {
  const product = productOf(settings);
  const T = mailTexts(input.locale).newDeviceAlert;
  return compose(settings, "new_device_alert", input.to, T.subject(product), [
    { text: T.intro(product) },
    { text: detailLines(input.locale, input.seenAt, input), lines: true },
    { text: T.you },
    { text: T.notYou },
  ], input.locale);
}

/** Input of {@link loginBlockedAlertMessage}. */
export interface LoginBlockedAlertInput {
  /** The language (default English). */
  readonly locale?: MailLocale;
  /** Recipient address. */
  readonly to: string;
  /** When the sign-in was attempted. */
  readonly attemptedAt: Date;
  /** A description of the device, such as a browser and OS. Untrusted text (from the user agent). */
  readonly device?: string;
  /** The client IP address of the attempt, when known. */
  readonly ipAddress?: string;
}

/**
 * The mail telling an account that a sign-in with its correct password was blocked as risky.
 * The sign-in itself answered as a wrong password would, so this mail is how the owner learns
 * that the password is known to someone else (or that their own sign-in was stopped).
 */
export function loginBlockedAlertMessage(settings: MailSettings, input: LoginBlockedAlertInput): MailMessage {
  const product = productOf(settings);
  const T = mailTexts(input.locale).loginBlockedAlert;
  return compose(settings, "login_blocked_alert", input.to, T.subject(product), [
    { text: T.intro(product) },
    { text: detailLines(input.locale, input.attemptedAt, input), lines: true },
    { text: T.you },
    { text: T.notYou },
  ], input.locale);
}

/** Input of {@link factorsResetMessage}. */
export interface FactorsResetInput {
  /** The language (default English). */
  readonly locale?: MailLocale;
  /** Recipient address. */
  readonly to: string;
  /** When the factors were reset. */
  readonly resetAt: Date;
  /** What was removed, in words (for example "authenticator app (TOTP)"). */
  readonly factors: readonly string[];
}

/**
 * The mail telling a user that an administrator removed sign-in methods of their account
 * (TOTP, email codes, passkeys, recovery codes), so that an unexpected reset does not go unseen.
 */
export function factorsResetMessage(settings: MailSettings, input: FactorsResetInput): MailMessage {
  const product = productOf(settings);
  const T = mailTexts(input.locale).factorsReset;
  return compose(settings, "factors_reset", input.to, T.subject(product), [
    { text: T.intro(product) },
    { text: input.factors.map((f) => `- ${clean(f, 100)}`).join("\n"), lines: true },
    { text: detailLines(input.locale, input.resetAt, {}) },
    { text: T.again },
    { text: T.notYou },
  ], input.locale);
}

/** Input of {@link impersonationConsentMessage}. */
export interface ImpersonationConsentMessageInput extends TokenLinkMessageInput {
  /** Who asks to act as the recipient (display name or email). Untrusted text. */
  readonly actorName: string;
  /** The reason the administrator gave. Untrusted text. */
  readonly reason: string;
  /** How long the impersonation would last once approved. */
  readonly durationSeconds: number;
}

/**
 * The mail asking a user to approve an impersonation of their account: who asks, why, for how
 * long, and the approval link (the consent token is the message's one secret).
 */
export function impersonationConsentMessage(
  settings: MailSettings,
  input: ImpersonationConsentMessageInput,
): MailMessage {
  const product = productOf(settings);
  const texts = mailTexts(input.locale);
  const T = texts.impersonationConsent;
  const url = linkUrl(settings, "impersonationConsent", input.token);
  const actor = clean(input.actorName, 100) || T.anAdministrator;
  return compose(settings, "impersonation_consent", input.to, T.subject(product), [
    { text: T.intro(actor, product, formatDuration(input.durationSeconds, input.locale)) },
    { text: T.reason(clean(input.reason, 500)) },
    { text: T.action, link: url },
    { text: texts.linkOnce(formatDuration(input.ttlSeconds, input.locale)) },
    { text: T.ignore },
  ], input.locale);
}

/** The mail builders bound to one set of settings. */
export interface MailMessages {
  /** The settings every builder is bound to. */
  readonly settings: MailSettings;
  /** Builds the one-time-code mail ({@link emailOtpMessage}). */
  emailOtp(input: EmailOtpMessageInput): MailMessage;
  /** Builds the password-reset link mail ({@link passwordResetMessage}). */
  passwordReset(input: TokenLinkMessageInput): MailMessage;
  /** Builds the email-verification link mail ({@link emailVerificationMessage}). */
  emailVerification(input: TokenLinkMessageInput): MailMessage;
  /** Builds the email-change confirmation link mail ({@link emailChangeMessage}). */
  emailChange(input: TokenLinkMessageInput): MailMessage;
  /** Builds the notice to the owner of an address given for another account ({@link emailChangeInUseMessage}). */
  emailChangeInUse(input: SignUpExistingInput): MailMessage;
  /** Builds the invitation link mail ({@link invitationMessage}). */
  invitation(input: InvitationMessageInput): MailMessage;
  /** Builds the new-device alert ({@link newDeviceAlertMessage}). */
  newDeviceAlert(input: NewDeviceAlertInput): MailMessage;
  /** Builds the blocked-sign-in alert ({@link loginBlockedAlertMessage}). */
  loginBlockedAlert(input: LoginBlockedAlertInput): MailMessage;
  /** Builds the factors-reset notice ({@link factorsResetMessage}). */
  factorsReset(input: FactorsResetInput): MailMessage;
  /** Builds the impersonation-consent link mail ({@link impersonationConsentMessage}). */
  impersonationConsent(input: ImpersonationConsentMessageInput): MailMessage;
  /** Builds the self sign-up link mail ({@link signUpMessage}). */
  signUp(input: TokenLinkMessageInput): MailMessage;
  /**
   * Builds the mail sent on a sign-up for an address that already has an account ({@link
   * signUpExistingMessage}).
   */
  signUpExisting(input: SignUpExistingInput): MailMessage;
}

/** What {@link realmMessages} reads of a realm. */
export interface MailRealm {
  readonly name: string;
  readonly isDefault: boolean;
  readonly branding: {
    readonly productName: string | null;
    readonly color: string | null;
    readonly logoUrl: string | null;
  };
}

/**
 * The builders of `base` for mail to a user of `realm`: the realm's branding over the server's,
 * and links that name the realm (so the hosted pages show its branding and sign in to it); the
 * default realm's links name none. `base` itself when the realm is unknown.
 */
export function realmMessages(base: MailMessages, realm: MailRealm | null): MailMessages {
  if (realm === null) return base;
  const s = base.settings;
  return mailMessages({
    ...s,
    productName: realm.branding.productName ?? s.productName,
    brandColor: realm.branding.color ?? s.brandColor,
    logoUrl: realm.branding.logoUrl ?? s.logoUrl,
    realm: realm.isDefault ? undefined : realm.name,
  });
}

/** Binds every builder to `settings`. */
export function mailMessages(settings: MailSettings): MailMessages {
  return {
    settings,
    emailOtp: (input) => emailOtpMessage(settings, input),
    passwordReset: (input) => passwordResetMessage(settings, input),
    emailVerification: (input) => emailVerificationMessage(settings, input),
    emailChange: (input) => emailChangeMessage(settings, input),
    emailChangeInUse: (input) => emailChangeInUseMessage(settings, input),
    invitation: (input) => invitationMessage(settings, input),
    newDeviceAlert: (input) => newDeviceAlertMessage(settings, input),
    loginBlockedAlert: (input) => loginBlockedAlertMessage(settings, input),
    factorsReset: (input) => factorsResetMessage(settings, input),
    impersonationConsent: (input) => impersonationConsentMessage(settings, input),
    signUp: (input) => signUpMessage(settings, input),
    signUpExisting: (input) => signUpExistingMessage(settings, input),
  };
}

/** The absolute URL of a mailed link: base URL + mount path + page path + `?token=`. */
export function linkUrl(settings: MailSettings, page: keyof MailLinkPaths, token: string): string {
  const path = settings.linkPaths?.[page] ?? DEFAULT_MAIL_LINK_PATHS[page];
  const base = publicRoot({ baseUrl: settings.baseUrl, pathBase: settings.pathBase ?? "" });
  const realm = settings.realm ? `&realm=${encodeURIComponent(settings.realm)}` : "";
  return `${base}${path.startsWith("/") ? path : `/${path}`}?token=${encodeURIComponent(token)}${realm}`;
}

/** The absolute URL of a page of the hosted account app without a token (the sign-in page). */
export function pageUrl(settings: MailSettings, page: "signIn"): string {
  const path = settings.linkPaths?.[page] ?? DEFAULT_MAIL_LINK_PATHS[page];
  const base = publicRoot({ baseUrl: settings.baseUrl, pathBase: settings.pathBase ?? "" });
  const realm = settings.realm ? `?realm=${encodeURIComponent(settings.realm)}` : "";
  return `${base}${path.startsWith("/") ? path : `/${path}`}${realm}`;
}

/** A duration in words: "45 seconds", "10 minutes", "1 hour", "2 days" (rounded down to the largest unit). */
export function formatDuration(seconds: number, locale: MailLocale = "en"): string {
  const names = mailTexts(locale).units;
  const units: [number, string][] = [[86400, names[0]], [3600, names[1]], [60, names[2]], [1, names[3]]];
  for (const [size, name] of units) {
    if (seconds >= size || size === 1) {
      const n = Math.max(0, Math.floor(seconds / size));
      return `${n} ${name}${n === 1 || (locale === "fr" && n === 0) ? "" : "s"}`;
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
  lang: MailLocale = "en",
): MailMessage {
  assertMailAddress(to);
  const product = productOf(settings);
  const text = paragraphs.map((p) => {
    if (p.link) return `${p.text}\n${p.link}`;
    return p.strong ? `    ${p.text}` : p.text;
  }).join("\n\n") + `\n\n-- \n${product}\n`;
  const color = /^#[0-9a-fA-F]{6}$/.test(settings.brandColor ?? "") ? settings.brandColor! : "#1f5fbf";
  const logo = settings.logoUrl && /^https?:\/\/[^\s"'<>]+$/.test(settings.logoUrl)
    ? `<p><img src="${escapeHtml(settings.logoUrl)}" alt="${escapeHtml(product)}" height="40"></p>`
    : `<p style="font-weight:bold;color:${color}">${escapeHtml(product)}</p>`;
  const html = [
    `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><title>${
      escapeHtml(subject)
    }</title></head>`,
    `<body style="font-family:sans-serif;line-height:1.5;border-top:4px solid ${color};padding-top:8px">`,
    logo,
    ...paragraphs.map((p) => {
      if (p.link) {
        const href = escapeHtml(p.link);
        return `<p>${
          escapeHtml(p.text)
        }<br><a href="${href}" style="display:inline-block;margin:8px 0;padding:8px 16px;background:${color};color:#fff;text-decoration:none;border-radius:4px">${
          escapeHtml(p.text.replace(/:$/, ""))
        }</a><br><small>${href}</small></p>`;
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
