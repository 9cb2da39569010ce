/**
 * The maintenance sweeper: deletes what has outlived its purpose, on an interval. Expired
 * consumed-token jtis, SAML marks, authorization codes, email OTP challenges and passkey
 * ceremonies (each already useless once expired); sessions and refresh tokens a day after
 * they expired (so a late replay still reads as such for a while); expired abuse counters;
 * and outbox mail after a week (it holds codes and links). One failing task never stops the
 * others. Every instance may run it: each task is one idempotent statement.
 *
 * @module
 */
import type { CounterStore } from "../abuse/counter-store.ts";
import type { Clock } from "../clock.ts";
import type { Storage } from "../storage/storage.ts";

/** How long expired sessions and refresh tokens are kept. */
export const EXPIRED_SESSION_GRACE_MS = 86_400_000;
/** How long outbox mail is kept. */
export const OUTBOX_RETENTION_MS = 7 * 86_400_000;

/** What {@link MaintenanceSweeper} sweeps. */
export interface MaintenanceSweeperOptions {
  storage: Storage;
  /** The abuse counter store, when it is not in memory. */
  counters?: CounterStore | null;
  clock: Clock;
  /** Milliseconds between sweeps (0: only `runOnce`). */
  intervalMs: number;
  /** Where a failing task is reported. */
  onError?: (task: string, error: unknown) => void;
}

/** The rows each task deleted in one sweep; a failed task is absent. */
export type SweepReport = Record<string, number>;

/**
 * Runs the sweep on an interval.
 *
 * @example
 * ```ts
 * import { createSqlStorage, cryptoRandom, openDatabase, systemClock } from "@svc/svc";
 * import { MaintenanceSweeper } from "./sweeper.ts";
 *
 * const database = await openDatabase({ kind: "embedded" }); // PGlite in memory
 * await database.ensureSchema();
 * const storage = createSqlStorage(database, { clock: systemClock, random: cryptoRandom });
 *
 * // `counters` (optional): the abuse counter store, when it is not in memory.
 * const sweeper = new MaintenanceSweeper({ storage, clock: systemClock, intervalMs: 300_000 });
 * sweeper.start();
 * await sweeper.runOnce(); // → { consumedTokens: 0, samlAssertions: 0, … } (rows deleted per task)
 * await sweeper.stop();
 * await database.close();
 * ```
 */
export class MaintenanceSweeper {
  readonly #o: MaintenanceSweeperOptions;
  #timer: ReturnType<typeof setInterval> | null = null;
  #running: Promise<SweepReport> | null = null;

  constructor(options: MaintenanceSweeperOptions) {
    this.#o = options;
  }

  /** One sweep now; resolves to the rows deleted per task. */
  async runOnce(): Promise<SweepReport> {
    const { storage, counters, clock } = this.#o;
    const now = new Date(clock.now());
    const graceCutoff = new Date(clock.now() - EXPIRED_SESSION_GRACE_MS);
    const tasks: Record<string, () => Promise<number>> = {
      consumedTokens: () => storage.consumedTokens.prune(now),
      dpopProofs: () => storage.dpop.prune(now),
      samlAssertions: () => storage.samlAssertions.prune(now),
      authorizationCodes: () => storage.authorizationCodes.purge(now),
      emailOtpChallenges: () => storage.emailOtp.prune(now),
      passkeyCeremonies: () => storage.passkeyCeremonies.pruneExpired(),
      sessions: () => storage.sessions.pruneExpired(graceCutoff),
      refreshTokens: () => storage.refreshTokens.pruneExpired(graceCutoff),
      mailOutbox: () => storage.mailOutbox.prune(new Date(clock.now() - OUTBOX_RETENTION_MS)),
      ...(counters ? { abuseCounters: () => counters.purgeExpired() } : {}),
    };
    const report: SweepReport = {};
    for (const [name, task] of Object.entries(tasks)) {
      try {
        report[name] = await task();
      } catch (error) {
        this.#o.onError?.(name, error);
      }
    }
    return report;
  }

  /** Starts sweeping every `intervalMs` (a sweep never overlaps the previous one). */
  start(): void {
    if (this.#timer !== null || this.#o.intervalMs <= 0) return;
    this.#timer = setInterval(() => {
      if (this.#running !== null) return;
      this.#running = this.runOnce().finally(() => this.#running = null);
    }, this.#o.intervalMs);
    // Never keep a process alive just for maintenance (Deno and Node timers both offer unref).
    (this.#timer as unknown as { unref?: () => void }).unref?.();
  }

  /** Stops the interval and waits for a sweep in progress. */
  async stop(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    await this.#running;
  }
}
