/**
 * Webhook signatures (spec 2.8): `X-Svc-Signature: t=<unix seconds>,v1=<hex>` where the hex is
 * HMAC-SHA256 keyed with the endpoint secret (the whole `whsec_…` string, as UTF-8) over
 * `"<t>.<raw body>"`. While a rotated-out secret is still inside its overlap window, the
 * header carries one `v1=` value per secret (current first). This is the scheme Stripe's
 * verifiers accept. Web Crypto only; comparisons are constant-time.
 *
 * @module
 */
import { constantTimeEqual } from "../digest.ts";
import { toHex, utf8 } from "../encoding.ts";

/** The header carrying the signature. */
export const SIGNATURE_HEADER = "X-Svc-Signature";
/** The header carrying the event kind. */
export const EVENT_HEADER = "X-Svc-Event";
/** The header carrying the delivery id, the receiver's idempotency key (stable across retries). */
export const DELIVERY_HEADER = "X-Svc-Delivery";
/** The prefix of every endpoint secret. */
export const WEBHOOK_SECRET_PREFIX = "whsec_";
/** The default accepted age of a signature timestamp, in seconds (spec 8: 5 minutes). */
export const DEFAULT_SIGNATURE_TOLERANCE_SECONDS = 300;

const encoder = new TextEncoder();

async function hmacHex(secret: string, message: string | Uint8Array<ArrayBuffer>): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return toHex(
    new Uint8Array(
      await crypto.subtle.sign("HMAC", key, typeof message === "string" ? encoder.encode(message) : message),
    ),
  );
}

/**
 * The `X-Svc-Signature` value for a body: `t=<timestamp>,v1=<hex>[,v1=<hex>…]`, one `v1`
 * per secret, in the order given.
 */
export async function signWebhookPayload(
  body: string,
  secrets: readonly string[],
  timestampSeconds: number,
): Promise<string> {
  if (secrets.length === 0) throw new TypeError("At least one secret is needed to sign.");
  const t = Math.floor(timestampSeconds);
  const values = await Promise.all(secrets.map((s) => hmacHex(s, `${t}.${body}`)));
  return [`t=${t}`, ...values.map((v) => `v1=${v}`)].join(",");
}

/** Why a signature was refused. */
export type WebhookSignatureFailure =
  | "missing_header"
  | "malformed_header"
  | "timestamp_outside_tolerance"
  | "no_matching_signature";

/** The outcome of {@link verifyWebhookSignature}. */
export type WebhookSignatureResult =
  | { readonly ok: true; readonly timestamp: number }
  | { readonly ok: false; readonly reason: WebhookSignatureFailure };

/** What {@link verifyWebhookSignature} checks. */
export interface VerifyWebhookSignatureInput {
  /** The raw request body, exactly as received (before any JSON parsing). */
  readonly body: string | Uint8Array<ArrayBuffer>;
  /** The `X-Svc-Signature` header value (null or undefined when absent). */
  readonly header: string | null | undefined;
  /** The endpoint secret, or several (during your own rotation): any one may match. */
  readonly secret: string | readonly string[];
  /** Accepted age (and clock skew) of the timestamp, in seconds; default 300. */
  readonly toleranceSeconds?: number;
  /** The receiver's current time in milliseconds; default `Date.now()`. */
  readonly now?: number;
}

/**
 * Verifies a signed svc webhook on the receiving side: parses `t=` and every `v1=` of the
 * header, refuses a timestamp more than `toleranceSeconds` away from now (replay window), and
 * accepts when any `v1` equals the HMAC of `"<t>.<body>"` under any given secret (compared in
 * constant time). Deduplicate deliveries by `X-Svc-Delivery`: retries repeat it.
 */
export async function verifyWebhookSignature(
  input: VerifyWebhookSignatureInput,
): Promise<WebhookSignatureResult> {
  const header = input.header;
  if (header === null || header === undefined || header.trim() === "") {
    return { ok: false, reason: "missing_header" };
  }
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const part of header.split(",")) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === "t") {
      if (!/^\d{1,15}$/.test(value)) return { ok: false, reason: "malformed_header" };
      timestamp = Number(value);
    } else if (key === "v1" && /^[0-9a-fA-F]{64}$/.test(value)) {
      signatures.push(value.toLowerCase());
    }
  }
  if (timestamp === null || signatures.length === 0) return { ok: false, reason: "malformed_header" };
  const tolerance = input.toleranceSeconds ?? DEFAULT_SIGNATURE_TOLERANCE_SECONDS;
  const nowSeconds = Math.floor((input.now ?? Date.now()) / 1000);
  if (Math.abs(nowSeconds - timestamp) > tolerance) {
    return { ok: false, reason: "timestamp_outside_tolerance" };
  }
  const body = typeof input.body === "string" ? encoder.encode(input.body) : input.body;
  const signed = new Uint8Array(String(timestamp).length + 1 + body.length);
  signed.set(encoder.encode(`${timestamp}.`));
  signed.set(body, String(timestamp).length + 1);
  const secrets = typeof input.secret === "string" ? [input.secret] : input.secret;
  let matched = false;
  for (const secret of secrets) {
    const expected = utf8(await hmacHex(secret, signed));
    // Every candidate is compared, so timing does not reveal which one matched.
    for (const candidate of signatures) matched = constantTimeEqual(expected, utf8(candidate)) || matched;
  }
  return matched ? { ok: true, timestamp } : { ok: false, reason: "no_matching_signature" };
}
