/**
 * The TOTP core: RFC 4226 HOTP and RFC 6238 TOTP over HMAC-SHA1 (the default and what the
 * spec requires), HMAC-SHA256 or HMAC-SHA512, computed synchronously with @noble/hashes.
 *
 * A code is the HOTP value of the time step `floor(unixSeconds / stepSeconds)`, truncated to
 * `digits` decimal digits (so the 6-digit code is the last 6 digits of the 8-digit value).
 * {@link findTotpStep} checks a presented code against every step of the drift window in
 * constant time per candidate and returns the step it proved, which the caller records so that
 * the last accepted step only moves forward (spec 2.3, 5.1).
 *
 * @module
 */
import { hmac } from "@noble/hashes/hmac.js";
import { sha1 } from "@noble/hashes/legacy.js";
import { sha256, sha512 } from "@noble/hashes/sha2.js";
import { constantTimeEqual } from "../digest.ts";

/** The HMAC hash of a TOTP secret, named as `otpauth://` URIs name it. */
export type TotpAlgorithm = "SHA1" | "SHA256" | "SHA512";

/** The parameters of a TOTP credential. */
export interface TotpParameters {
  /** Code length, 6 to 8 (spec: 6). */
  readonly digits: number;
  /** Step length in seconds (spec: 30). */
  readonly stepSeconds: number;
  /** Steps accepted either side of the current one (spec: 1). */
  readonly driftSteps: number;
  /** HMAC hash (spec: SHA1). */
  readonly algorithm: TotpAlgorithm;
}

/** The spec's parameters (section 8): 6 digits, 30 s, drift of one step either way, HMAC-SHA1. */
export const DEFAULT_TOTP_PARAMETERS: TotpParameters = Object.freeze({
  digits: 6,
  stepSeconds: 30,
  driftSteps: 1,
  algorithm: "SHA1",
});

const HASHES = { SHA1: sha1, SHA256: sha256, SHA512: sha512 } as const;

function checkParameters(p: Pick<TotpParameters, "digits" | "algorithm">): void {
  if (!Number.isInteger(p.digits) || p.digits < 6 || p.digits > 8) {
    throw new RangeError("TOTP digits must be 6, 7 or 8");
  }
  if (!(p.algorithm in HASHES)) throw new RangeError(`unknown TOTP algorithm ${p.algorithm}`);
}

/**
 * RFC 4226 HOTP: the `digits`-digit code of `counter` (a non-negative safe integer) under
 * `secret`, zero-padded.
 */
export function hotp(
  secret: Uint8Array,
  counter: number,
  options: Pick<TotpParameters, "digits" | "algorithm"> = DEFAULT_TOTP_PARAMETERS,
): string {
  checkParameters(options);
  if (!Number.isSafeInteger(counter) || counter < 0) throw new RangeError("HOTP counter out of range");
  const message = new Uint8Array(8);
  const view = new DataView(message.buffer);
  view.setUint32(0, Math.floor(counter / 2 ** 32));
  view.setUint32(4, counter >>> 0);
  const mac = hmac(HASHES[options.algorithm], secret, message);
  // Dynamic truncation (RFC 4226 section 5.3).
  const offset = mac[mac.length - 1] & 0x0f;
  const binary = ((mac[offset] & 0x7f) << 24) | (mac[offset + 1] << 16) | (mac[offset + 2] << 8) |
    mac[offset + 3];
  return String(binary % 10 ** options.digits).padStart(options.digits, "0");
}

/** The TOTP time step of an instant: `floor(unixSeconds / stepSeconds)`. */
export function totpStep(timeMs: number, stepSeconds = DEFAULT_TOTP_PARAMETERS.stepSeconds): number {
  if (!Number.isInteger(stepSeconds) || stepSeconds <= 0) throw new RangeError("TOTP step must be positive");
  return Math.floor(Math.floor(timeMs / 1000) / stepSeconds);
}

/** The TOTP code at an instant (milliseconds since the epoch). */
export function totpCode(
  secret: Uint8Array,
  timeMs: number,
  parameters: Partial<TotpParameters> = {},
): string {
  const p = { ...DEFAULT_TOTP_PARAMETERS, ...parameters };
  return hotp(secret, totpStep(timeMs, p.stepSeconds), p);
}

/**
 * A presented code as svc compares it: whitespace removed (apps show `123 456`); null when the
 * rest is not exactly `digits` ASCII digits.
 */
export function normalizeTotpCode(code: string, digits = DEFAULT_TOTP_PARAMETERS.digits): string | null {
  const clean = code.replace(/\s/g, "");
  return clean.length === digits && /^[0-9]+$/.test(clean) ? clean : null;
}

/**
 * The steps of the drift window around `timeMs` (current step ± `driftSteps`) whose code is
 * `code`, oldest first. Every candidate is computed and compared in constant time, so the
 * time taken does not depend on which step (if any) matched.
 */
export function matchingTotpSteps(
  secret: Uint8Array,
  code: string,
  timeMs: number,
  parameters: Partial<TotpParameters> = {},
): number[] {
  const p = { ...DEFAULT_TOTP_PARAMETERS, ...parameters };
  if (!Number.isInteger(p.driftSteps) || p.driftSteps < 0) throw new RangeError("TOTP drift must be >= 0");
  const presented = normalizeTotpCode(code, p.digits);
  // A malformed code still costs the same work as a wrong one.
  const compared = presented ?? "x".repeat(p.digits);
  const current = totpStep(timeMs, p.stepSeconds);
  const matches: number[] = [];
  for (let step = current - p.driftSteps; step <= current + p.driftSteps; step++) {
    if (step < 0) continue;
    if (constantTimeEqual(hotp(secret, step, p), compared) && presented !== null) matches.push(step);
  }
  return matches;
}

/**
 * The step a presented code proves at `timeMs`: the oldest step of the drift window whose code
 * matches and which is greater than `after` (the last accepted step; null or absent: none).
 * Null when no such step exists. Returning the oldest eligible step spends as little of the
 * future as possible.
 */
export function findTotpStep(
  secret: Uint8Array,
  code: string,
  timeMs: number,
  parameters: Partial<TotpParameters> = {},
  after: number | null = null,
): number | null {
  const eligible = matchingTotpSteps(secret, code, timeMs, parameters).filter((s) =>
    after === null || s > after
  );
  return eligible[0] ?? null;
}
