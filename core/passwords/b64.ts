/**
 * The base64 dialects of stored password hashes, decoded strictly: PHC "B64"
 * (standard alphabet, no padding), passlib's "ab64" (`.` for `+`, no padding) and
 * padded standard base64 (ASP.NET Core Identity). A string that is not the canonical
 * encoding of its bytes (stray characters, whitespace, padding where none belongs,
 * non-zero trailing bits) decodes to `null`, so a malformed hash never verifies.
 *
 * @module
 */
import { fromBase64, toBase64 } from "../encoding.ts";

const UNPADDED = /^[A-Za-z0-9+/]*$/;
const PADDED = /^[A-Za-z0-9+/]*={0,2}$/;

/** PHC B64 (standard alphabet, no padding) of bytes. */
export function toPhcB64(bytes: Uint8Array): string {
  return toBase64(bytes).replace(/=+$/, "");
}

/** Bytes of PHC B64, or null when the text is not canonical unpadded base64. */
export function fromPhcB64(text: string): Uint8Array | null {
  if (!UNPADDED.test(text) || text.length % 4 === 1) return null;
  return canonical(text, (bytes) => toPhcB64(bytes));
}

/** Bytes of passlib's ab64 (`./` alphabet tail, no padding), or null when malformed. */
export function fromAb64(text: string): Uint8Array | null {
  if (text.includes("+")) return null;
  return fromPhcB64(text.replace(/\./g, "+"));
}

/** Bytes of padded standard base64, or null when malformed. */
export function fromPaddedBase64(text: string): Uint8Array | null {
  if (!PADDED.test(text) || text.length % 4 !== 0) return null;
  return canonical(text, toBase64);
}

function canonical(text: string, encode: (bytes: Uint8Array) => string): Uint8Array | null {
  let bytes: Uint8Array;
  try {
    bytes = fromBase64(text);
  } catch {
    return null;
  }
  return encode(bytes) === text ? bytes : null;
}
