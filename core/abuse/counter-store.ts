/**
 * Counters of the abuse gate (spec 5.2 step 1). Two shapes:
 *
 * - a windowed counter: the first hit opens a window of `windowMs`; hits inside it add 1; the
 *   first hit after it ends starts a new window at 1 (a fixed window anchored at its first hit);
 * - a distinct set: members (already hashed by the gate) each stay counted for `windowMs` after
 *   they were last seen (a sliding window); its size is the number of live members.
 *
 * A windowed counter can also be used as a limited reservation: {@link CounterStore.reserve}
 * adds a hit only while the window holds fewer than `limit` (one atomic step, so concurrent
 * callers never get more than `limit` grants per window), and {@link CounterStore.release}
 * gives one back to the window it was taken from.
 *
 * Time comes from the injected clock, never from the store's host. Two implementations: the
 * in-memory store here (one instance of svc) and the SQL store of `storage/sql/abuse-counters.ts`
 * (every instance sharing one Postgres database).
 *
 * @module
 */
import type { Clock } from "../clock.ts";

/** A counter's state after a hit, or when read. */
export interface CounterValue {
  /** Hits in the current window (0 when there is none). */
  readonly count: number;
  /** When the current window ends (ms since the epoch); null when there is no live window. */
  readonly resetAt: number | null;
}

/** The answer of {@link CounterStore.reserve}. */
export interface CounterReservation {
  /** Whether the hit was added (the window held fewer than `limit` before it). */
  readonly granted: boolean;
  /** Granted: the count after this hit; refused: the count of the full window. */
  readonly count: number;
  /** When the window ends (ms since the epoch); null when unknown (refused and the window vanished). */
  readonly resetAt: number | null;
}

/** One reservation of {@link CounterStore.reserveAll}. */
export interface ReserveRequest {
  /** The counter's key. */
  readonly key: string;
  /** Hits allowed in the window. */
  readonly limit: number;
  /** The window's length in milliseconds. */
  readonly windowMs: number;
}

/** The distinct-set hit of {@link CounterStore.reserveAll}. */
export interface DistinctRequest {
  /** The set's key. */
  readonly key: string;
  /** The member to add (counted once per window). */
  readonly member: string;
  /** The window's length in milliseconds. */
  readonly windowMs: number;
}

/** Where the abuse gate keeps its counters. Every method may throw when the store is down. */
export interface CounterStore {
  /**
   * True when the counters are svc storage's `abuse_counters` table (the SQL store): a sign-in may
   * then clear the account's failures in the statement that records it (issue 29).
   */
  readonly inStorage?: boolean;
  /** Adds one hit to `key` atomically and returns the counter after it. */
  increment(key: string, windowMs: number): Promise<CounterValue>;
  /**
   * Adds one hit to `key` only if its live window holds fewer than `limit` hits (a window that
   * has ended restarts at 1), in one atomic step: concurrent calls never grant more than `limit`
   * hits per window.
   */
  reserve(key: string, limit: number, windowMs: number): Promise<CounterReservation>;
  /**
   * Takes one hit back from `key`, only from the window that ends at `resetAt` (the one the hit
   * was reserved in) and never below zero; returns whether a hit was taken back.
   */
  release(key: string, resetAt: number): Promise<boolean>;
  /** The counter of `key` without changing it. */
  peek(key: string): Promise<CounterValue>;
  /** Forgets the counter of `key` (for example, the failures of an account after a success). */
  reset(key: string): Promise<void>;
  /**
   * Records `member` in the distinct set `key` (seen now, live for `windowMs`) and returns how
   * many distinct live members the set holds, this one included.
   */
  addDistinct(key: string, member: string, windowMs: number): Promise<number>;
  /**
   * Optional: `reserve` of each request (distinct keys) and `addDistinct` of `distinct` in one
   * round trip, each with the guarantees of the single call; all fail together. A store without
   * it gets the single calls.
   */
  reserveAll?(
    reserves: readonly ReserveRequest[],
    distinct: DistinctRequest,
  ): Promise<{ reservations: CounterReservation[]; distinct: number }>;
  /** Deletes dead counters and members; returns how many were removed. */
  purgeExpired(): Promise<number>;
}

interface Window {
  count: number;
  resetAt: number;
}

