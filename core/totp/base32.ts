/**
 * RFC 4648 base32 (alphabet `A-Z2-7`), the encoding authenticator apps expect for TOTP
 * secrets in `otpauth://` URIs and for manual entry.
 *
 * @module
 */

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const VALUES: Readonly<Record<string, number>> = Object.fromEntries(
  [...ALPHABET].map((c, i) => [c, i]),
);

/**
 * Base32 of bytes, uppercase. Without padding by default (the form `otpauth://` URIs use);
 * `{ padding: true }` appends `=` to a multiple of 8 characters.
 */
export function encodeBase32(bytes: Uint8Array, options: { padding?: boolean } = {}): string {
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(buffer << (5 - bits)) & 31];
  if (options.padding) out += "=".repeat((8 - (out.length % 8)) % 8);
  return out;
}

/**
 * Bytes of base32 text. Lenient in what people type: case-insensitive, spaces and hyphens
 * ignored, trailing `=` padding optional. Throws `TypeError` on any other character, on a
 * length no encoder produces, or on non-zero trailing bits.
 */
export function decodeBase32(text: string): Uint8Array {
  const clean = text.replace(/[\s-]/g, "").replace(/=+$/, "").toUpperCase();
  // Lengths mod 8 that a whole number of bytes produces: 0, 2, 4, 5, 7.
  if ([1, 3, 6].includes(clean.length % 8)) throw new TypeError("invalid base32 length");
  const out = new Uint8Array(Math.floor((clean.length * 5) / 8));
  let buffer = 0;
  let bits = 0;
  let index = 0;
  for (const c of clean) {
    const value = VALUES[c];
    if (value === undefined) throw new TypeError("invalid base32 character");
    buffer = ((buffer << 5) | value) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out[index++] = (buffer >>> (bits - 8)) & 0xff;
      bits -= 8;
    }
  }
  if ((buffer & ((1 << bits) - 1)) !== 0) throw new TypeError("invalid base32 trailing bits");
  return out;
}
