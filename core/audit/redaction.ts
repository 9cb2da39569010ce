/**
 * Redaction of a person's email addresses, IP addresses and names inside free text and webhook
 * bodies, for erasure (spec 6): every occurrence becomes `[erased]`. An occurrence counts only as a
 * whole token (`10.0.0.1` is not found in `10.0.0.12`, `ada@example.test` not in
 * `lada@example.test`, the name `Ada` not in `Adam`); addresses and names match case-insensitively
 * and also in their HTML- and JSON-escaped forms.
 *
 * @module
 */
import { formatIp, parseIp } from "../net/ip.ts";
import { escapeHtml } from "../mail/messages.ts";

/** What an erased occurrence becomes. */
export const ERASED = "[erased]";

/** Names shorter than this (in characters) are not searched for: they cannot be told from ordinary words. */
export const MIN_NAME_LENGTH = 3;

/** The person whose traces are redacted. */
export interface PersonalTraces {
  /** Every address the person had. */
  readonly emails: readonly string[];
  /** Every IP address recorded for them. */
  readonly ipAddresses: readonly string[];
  /** Every display name they had (issue 25: it shows in other people's mail). */
  readonly names?: readonly string[];
}

/** A compiled redaction of one person's traces. */
export interface Redaction {
  /** The strings a store searches for (case-insensitive substrings) to find candidates. */
  readonly needles: readonly string[];
  /** `text` with every occurrence replaced by {@link ERASED}. */
  text(text: string): string;
  /** A JSON text with every occurrence in its keys and strings replaced; text that is not JSON is redacted as text. */
  json(text: string): string;
  /**
   * A webhook body (JSON) with every occurrence replaced; when the body is about `userId` its
   * `data` is emptied, as the user's own ledger entries are. Text that is not JSON is redacted as text.
   */
  webhookBody(payload: string, userId: string): string;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Compiles the redaction of `traces`. */
export function redaction(traces: PersonalTraces): Redaction {
  const emails = new Set<string>();
  for (const email of traces.emails) {
    const e = email.trim();
    if (e === "") continue;
    emails.add(e).add(escapeHtml(e)).add(JSON.stringify(e).slice(1, -1));
  }
  const ips = new Set<string>();
  for (const ip of traces.ipAddresses) {
    const text = ip.trim();
    if (text === "") continue;
    ips.add(text);
    const parsed = parseIp(text);
    if (parsed) ips.add(formatIp(parsed));
  }
  const names = new Set<string>();
  for (const name of traces.names ?? []) {
    const n = name.trim().replace(/\s+/g, " ");
    // Shorter than 3 characters a name cannot be told from ordinary words ("Al", "Jo").
    if ([...n].length < MIN_NAME_LENGTH) continue;
    names.add(n).add(escapeHtml(n)).add(JSON.stringify(n).slice(1, -1));
  }
  const alternatives = [
    ...[...emails].map((e) => `(?<![A-Za-z0-9._%+-])${escapeRegExp(e)}(?![A-Za-z0-9_%+-]|\\.[A-Za-z0-9])`),
    ...[...ips].map((ip) => `(?<![0-9A-Fa-f:.])${escapeRegExp(ip)}(?![0-9A-Fa-f:]|\\.[0-9])`),
    // Longest first, so that "Ada Lovelace" is erased whole rather than "Ada" inside it.
    ...[...names].sort((a, b) => b.length - a.length).map((n) =>
      `(?<![\\p{L}\\p{N}_])${escapeRegExp(n).replaceAll(" ", "\\s+")}(?![\\p{L}\\p{N}_])`
    ),
  ];
  const pattern = alternatives.length === 0 ? null : new RegExp(alternatives.join("|"), "giu");
  const text = (input: string) => pattern === null ? input : input.replace(pattern, ERASED);
  const walk = (value: unknown): unknown => {
    if (typeof value === "string") return text(value);
    if (Array.isArray(value)) return value.map(walk);
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [text(k), walk(v)]));
    }
    return value;
  };
  return {
    needles: [...emails, ...ips, ...names],
    text,
    json(input) {
      let value: unknown;
      try {
        value = JSON.parse(input);
      } catch {
        return text(input);
      }
      const walked = JSON.stringify(walk(value));
      return walked === JSON.stringify(value) ? input : walked;
    },
    webhookBody(payload, userId) {
      let body: unknown;
      try {
        body = JSON.parse(payload);
      } catch {
        return text(payload);
      }
      if (body !== null && typeof body === "object" && !Array.isArray(body)) {
        const record = body as Record<string, unknown>;
        if (record.userId === userId && "data" in record) body = { ...record, data: {} };
      }
      return JSON.stringify(walk(body));
    },
  };
}
