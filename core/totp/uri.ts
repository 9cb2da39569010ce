/**
 * `otpauth://totp/…` key URIs (the de-facto "Key Uri Format" authenticator apps read from a
 * QR code): `otpauth://totp/Issuer:account?secret=BASE32&issuer=Issuer&algorithm=SHA1&digits=6&period=30`.
 *
 * @module
 */
import { ValidationError } from "../errors.ts";
import { decodeBase32, encodeBase32 } from "./base32.ts";
import { DEFAULT_TOTP_PARAMETERS, type TotpAlgorithm } from "./totp.ts";

/** What an `otpauth://totp` URI says. */
export interface OtpauthUriInput {
  /** The service name shown by the app (label prefix and `issuer` parameter). No colon. */
  readonly issuer: string;
  /** The account within the issuer, usually the email address. No colon. */
  readonly account: string;
  /** The raw secret bytes, or its base32 text. */
  readonly secret: Uint8Array | string;
  /** Default 6. */
  readonly digits?: number;
  /** Step in seconds; default 30. */
  readonly period?: number;
  /** Default SHA1. */
  readonly algorithm?: TotpAlgorithm;
}

/** A parsed `otpauth://totp` URI. */
export interface OtpauthUri {
  /** The issuer: the `issuer` parameter, else the label prefix (empty when neither). */
  readonly issuer: string;
  /** The account part of the label, trimmed. */
  readonly account: string;
  /** The secret's bytes. */
  readonly secret: Uint8Array;
  /** Code length, 6 to 8 (default 6). */
  readonly digits: number;
  /** Step in seconds (default 30). */
  readonly period: number;
  /** HMAC hash: SHA1 (default), SHA256 or SHA512. */
  readonly algorithm: TotpAlgorithm;
}

function checkLabelPart(name: string, value: string): void {
  // deno-lint-ignore no-control-regex
  if (value.trim() === "" || value.includes(":") || /[\u0000-\u001f]/.test(value)) {
    throw new ValidationError(`The TOTP ${name} must be non-empty text without a colon.`, { field: name });
  }
}

/**
 * Builds the key URI. Label parts and parameters are percent-encoded (spaces as `%20`, which
 * every app reads; `+` is not). Throws `ValidationError` on an empty issuer or account or one
 * containing a colon (the label separator).
 */
export function buildOtpauthUri(input: OtpauthUriInput): string {
  checkLabelPart("issuer", input.issuer);
  checkLabelPart("account", input.account);
  const secret = typeof input.secret === "string"
    ? encodeBase32(decodeBase32(input.secret))
    : encodeBase32(input.secret);
  const digits = input.digits ?? DEFAULT_TOTP_PARAMETERS.digits;
  const period = input.period ?? DEFAULT_TOTP_PARAMETERS.stepSeconds;
  const algorithm = input.algorithm ?? DEFAULT_TOTP_PARAMETERS.algorithm;
  const e = encodeURIComponent;
  const label = `${e(input.issuer)}:${e(input.account)}`;
  return `otpauth://totp/${label}?secret=${secret}&issuer=${e(input.issuer)}&algorithm=${algorithm}` +
    `&digits=${digits}&period=${period}`;
}

/**
 * Parses an `otpauth://totp` URI (for tests and import). Missing parameters take the defaults;
 * the issuer comes from the `issuer` parameter, else the label prefix. Throws
 * `ValidationError` on anything that is not a TOTP key URI with a secret.
 */
export function parseOtpauthUri(uri: string): OtpauthUri {
  const bad = (why: string) => new ValidationError(`Not a TOTP key URI: ${why}.`);
  const match = /^otpauth:\/\/totp\/([^?]*)(?:\?(.*))?$/i.exec(uri);
  if (!match) throw bad("expected otpauth://totp/<label>?<parameters>");
  const label = decodeURIComponent(match[1]);
  const params = new URLSearchParams(match[2] ?? "");
  const colon = label.indexOf(":");
  const labelIssuer = colon >= 0 ? label.slice(0, colon) : "";
  const account = (colon >= 0 ? label.slice(colon + 1) : label).trim();
  const secretText = params.get("secret");
  if (!secretText) throw bad("no secret");
  let secret: Uint8Array;
  try {
    secret = decodeBase32(secretText);
  } catch {
    throw bad("the secret is not base32");
  }
  const algorithm = (params.get("algorithm") ?? "SHA1").toUpperCase();
  if (algorithm !== "SHA1" && algorithm !== "SHA256" && algorithm !== "SHA512") {
    throw bad("unknown algorithm");
  }
  const digits = Number(params.get("digits") ?? DEFAULT_TOTP_PARAMETERS.digits);
  const period = Number(params.get("period") ?? DEFAULT_TOTP_PARAMETERS.stepSeconds);
  if (!Number.isInteger(digits) || digits < 6 || digits > 8) throw bad("digits must be 6 to 8");
  if (!Number.isInteger(period) || period <= 0) throw bad("period must be a positive integer");
  return { issuer: params.get("issuer") ?? labelIssuer, account, secret, digits, period, algorithm };
}
