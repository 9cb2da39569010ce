/**
 * The verify-only `pbkdf2-sha256` algorithm (PBKDF2-HMAC-SHA256), in its two stored forms:
 *
 * - canonical PHC: `$pbkdf2-sha256$i=<iterations>,l=<key length>$<salt>$<hash>`, B64
 *   without padding (the form of RustCrypto's `pbkdf2` crate; `,l=` may be omitted, the
 *   key length is then the decoded hash's);
 * - passlib's modular crypt form: `$pbkdf2-sha256$<rounds>$<ab64 salt>$<ab64 hash>`.
 *
 * @module
 */
import { constantTimeEqual } from "../digest.ts";
import { fromAb64, fromPhcB64 } from "./b64.ts";
import { passwordBytes, type PasswordInput } from "./password-bytes.ts";
import { MAX_PBKDF2_ITERATIONS, pbkdf2 } from "./pbkdf2.ts";

/** The algorithm tag. */
export const PBKDF2_SHA256_TAG = "pbkdf2-sha256";

/** A parsed pbkdf2-sha256 hash. */
export interface Pbkdf2Sha256Hash {
  /** The encoding: a PHC string (`$pbkdf2-sha256$i=…`) or passlib's (`$pbkdf2-sha256$<rounds>$…`). */
  readonly form: "phc" | "passlib";
  /** PBKDF2 iterations. */
  readonly iterations: number;
  /** The salt. */
  readonly salt: Uint8Array;
  /** The derived key. */
  readonly hash: Uint8Array;
}

const NUMBER = "([1-9][0-9]{0,9})";
const PHC = new RegExp(
  `^\\$pbkdf2-sha256\\$i=${NUMBER}(?:,l=${NUMBER})?\\$([A-Za-z0-9+/]*)\\$([A-Za-z0-9+/]+)$`,
);
const PASSLIB = new RegExp(`^\\$pbkdf2-sha256\\$${NUMBER}\\$([A-Za-z0-9./]*)\\$([A-Za-z0-9./]+)$`);

/** Parses either form; null when malformed (zero-padded numbers, bad base64, a length that disagrees…). */
export function parsePbkdf2Sha256(encoded: string): Pbkdf2Sha256Hash | null {
  let form: Pbkdf2Sha256Hash["form"];
  let iterations: number;
  let salt: Uint8Array | null;
  let hash: Uint8Array | null;
  let m = PHC.exec(encoded);
  if (m) {
    form = "phc";
    iterations = Number(m[1]);
    salt = fromPhcB64(m[3]);
    hash = fromPhcB64(m[4]);
    if (hash && m[2] !== undefined && Number(m[2]) !== hash.length) return null;
  } else if ((m = PASSLIB.exec(encoded))) {
    form = "passlib";
    iterations = Number(m[1]);
    salt = fromAb64(m[2]);
    hash = fromAb64(m[3]);
  } else {
    return null;
  }
  if (!salt || !hash || iterations > MAX_PBKDF2_ITERATIONS) return null;
  if (salt.length > 1024 || hash.length < 16 || hash.length > 1024) return null;
  return { form, iterations, salt, hash };
}

/** Whether the password matches the stored pbkdf2-sha256 hash (false when malformed). */
export async function verifyPbkdf2Sha256(password: PasswordInput, encoded: string): Promise<boolean> {
  const parsed = parsePbkdf2Sha256(encoded);
  if (!parsed) return false;
  const actual = await pbkdf2(
    "SHA-256",
    passwordBytes(password),
    parsed.salt,
    parsed.iterations,
    parsed.hash.length,
  );
  return constantTimeEqual(actual, parsed.hash);
}