/** Options of {@link MemoryCounterStore}. */
export interface MemoryCounterStoreOptions {
  readonly clock: Clock;
  /** Dead entries are swept after this many operations (default 10 000). */
  readonly sweepEvery?: number;
}

/**
 * Counters in process memory: right for a single instance (and tests). Dead entries are swept
 * every `sweepEvery` operations so that a flood of distinct keys does not grow without bound.
 */
export class MemoryCounterStore implements CounterStore {
  readonly #clock: Clock;
  readonly #sweepEvery: number;
  readonly #counters = new Map<string, Window>();
  readonly #sets = new Map<string, Map<string, number>>();
  #operations = 0;

  /** A store reading time from `options.clock`, sweeping dead entries every `sweepEvery` operations. */
  constructor(options: MemoryCounterStoreOptions) {
    this.#clock = options.clock;
    this.#sweepEvery = options.sweepEvery ?? 10_000;
  }

  /** Adds one hit to `key`, opening a new window of `windowMs` when none is live. */
  increment(key: string, windowMs: number): Promise<CounterValue> {
    const now = this.#tick();
    let window = this.#counters.get(key);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + windowMs };
      this.#counters.set(key, window);
    }
    window.count++;
    return Promise.resolve({ count: window.count, resetAt: window.resetAt });
  }

  /** Adds one hit only while the live window holds fewer than `limit`; with no live window and `limit` below 1, refuses with a null `resetAt`. */
  reserve(key: string, limit: number, windowMs: number): Promise<CounterReservation> {
    const now = this.#tick();
    let window = this.#counters.get(key);
    if (!window || window.resetAt <= now) {
      if (limit < 1) return Promise.resolve({ granted: false, count: 0, resetAt: null });
      window = { count: 0, resetAt: now + windowMs };
      this.#counters.set(key, window);
    }
    if (window.count >= limit) {
      return Promise.resolve({ granted: false, count: window.count, resetAt: window.resetAt });
    }
    window.count++;
    return Promise.resolve({ granted: true, count: window.count, resetAt: window.resetAt });
  }

  /** Takes one hit back, only from the live window ending at `resetAt` and only when its count is above zero. */
  release(key: string, resetAt: number): Promise<boolean> {
    const now = this.#tick();
    const window = this.#counters.get(key);
    if (!window || window.resetAt !== resetAt || window.resetAt <= now || window.count <= 0) {
      return Promise.resolve(false);
    }
    window.count--;
    return Promise.resolve(true);
  }

  /** The live window of `key`, or a count of 0 and null `resetAt` when there is none. */
  peek(key: string): Promise<CounterValue> {
    const now = this.#tick();
    const window = this.#counters.get(key);
    return Promise.resolve(
      window && window.resetAt > now ? { count: window.count, resetAt: window.resetAt } : {
        count: 0,
        resetAt: null,
      },
    );
  }

  /** Forgets both the counter and the distinct set of `key`. */
  reset(key: string): Promise<void> {
    this.#tick();
    this.#counters.delete(key);
    this.#sets.delete(key);
    return Promise.resolve();
  }

  /** Records `member` as seen now (keeping the later of its expiries), drops dead members, and returns the live count. */
  addDistinct(key: string, member: string, windowMs: number): Promise<number> {
    const now = this.#tick();
    let set = this.#sets.get(key);
    if (!set) this.#sets.set(key, set = new Map());
    set.set(member, Math.max(set.get(member) ?? 0, now + windowMs));
    let live = 0;
    for (const [m, expiresAt] of set) {
      if (expiresAt > now) live++;
      else set.delete(m);
    }
    return Promise.resolve(live);
  }

  /** Sweeps dead windows and members now; returns how many were removed. */
  purgeExpired(): Promise<number> {
    return Promise.resolve(this.#sweep(this.#clock.now()));
  }

  #tick(): number {
    const now = this.#clock.now();
    if (++this.#operations % this.#sweepEvery === 0) this.#sweep(now);
    return now;
  }

  #sweep(now: number): number {
    let removed = 0;
    for (const [key, window] of this.#counters) {
      if (window.resetAt <= now) {
        this.#counters.delete(key);
        removed++;
      }
    }
    for (const [key, set] of this.#sets) {
      for (const [member, expiresAt] of set) {
        if (expiresAt <= now) {
          set.delete(member);
          removed++;
        }
      }
      if (set.size === 0) this.#sets.delete(key);
    }
    return removed;
  }
}
