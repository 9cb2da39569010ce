/**
 * The verified-token cache: a token whose signature was checked once is not checked again
 * until it expires. Entries are keyed by the token's signature segment and hold the signing
 * input (header and payload) they were verified with; a hit requires the whole token to be
 * equal, so a known signature glued to another payload is never taken from the cache.
 *
 * @module
 */
import type { Clock } from "../clock.ts";
import type { TokenType } from "./types.ts";

interface Entry {
  readonly signingInput: string;
  readonly typ: TokenType;
  readonly claims: unknown;
  /** The key that verified it. */
  readonly kid: string;
  /** Milliseconds: the token's exp, or earlier when its key leaves the overlap window first. */
  readonly validUntil: number;
}

/**
 * A bounded map from verified tokens to their claims (LRU beyond `maxEntries`).
 *
 * @example
 * ```ts
 * import { systemClock as clock, VerifiedTokenCache } from "@svc/svc";
 *
 * const cache = new VerifiedTokenCache(clock, { maxEntries: 10_000 });
 * ```
 */
export class VerifiedTokenCache {
  readonly #clock: Clock;
  readonly #maxEntries: number;
  readonly #entries = new Map<string, Entry>();

  /** An empty cache on `clock`, holding at most `maxEntries` tokens (default 10 000). */
  constructor(clock: Clock, options: { maxEntries?: number } = {}) {
    this.#clock = clock;
    this.#maxEntries = options.maxEntries ?? 10_000;
  }

  /** Cached entries. */
  get size(): number {
    return this.#entries.size;
  }

  /** The claims and key id of a token verified before as `typ`, or undefined. */
  get(signingInput: string, signature: string, typ: TokenType): { claims: unknown; kid: string } | undefined {
    const entry = this.#entries.get(signature);
    if (entry === undefined) return undefined;
    if (entry.signingInput !== signingInput || entry.typ !== typ) return undefined;
    if (this.#clock.now() >= entry.validUntil) {
      this.#entries.delete(signature);
      return undefined;
    }
    // Most recently used last.
    this.#entries.delete(signature);
    this.#entries.set(signature, entry);
    return entry;
  }

  /** Remembers a verified token until `validUntil` (clock milliseconds). */
  set(
    signingInput: string,
    signature: string,
    typ: TokenType,
    verified: { claims: unknown; kid: string },
    validUntil: number,
  ): void {
    if (this.#maxEntries <= 0) return;
    this.#entries.delete(signature);
    this.#entries.set(signature, {
      signingInput,
      typ,
      claims: verified.claims,
      kid: verified.kid,
      validUntil,
    });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }

  /** Empties the cache. */
  clear(): void {
    this.#entries.clear();
  }
}
