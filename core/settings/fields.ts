/**
 * The building blocks of svc's settings schemas: valibot fields whose error messages follow one
 * template, `<problem>; set {field} to <expectation>` (the config loader replaces `{field}` with
 * the setting's name). Each domain's settings module (`core/<domain>/settings.ts`) builds its
 * section from these; `core/config/schema.ts` composes the sections.
 *
 * @module
 */
import * as v from "valibot";
import { parseCidr } from "../net/ip.ts";
import { isReceiverAllowEntry } from "../webhooks/receivers.ts";

/** Placeholder in schema messages, replaced with the setting's name when an error is reported. */
export const FIELD_PLACEHOLDER = "{field}";

/**
 * The type a setting's reference shows (`svc help`, docs/reference/settings.md) when the schema's
 * own type (a string, a list) says too little: metadata only, validation is unchanged.
 */
export function settingType<TInput>(
  type: string,
): v.MetadataAction<TInput, { readonly settingType: string }> {
  return v.metadata<TInput, { readonly settingType: string }>({ settingType: type });
}

/** A schema message: the problem, then how to set `{field}` right. */
export function rule(problem: string, expectation: string): string {
  return `${problem}; set ${FIELD_PLACEHOLDER} to ${expectation}`;
}

/** An integer in [min, max]; `unit` reads "seconds", "days"… */
export function int(min: number, max: number, unit?: string) {
  const expectation = `a whole number${unit ? ` of ${unit}` : ""} between ${min} and ${max}`;
  const notInt = rule("is not a whole number", expectation);
  return v.pipe(
    v.number(notInt),
    v.integer(notInt),
    v.minValue(min, rule(`is below ${min}`, expectation)),
    v.maxValue(max, rule(`is above ${max}`, expectation)),
  );
}

/** A yes/no setting: `true` or `false` (JSON booleans in the file, the words in the environment). */
export function flag() {
  const m = rule("is not true or false", "true or false");
  return v.pipe(
    v.union([v.boolean(m), v.picklist(["true", "false"], m)], m),
    v.transform((value) => value === true || value === "true"),
  );
}

/** The `port` field of a settings schema. */
export function port() {
  const m = rule("is not a port number", "an integer between 0 and 65535");
  return v.pipe(v.number(m), v.integer(m), v.minValue(0, m), v.maxValue(65535, m));
}

/** `text` as a URL, or null when it is not one. */
export function parseUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

/** True when `hostname` (as URL.hostname gives it) names the local machine. */
export function isLocalHostname(hostname: string): boolean {
  return hostname === "localhost" || hostname.endsWith(".localhost") || hostname === "127.0.0.1" ||
    hostname === "[::1]";
}

/** The `host` field of a settings schema. */
export function host() {
  const m = rule(
    "is not a host name or IP address",
    "an interface to listen on, such as 127.0.0.1 or 0.0.0.0",
  );
  return v.pipe(
    v.string(m),
    v.regex(/^(?:[A-Za-z0-9.-]+|[0-9A-Fa-f:.]+)$/, m),
    settingType("host name or IP address"),
  );
}

/** The `baseUrl` field of a settings schema. */
export function baseUrl() {
  const m = rule(
    "is not an absolute http(s) URL",
    "the public URL of svc, such as https://id.example.com (no query, fragment or credentials)",
  );
  return v.pipe(
    v.string(m),
    v.check((s) => {
      const u = parseUrl(s);
      return u !== null && (u.protocol === "http:" || u.protocol === "https:") && !u.search && !u.hash &&
        !u.username && !u.password;
    }, m),
    v.transform((s) => new URL(s).href.replace(/\/+$/, "")),
    settingType("URL"),
  );
}

/** The `mountPath` field of a settings schema. */
export function mountPath(allowEmpty: boolean) {
  const m = rule(
    "is not a URL path",
    allowEmpty
      ? 'a path such as /auth (or "" for the root): segments of letters, digits, ".", "_", "~", "-"'
      : 'a path such as /svc-admin/ui: segments of letters, digits, ".", "_", "~", "-"',
  );
  return v.pipe(
    v.string(m),
    v.transform((s) => s.replace(/\/+$/, "")),
    v.regex(allowEmpty ? /^(?:\/[A-Za-z0-9._~-]+)*$/ : /^(?:\/[A-Za-z0-9._~-]+)+$/, m),
    settingType("URL path"),
  );
}

/** The `nonEmpty` field of a settings schema. */
export function nonEmpty(expectation: string) {
  const m = rule("is empty or not text", expectation);
  return v.pipe(v.string(m), v.check((s) => s.trim().length > 0 && !s.includes("\0"), m));
}

/** The `postgresUrl` field of a settings schema. */
export function postgresUrl() {
  const m = rule("is not a postgres:// URL", "a URL such as postgres://user:password@host:5432/database");
  return v.pipe(
    v.string(m),
    v.check((s) => {
      const u = parseUrl(s);
      return u !== null && (u.protocol === "postgres:" || u.protocol === "postgresql:");
    }, m),
    settingType("postgres:// URL"),
  );
}

/** The `rpId` field of a settings schema. */
export function rpId() {
  const m = rule(
    "is not a domain",
    "the relying-party id: a domain such as example.com (no scheme, port or path)",
  );
  return v.pipe(
    v.string(m),
    v.toLowerCase(),
    v.regex(
      /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/,
      m,
    ),
    settingType("domain"),
  );
}

