/**
 * The verify-only `framework-identity-v3` algorithm: hashes made by ASP.NET Core
 * Identity's `PasswordHasher<TUser>`, base64 (padded) of
 *
 * - V3, marker `0x01`: PRF (uint32 big-endian: 0 HMAC-SHA1, 1 HMAC-SHA256, 2 HMAC-SHA512),
 *   iteration count (uint32 BE), salt length (uint32 BE, at least 16), the salt, then the
 *   subkey (the rest of the payload, at least 16 bytes);
 * - V2, marker `0x00`: PBKDF2-HMAC-SHA1, 1000 iterations, a 16-byte salt then a 32-byte
 *   subkey, nothing more.
 *
 * The checks follow `VerifyHashedPasswordV2`/`V3` of the original, which answers
 * "failed" to anything malformed.
 *
 * @module
 */
import { constantTimeEqual } from "../digest.ts";
import { fromPaddedBase64 } from "./b64.ts";
import { passwordBytes, type PasswordInput } from "./password-bytes.ts";
import { MAX_PBKDF2_ITERATIONS, pbkdf2, type Pbkdf2Hash } from "./pbkdf2.ts";

/** The algorithm tag. */
export const FRAMEWORK_IDENTITY_V3_TAG = "framework-identity-v3";

/** A parsed ASP.NET Core Identity hash. */
export interface AspNetIdentityHash {
  /** The format marker: V2 (PBKDF2-HMAC-SHA1, 1000 iterations) or V3 (PRF and iterations in the header). */
  readonly version: 2 | 3;
  /** The PBKDF2 pseudo-random function. */
  readonly prf: Pbkdf2Hash;
  /** PBKDF2 iterations. */
  readonly iterations: number;
  /** The salt. */
  readonly salt: Uint8Array;
  /** The derived key. */
  readonly subkey: Uint8Array;
}

const PRFS: readonly Pbkdf2Hash[] = ["SHA-1", "SHA-256", "SHA-512"];

/** Parses a V2 or V3 payload; null when malformed. */
export function parseAspNetIdentityHash(encoded: string): AspNetIdentityHash | null {
  const bytes = fromPaddedBase64(encoded);
  if (!bytes || bytes.length === 0) return null;
  if (bytes[0] === 0x00) {
    if (bytes.length !== 1 + 16 + 32) return null;
    return { version: 2, prf: "SHA-1", iterations: 1000, salt: bytes.slice(1, 17), subkey: bytes.slice(17) };
  }
  if (bytes[0] !== 0x01 || bytes.length < 13) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const prf = PRFS[view.getUint32(1)];
  const iterations = view.getUint32(5);
  const saltLength = view.getUint32(9);
  if (!prf || iterations < 1 || iterations > MAX_PBKDF2_ITERATIONS) return null;
  if (saltLength < 16 || saltLength > bytes.length - 13) return null;
  const subkeyLength = bytes.length - 13 - saltLength;
  if (subkeyLength < 16 || subkeyLength > 1024) return null;
  return {
    version: 3,
    prf,
    iterations,
    salt: bytes.slice(13, 13 + saltLength),
    subkey: bytes.slice(13 + saltLength),
  };
}

/** Whether the password matches the ASP.NET Core Identity hash (false when malformed). */
export async function verifyAspNetIdentity(password: PasswordInput, encoded: string): Promise<boolean> {
  const parsed = parseAspNetIdentityHash(encoded);
  if (!parsed) return false;
  const actual = await pbkdf2(
    parsed.prf,
    passwordBytes(password),
    parsed.salt,
    parsed.iterations,
    parsed.subkey.length,
  );
  return constantTimeEqual(actual, parsed.subkey);
}
