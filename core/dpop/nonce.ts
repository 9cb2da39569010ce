/**
 * Server-provided DPoP nonces (RFC 9449 section 8), stateless: a nonce is the number of a time
 * window and the HMAC-SHA-256 of that number under a server secret, so every instance sharing
 * the secret issues and accepts the same nonces without storing any. A nonce is accepted in its
 * own window and the next one (so one issued just before a rotation still works once), and
 * refused after that: the nonces rotate every `windowSeconds`.
 *
 * @module
 */
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { constantTimeEqual } from "../digest.ts";
import { toBase64Url, utf8 } from "../encoding.ts";

/** Default nonce rotation period, seconds. */
export const DEFAULT_NONCE_WINDOW_SECONDS = 300;

/** Issues and checks the nonces of one server secret. */
export class DpopNonces {
  readonly #secret: Uint8Array;
  readonly #windowMs: number;

  /** Nonces under `secret` (at least 32 bytes), rotating every `windowSeconds`. */
  constructor(secret: Uint8Array, windowSeconds: number = DEFAULT_NONCE_WINDOW_SECONDS) {
    if (secret.length < 32) throw new Error("DpopNonces: the secret needs at least 32 bytes");
    if (!(windowSeconds >= 1)) throw new Error("DpopNonces: the window is at least one second");
    this.#secret = secret;
    this.#windowMs = windowSeconds * 1000;
  }

  #mac(window: number): string {
    return toBase64Url(hmac(sha256, this.#secret, utf8(`svc-dpop-nonce:${window}`))).slice(0, 32);
  }

  /** The nonce to hand out at `now` (clock milliseconds). */
  current(now: number): string {
    const window = Math.floor(now / this.#windowMs);
    return `${window.toString(36)}.${this.#mac(window)}`;
  }

  /** Whether `nonce` is one of this secret's, of the current or the previous window, at `now`. */
  valid(nonce: string, now: number): boolean {
    const match = /^([0-9a-z]{1,12})\.([A-Za-z0-9_-]{32})$/.exec(nonce);
    if (match === null) return false;
    const window = parseInt(match[1], 36);
    const current = Math.floor(now / this.#windowMs);
    if (window !== current && window !== current - 1) return false;
    return constantTimeEqual(match[2], this.#mac(window));
  }
}
