/**
 * A source of the current time. Everything with a TTL, a window or a step takes a
 * Clock so that tests move time instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/**
 * A clock that only moves when told to; for tests and simulations.
 *
 * @example
 * ```ts
 * const clock = new ManualClock(Date.UTC(2026, 0, 1));
 * clock.advance(5 * 60_000); // five minutes later
 * ```
 */
export class ManualClock implements Clock {
  #now: number;
  /** A clock that starts at `start` (milliseconds since the epoch) and moves only when told. */
  constructor(start = 0) {
    this.#now = start;
  }
  /** The current time in milliseconds since the epoch. */
  now(): number {
    return this.#now;
  }
  /** Moves the clock forward by `ms` milliseconds. */
  advance(ms: number): void {
    this.#now += ms;
  }
  /** Sets the clock to an absolute time. */
  set(ms: number): void {
    this.#now = ms;
  }
}

/** The current time of a clock as a Date. */
export function nowDate(clock: Clock): Date {
  return new Date(clock.now());
}