/** The `origin` field of a settings schema. */
export function origin() {
  const expectation =
    "origins such as https://example.com,https://app.example.com (scheme, host, optional port; no path)";
  const notOrigin = rule("is not an http(s) origin", expectation);
  const insecure = rule(
    "is not a secure origin (browsers allow passkeys only on https, or http on localhost)",
    expectation,
  );
  return v.pipe(
    v.string(notOrigin),
    v.check((s) => {
      const u = parseUrl(s);
      return u !== null && (u.protocol === "http:" || u.protocol === "https:") && u.pathname === "/" &&
        !u.search && !u.hash && !u.username && !u.password && !/[?#]/.test(s);
    }, notOrigin),
    v.check((s) => {
      // valibot runs every check of a pipe: an unparsable value was reported above.
      const u = parseUrl(s);
      return u === null || u.protocol !== "http:" || isLocalHostname(u.hostname);
    }, insecure),
    v.transform((s) => new URL(s).origin),
    settingType("origin"),
  );
}

/** The `origins` field of a settings schema. */
export function origins() {
  const m = rule("is not a list of origins", "origins such as https://example.com,https://app.example.com");
  return v.pipe(
    v.array(origin(), m),
    v.minLength(1, rule("is empty", "at least one origin, such as https://example.com")),
    settingType("list of origins"),
  );
}

/** The `corsOrigins` field of a settings schema. */
export function corsOrigins() {
  const expectation =
    "comma-separated origins such as https://app.example.com,https://admin.example.com (scheme, host, optional port; no path)";
  const each = rule("is not an http(s) origin", expectation);
  return v.pipe(
    v.array(
      v.pipe(
        v.string(each),
        v.check((s) => {
          const u = parseUrl(s);
          return u !== null && (u.protocol === "http:" || u.protocol === "https:") && u.pathname === "/" &&
            !u.search && !u.hash && !u.username && !u.password && !/[?#]/.test(s);
        }, each),
        v.transform((s) => new URL(s).origin),
      ),
      rule("is not a list of origins", expectation),
    ),
    v.maxLength(100, rule("has more than 100 origins", expectation)),
    settingType("list of origins"),
  );
}

/** The `smtpHost` field of a settings schema. */
export function smtpHost() {
  const m = rule("is not a host name or IP address", "the SMTP server, such as smtp.example.com");
  return v.pipe(
    v.string(m),
    v.regex(/^(?:[A-Za-z0-9.-]+|\[?[0-9A-Fa-f:.]+\]?)$/, m),
    settingType("host name or IP address"),
  );
}

/** The `httpsUrl` field of a settings schema. */
export function httpsUrl(expectation: string) {
  const m = rule("is not an https URL", expectation);
  return v.pipe(
    v.string(m),
    v.check((s) => {
      const u = parseUrl(s);
      return u !== null &&
        (u.protocol === "https:" || (u.protocol === "http:" && isLocalHostname(u.hostname))) &&
        !u.username && !u.password && !/["'<>\s]/.test(s);
    }, m),
    settingType("https URL"),
  );
}

/** The `retrySchedule` field of a settings schema. */
export function retrySchedule() {
  const expectation = "comma-separated delays in seconds, such as 60,300,1800 (at most 20)";
  const m = rule("is not a list of delays", expectation);
  const each = rule("is not a delay", "whole numbers of seconds between 1 and 604800, such as 60,300,1800");
  return v.pipe(
    v.array(
      v.pipe(v.number(each), v.integer(each), v.minValue(1, each), v.maxValue(604800, each)),
      m,
    ),
    v.maxLength(20, rule("has more than 20 delays", expectation)),
  );
}

/** The SSRF allow-list: host names, IP addresses or CIDR ranges of private receivers. */
export function trustedProxyList() {
  const expectation =
    "comma-separated IP addresses or CIDR ranges of your reverse proxies, such as 10.0.0.0/8";
  const each = rule("is not an IP address or CIDR range", expectation);
  return v.pipe(
    v.array(
      v.pipe(v.string(each), v.check((text) => parseCidr(text) !== null, each)),
      rule("is not a list", expectation),
    ),
    v.maxLength(100, rule("has more than 100 entries", expectation)),
    settingType("list of IP addresses or CIDR ranges"),
  );
}

/** The `receiverAllowList` field of a settings schema. */
export function receiverAllowList() {
  const expectation =
    "comma-separated host names, IP addresses or CIDR ranges, such as 127.0.0.1,10.0.0.0/8,hooks.internal";
  const each = rule("is not a host name, IP address or CIDR range", expectation);
  return v.pipe(
    v.array(v.pipe(v.string(each), v.check(isReceiverAllowEntry, each)), rule("is not a list", expectation)),
    v.maxLength(100, rule("has more than 100 entries", expectation)),
    settingType("list of host names, IP addresses or CIDR ranges"),
  );
}

/** A From header value: `address@domain` or `Display Name <address@domain>`, on one line. */
export function mailFrom() {
  const m = rule(
    "is not a sender address",
    "an address such as no-reply@example.com or Example <no-reply@example.com>",
  );
  return v.pipe(
    v.string(m),
    v.regex(/^(?:[^\r\n<>@]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/, m),
    settingType("sender address"),
  );
}

/** The `email` field of a settings schema. */
export function email() {
  const m = rule("is not an email address", "an email address such as admin@example.com");
  return v.pipe(v.string(m), v.regex(/^[^\s@]+@[^\s@]+$/, m), settingType("email address"));
}

/** A yes/no setting as a file or the environment gives it. */
export type FlagInput = boolean | "true" | "false";

/** True when `A` and `B` are the same type (the settings modules check their written-out types with it). */
export type Exactly<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true
  : false;
