/**
 * The one normalization of email addresses, applied at every entry point (sign-up, invite,
 * admin create and update, imports, federation claims, login and forgot-password lookups, the
 * throttles' account keys) and by the user store itself: Unicode NFKC, trimmed, lowercased, the
 * domain in its IDNA ASCII form (punycode, through the WHATWG URL host parser) without a
 * trailing dot. `café@…` in NFC or NFD, `ａｄｍｉｎ@example.test` in fullwidth and
 * `admin@example.test.` are then one account. An address already stored (trimmed and
 * lowercased ASCII) normalizes to itself.
 *
 * @module
 */
import * as v from "valibot";

/** Longest address accepted (RFC 5321 path limits, as svc has always applied them). */
export const EMAIL_MAX_LENGTH = 320;

/** Characters that make the URL host parser read something other than a host. */
const NOT_A_HOST = /[/?#:@\\[\]%\s]/;
// deno-lint-ignore no-control-regex
const ASCII = /^[\x00-\x7f]*$/;

/**
 * The natural-key form of an email address: NFKC, trimmed, lowercased, the domain in IDNA
 * ASCII (punycode) without trailing dots. Never throws: a domain the host parser refuses is
 * kept as it is (lowercased), and the address is then refused by {@link isEmailAddress} or
 * simply matches nothing. Idempotent.
 */
export function normalizeEmail(email: string): string {
  const text = email.normalize("NFKC").toLowerCase().normalize("NFKC").trim();
  const at = text.lastIndexOf("@");
  if (at < 0) return text;
  return `${text.slice(0, at)}@${asciiDomain(text.slice(at + 1))}`;
}

/** Without trailing dots, nor the spaces between them ("x. ." is "x"). */
function withoutTrailingDots(domain: string): string {
  let bare = domain;
  for (
    let next = bare.replace(/\.+$/, "").trimEnd();
    next !== bare;
    next = bare.replace(/\.+$/, "").trimEnd()
  ) {
    bare = next;
  }
  return bare;
}

function asciiDomain(domain: string): string {
  const bare = withoutTrailingDots(domain);
  if (ASCII.test(bare) || bare === "" || NOT_A_HOST.test(bare)) return bare;
  try {
    const host = withoutTrailingDots(new URL(`http://${bare}`).hostname);
    return host === "" ? bare : host;
  } catch {
    return bare;
  }
}

const ADDRESS = /^[^\s@<>,;"]+@[^\s@<>,;"]+$/;

/** Whether a normalized address is usable: one `@`, something on each side, no spaces, controls or list separators. */
export function isEmailAddress(normalized: string): boolean {
  if (normalized.length > EMAIL_MAX_LENGTH) return false;
  for (let i = 0; i < normalized.length; i++) if (normalized.charCodeAt(i) < 0x20) return false;
  return ADDRESS.test(normalized);
}

/** The written-out type of {@link EmailAddressSchema}. */
export type EmailAddressSchemaType = v.SchemaWithPipe<
  readonly [
    v.StringSchema<string>,
    v.MaxLengthAction<string, number, string>,
    v.TransformAction<string, string>,
    v.CheckAction<string, string>,
  ]
>;

/**
 * The email field of a request that names an address to create, invite or change to: a
 * string, normalized ({@link normalizeEmail}), then refused (`email must be an email
 * address`) unless {@link isEmailAddress}. The parsed value is the normalized address.
 */
export const EmailAddressSchema: EmailAddressSchemaType = v.pipe(
  v.string("email must be a string"),
  v.maxLength(4 * EMAIL_MAX_LENGTH, "email must be an email address"),
  v.transform(normalizeEmail),
  v.check(isEmailAddress, "email must be an email address"),
);

/** The written-out type of {@link EmailLookupSchema}. */
export type EmailLookupSchemaType = v.SchemaWithPipe<
  readonly [
    v.StringSchema<string>,
    v.MinLengthAction<string, 1, string>,
    v.MaxLengthAction<string, number, string>,
    v.TransformAction<string, string>,
  ]
>;

/**
 * The email field of a lookup (login, forgot password): any non-empty string up to 320
 * characters, normalized; an address that is not one simply matches no account, so the
 * answer never tells a malformed address from an unknown one.
 */
export const EmailLookupSchema: EmailLookupSchemaType = v.pipe(
  v.string("email must be a string"),
  v.minLength(1, "email must not be empty"),
  v.maxLength(EMAIL_MAX_LENGTH, `email is longer than ${EMAIL_MAX_LENGTH} characters`),
  v.transform(normalizeEmail),
);
