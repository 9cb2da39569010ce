/**
 * TOTP for browser tests, computed here with node:crypto from RFC 6238 (SHA-1, 6 digits, 30 s),
 * not with svc's implementation, so a test proves svc against the RFC.
 *
 * @module
 */
import { createHmac } from "node:crypto";

/** The bytes of a base32 (RFC 4648) secret as an otpauth URI carries it. */
export function base32(text: string): Uint8Array {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = "";
  for (const ch of text.replace(/=+$/, "").toUpperCase()) {
    bits += alphabet.indexOf(ch).toString(2).padStart(5, "0");
  }
  const out = new Uint8Array(Math.floor(bits.length / 8));
  for (let i = 0; i < out.length; i++) out[i] = parseInt(bits.slice(i * 8, i * 8 + 8), 2);
  return out;
}

/** RFC 6238 TOTP (SHA-1, 6 digits, 30 s) of `step`. */
export function totp(secret: Uint8Array, step: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac("sha1", secret).update(counter).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  const value = (mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000;
  return String(value).padStart(6, "0");
}

/** Codes of strictly increasing steps within the ±1 drift window (svc refuses a replayed step). */
export function totpCodes(secret: Uint8Array): () => Promise<string> {
  let last = -Infinity;
  return async (): Promise<string> => {
    for (;;) {
      const now = Math.floor(Date.now() / 30_000);
      const step = Math.max(last + 1, now);
      if (step <= now + 1) {
        last = step;
        return totp(secret, step);
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  };
}
