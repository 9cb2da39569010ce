/**
 * PBKDF2 (RFC 8018) through WebCrypto, shared by the `pbkdf2-sha256` and
 * `framework-identity-v3` verifiers. WebCrypto runs the iterations natively (off the
 * JavaScript thread on Deno and Node), so the legacy verifiers stay cheap for the
 * event loop even where no worker pool is in use.
 *
 * @module
 */

/** The PRFs the legacy formats use. */
export type Pbkdf2Hash = "SHA-1" | "SHA-256" | "SHA-512";

/** Largest iteration count a stored hash may ask for (a bound against hostile imports). */
export const MAX_PBKDF2_ITERATIONS = 10_000_000;

/** `length` bytes of PBKDF2-HMAC-`hash`(password, salt, iterations). */
export async function pbkdf2(
  hash: Pbkdf2Hash,
  password: Uint8Array,
  salt: Uint8Array,
  iterations: number,
  length: number,
): Promise<Uint8Array> {
  if (!Number.isSafeInteger(iterations) || iterations < 1 || iterations > MAX_PBKDF2_ITERATIONS) {
    throw new RangeError("PBKDF2 iteration count out of range");
  }
  if (!Number.isSafeInteger(length) || length < 1 || length > 1024) {
    throw new RangeError("PBKDF2 output length out of range");
  }
  const key = await crypto.subtle.importKey("raw", password as BufferSource, "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits(
    { name: "PBKDF2", hash, salt: salt as BufferSource, iterations },
    key,
    length * 8,
  );
  return new Uint8Array(bits);
}
