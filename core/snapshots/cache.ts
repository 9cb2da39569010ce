/**
 * A bounded cache with a time-to-live and least-recently-used eviction. Time comes from
 * the injected clock, so expiry is tested without sleeping.
 *
 * @module
 */
import type { Clock } from "../clock.ts";

/** Sizing of a {@link TtlLruCache}; either bound at 0 disables caching. */
export interface TtlLruOptions {
  /** How long an entry lives, in milliseconds. */
  ttlMs: number;
  /** How many entries are kept at most. */
  maxEntries: number;
}

/**
 * A map whose entries expire after `ttlMs` and whose least recently used entry is evicted
 * beyond `maxEntries`.
 *
 * @example
 * ```ts
 * import { systemClock as clock, TtlLruCache } from "@svc/svc";
 *
 * const cache = new TtlLruCache<string, number>(clock, { ttlMs: 60_000, maxEntries: 1000 });
 * cache.set("a", 1);
 * cache.get("a"); // 1, until a minute passes or 1000 newer entries push it out
 * ```
 */
export class TtlLruCache<K, V> {
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  /** Map iteration order is insertion order: the first key is the least recently used. */
  readonly #entries = new Map<K, { value: V; expiresAt: number }>();

  /** An empty cache on `clock`; throws a RangeError when either bound is negative or not a number. */
  constructor(clock: Clock, options: TtlLruOptions) {
    if (!(options.ttlMs >= 0) || !(options.maxEntries >= 0)) {
      throw new RangeError("ttlMs and maxEntries must be non-negative numbers");
    }
    this.#clock = clock;
    this.#ttlMs = options.ttlMs;
    this.#maxEntries = Math.floor(options.maxEntries);
  }

  /** Whether the cache keeps anything at all. */
  get enabled(): boolean {
    return this.#ttlMs > 0 && this.#maxEntries > 0;
  }

  /** The number of entries held (expired ones included until touched). */
  get size(): number {
    return this.#entries.size;
  }

  /** The live value of `key`, refreshing its recency; undefined when absent or expired. */
  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    if (entry.expiresAt <= this.#clock.now()) return undefined;
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Stores `value` under `key`, evicting the least recently used entries beyond the bound. */
  set(key: K, value: V): void {
    if (!this.enabled) return;
    this.#entries.delete(key);
    this.#entries.set(key, { value, expiresAt: this.#clock.now() + this.#ttlMs });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value as K;
      this.#entries.delete(oldest);
    }
  }

  /** Removes one key. */
  delete(key: K): boolean {
    return this.#entries.delete(key);
  }

  /** Removes every key for which `predicate` holds. */
  deleteWhere(predicate: (key: K) => boolean): number {
    let removed = 0;
    for (const key of [...this.#entries.keys()]) {
      if (predicate(key)) {
        this.#entries.delete(key);
        removed++;
      }
    }
    return removed;
  }

  /** Removes everything. */
  clear(): void {
    this.#entries.clear();
  }
}
