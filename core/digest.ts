import { sha256 } from "@noble/hashes/sha2.js";
import { toHex, utf8 } from "./encoding.ts";

/**
 * SHA-256 of text or bytes as lowercase hex, computed synchronously with
 * @noble/hashes (WebCrypto's digest is async, and its round trip dominates for
 * the short inputs hashed on hot paths: tokens, codes, fingerprints).
 */
export function sha256Hex(input: string | Uint8Array): string {
  return toHex(sha256(typeof input === "string" ? utf8(input) : input));
}

/** SHA-256 bytes of text or bytes. */
export function sha256Bytes(input: string | Uint8Array): Uint8Array {
  return sha256(typeof input === "string" ? utf8(input) : input);
}

/**
 * Compares two byte strings or texts in time that depends only on their lengths,
 * never on where they differ. Use it for every secret, hash or MAC comparison.
 */
export function constantTimeEqual(a: string | Uint8Array, b: string | Uint8Array): boolean {
  const x = typeof a === "string" ? utf8(a) : a;
  const y = typeof b === "string" ? utf8(b) : b;
  let diff = x.length ^ y.length;
  const n = Math.max(x.length, y.length);
  for (let i = 0; i < n; i++) diff |= (x[i % (x.length || 1)] ?? 0) ^ (y[i % (y.length || 1)] ?? 0);
  return diff === 0;
}
