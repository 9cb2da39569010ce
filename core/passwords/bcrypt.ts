/**
 * The verify-only `bcrypt` algorithm: `$2a$`, `$2b$` and `$2y$` hashes (never minted),
 * checked with hash-wasm's WebAssembly build of Openwall's crypt_blowfish, which keeps
 * crypt_blowfish's `$2a$` countermeasure for the old sign-extension bug. `$2x$` (the
 * buggy variant) and every other prefix are refused.
 *
 * The key is what C's `crypt(3)` sees: the bytes up to the first NUL, at most 72 of
 * them (bcrypt ignores the rest). hash-wasm is imported on the first bcrypt check (a server
 * that imported no bcrypt hashes never holds it).
 *
 * @module
 */
import { passwordBytes, type PasswordInput } from "./password-bytes.ts";

/** The algorithm tag. */
export const BCRYPT_TAG = "bcrypt";

const BCRYPT = /^\$2[aby]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}$/;

/** Whether the string is a well-formed `$2a$`/`$2b$`/`$2y$` hash. */
export function isBcryptHash(encoded: string): boolean {
  return BCRYPT.test(encoded);
}

/** Whether the password matches the bcrypt hash (false when malformed or of another variant). */
export async function verifyBcrypt(password: PasswordInput, encoded: string): Promise<boolean> {
  if (!isBcryptHash(encoded)) return false;
  let key = passwordBytes(password);
  const nul = key.indexOf(0);
  if (nul >= 0) key = key.subarray(0, nul);
  if (key.length > 72) key = key.subarray(0, 72);
  // crypt_blowfish cycles the key with its NUL terminator; an empty key is therefore all
  // zero bytes, exactly the key of the one-byte password "\0" (hash-wasm refuses empty input).
  if (key.length === 0) key = new Uint8Array(1);
  const { bcryptVerify } = await import("hash-wasm");
  try {
    return await bcryptVerify({ password: key, hash: encoded });
  } catch {
    return false;
  }
}
