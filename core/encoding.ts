/** Byte and text encodings shared across svc. */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** UTF-8 bytes of a string. */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** A string from UTF-8 bytes. */
export function fromUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** Each byte's two lower-case hex digits. */
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** Lowercase hex of bytes. */
export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i]];
  return out;
}

/** Bytes of a hex string; throws on odd length or a non-hex character. */
export function fromHex(hex: string): Uint8Array {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw new TypeError("invalid hex");
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
/** The two characters of every 12-bit value, in each alphabet. */
const pairs = (alphabet: string) =>
  Array.from({ length: 4096 }, (_, n) => alphabet[n >> 6] + alphabet[n & 63]);
const BASE64_PAIRS = pairs(BASE64);
const BASE64URL_PAIRS = pairs(BASE64URL);
/** Up to this many bytes are encoded through the tables; longer ones through `btoa`. */
const TABLE_MAX = 4096;

/**
 * Base64 of bytes through the 12-bit tables, without padding: a JWT's parts and ids are encoded
 * on every request, and `String.fromCharCode(...bytes)` then `btoa` then three replacements cost
 * several times this (Node's `btoa` checks every character in JavaScript).
 */
function encodeTable(bytes: Uint8Array, alphabet: string, table: readonly string[]): string {
  let out = "";
  const whole = bytes.length - (bytes.length % 3);
  for (let i = 0; i < whole; i += 3) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out += table[n >>> 12] + table[n & 4095];
  }
  if (bytes.length - whole === 1) {
    const n = bytes[whole];
    out += alphabet[n >> 2] + alphabet[(n & 3) << 4];
  } else if (bytes.length - whole === 2) {
    const n = (bytes[whole] << 8) | bytes[whole + 1];
    out += alphabet[n >> 10] + alphabet[(n >> 4) & 63] + alphabet[(n & 15) << 2];
  }
  return out;
}

/** Standard base64 (with padding) of bytes. */
export function toBase64(bytes: Uint8Array): string {
  if (bytes.length <= TABLE_MAX) {
    const out = encodeTable(bytes, BASE64, BASE64_PAIRS);
    return out + "=".repeat((4 - (out.length % 4)) % 4);
  }
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(s);
}

/** Bytes of standard base64 (padding optional). */
export function fromBase64(text: string): Uint8Array {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** base64url without padding. */
export function toBase64Url(bytes: Uint8Array): string {
  if (bytes.length <= TABLE_MAX) return encodeTable(bytes, BASE64URL, BASE64URL_PAIRS);
  return toBase64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Bytes of base64url (padding optional). */
export function fromBase64Url(text: string): Uint8Array {
  const s = text.replace(/-/g, "+").replace(/_/g, "/");
  return fromBase64(s + "=".repeat((4 - (s.length % 4)) % 4));
}
