/**
 * The refresh grace window's sealed successor. When a refresh token is rotated under a grace
 * window, its successor must be answerable again to whoever presents the rotated token within
 * the window, without the successor being stored in plaintext (a database reader must not get a
 * live token) and without any server-wide secret (svc has none to keep).
 *
 * Choice: the successor's 32 random bytes are stored XORed with a one-time pad derived from the
 * *rotated* token, `HMAC-SHA256(key = rotated token, "svc refresh grace successor v1")`. Only the
 * holder of the rotated token's plaintext can open it, which is exactly who the window serves;
 * the database keeps only the rotated token's SHA-256 (a different function of it), so the pad
 * cannot be computed from stored data. Each rotated token has one successor, so each pad is used
 * once. The opened successor is checked against the stored hash of the successor row (its
 * `parent_hash` is the rotated token), so a tampered or wrong seal opens to nothing usable.
 *
 * Rejected: deriving the successor deterministically from the presented token (an HMAC of it)
 * would let the thief of any one token compute all later ones; encrypting with the subject key
 * cipher costs a key read per rotation and ties refresh to erasure's crypto-shredding.
 *
 * @module
 */
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { fromBase64Url, toBase64Url, utf8 } from "../encoding.ts";
import { REFRESH_TOKEN_PREFIX } from "./refresh.ts";

const LABEL = utf8("svc refresh grace successor v1");
const SHAPE = /^srt_[A-Za-z0-9_-]{43}$/;

function pad(rotated: string): Uint8Array {
  return hmac(sha256, utf8(rotated), LABEL);
}

function xor(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i] ^ b[i];
  return out;
}

/** Seals `successor` (an `srt_` token) under the token it replaces. */
export function sealSuccessor(rotated: string, successor: string): string {
  if (!SHAPE.test(successor)) throw new Error("grace: not a refresh token");
  const bytes = fromBase64Url(successor.slice(REFRESH_TOKEN_PREFIX.length));
  return toBase64Url(xor(bytes, pad(rotated)));
}

/** Opens a seal with the presented (rotated) token; null when it is not a seal's shape. */
export function openSuccessor(rotated: string, sealed: string): string | null {
  let bytes: Uint8Array;
  try {
    bytes = fromBase64Url(sealed);
  } catch {
    return null;
  }
  if (bytes.length !== 32) return null;
  return `${REFRESH_TOKEN_PREFIX}${toBase64Url(xor(bytes, pad(rotated)))}`;
}
