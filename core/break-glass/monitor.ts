/**
 * Break-glass health (spec 3, 4.6, 6): the status of a realm's break-glass account (last drill,
 * last use, rotation required, drill due date) and the readiness evaluation behind the
 * `break_glass_drill` check of `/readyz`.
 *
 * A drill is due `drillWindowMs` after the last one (90 days by default), or, for an account never
 * drilled, `drillWindowMs` after the account was created: within the window the realm is fine;
 * from the due instant on it is overdue. A realm without a break-glass account has nothing to
 * drill and is not counted.
 *
 * Each evaluation also reminds: for every realm whose account was used and not yet rotated, it
 * emits `breakglass.rotation_required`, at most once per `reminderIntervalMs` (an hour) per
 * realm. The reminder is claimed in storage by one conditional update, in the transaction that
 * records the event, so several instances evaluating readiness together still remind once.
 *
 * @module
 */
import type { Clock } from "../clock.ts";
import { SvcError } from "../errors.ts";
import type { EmitInTransaction } from "../events/publisher.ts";
import type { BreakGlassAccount, BreakGlassState } from "../storage/break-glass.ts";
import type { Storage } from "../storage/storage.ts";
import { BREAK_GLASS_EVENTS } from "./kinds.ts";

/** One day in milliseconds. */
export const DAY_MS = 86_400_000;
/** At most one `breakglass.rotation_required` reminder per realm per hour. */
export const ROTATION_REMINDER_INTERVAL_MS = 3_600_000;

/** The break-glass status of a realm (`GET /svc-admin/break-glass/status`). */
export interface BreakGlassStatus {
  readonly account: { readonly userId: string; readonly email: string; readonly createdAt: Date } | null;
  readonly lastDrillAt: Date | null;
  readonly lastUseAt: Date | null;
  readonly lastRotatedAt: Date | null;
  readonly rotationRequired: boolean;
  /**
   * When the next drill is due: the last drill plus the window, or the account's creation plus
   * the window when never drilled; null without an account.
   */
  readonly drillDueAt: Date | null;
  /** An account exists and its drill's due instant has come. */
  readonly drillOverdue: boolean;
}

/** The status of a realm from its account and state at `now`. */
export function breakGlassStatus(
  account: BreakGlassAccount | null,
  state: BreakGlassState | null,
  now: number,
  drillWindowMs: number,
): BreakGlassStatus {
  const lastDrillAt = state?.lastDrillAt ?? null;
  const windowStart = lastDrillAt ?? account?.createdAt ?? null;
  const drillDueAt = account === null || windowStart === null
    ? null
    : new Date(windowStart.getTime() + drillWindowMs);
  return {
    account: account === null
      ? null
      : { userId: account.userId, email: account.email, createdAt: account.createdAt },
    lastDrillAt,
    lastUseAt: state?.lastUseAt ?? null,
    lastRotatedAt: state?.lastRotatedAt ?? null,
    rotationRequired: state?.rotationRequired ?? false,
    drillDueAt,
    drillOverdue: drillDueAt !== null && now >= drillDueAt.getTime(),
  };
}

/** One or more realms' break-glass drills are overdue (the readiness check's failure). */
export class BreakGlassDrillOverdueError extends SvcError {
  constructor(readonly realmIds: readonly string[]) {
    super(
      "break_glass_drill_overdue",
      `break-glass drill overdue in ${realmIds.length} realm${realmIds.length === 1 ? "" : "s"}`,
      503,
    );
  }
}

/** What a {@link BreakGlassMonitor} needs. */
export interface BreakGlassMonitorOptions {
  readonly storage: Storage;
  readonly clock: Clock;
  /** Records the reminder events in the claiming transaction (an `EventPublisher`). */
  readonly events: {
    transaction<T>(work: (tx: Storage, emit: EmitInTransaction) => Promise<T>): Promise<T>;
  };
  readonly drillWindowMs: number;
  /** Default {@link ROTATION_REMINDER_INTERVAL_MS}. */
  readonly reminderIntervalMs?: number;
}

/** Evaluates every realm's break-glass health; the `break_glass_drill` readiness check runs it. */
export class BreakGlassMonitor {
  readonly #o: BreakGlassMonitorOptions;

  constructor(options: BreakGlassMonitorOptions) {
    this.#o = options;
  }

  /** The drill window in milliseconds. */
  get drillWindowMs(): number {
    return this.#o.drillWindowMs;
  }

  /** The status of one realm now. */
  async status(realmId: string): Promise<BreakGlassStatus> {
    const { storage, clock } = this.#o;
    const [account, state] = await Promise.all([
      storage.breakGlass.account(realmId),
      storage.breakGlass.get(realmId),
    ]);
    return breakGlassStatus(account, state, clock.now(), this.#o.drillWindowMs);
  }

  /**
   * One evaluation: reminds of pending rotations (at most once per interval per realm) and
   * returns the realms whose drill is overdue.
   */
  async evaluate(): Promise<{ overdue: string[]; reminded: string[] }> {
    const { storage, clock } = this.#o;
    const now = clock.now();
    const overdue: string[] = [];
    const reminded: string[] = [];
    for (const { account, state } of await storage.breakGlass.listAccounts()) {
      if (breakGlassStatus(account, state, now, this.#o.drillWindowMs).drillOverdue) {
        overdue.push(account.realmId);
      }
      if (state?.rotationRequired && await this.#remind(account)) reminded.push(account.realmId);
    }
    return { overdue, reminded };
  }

  /** The readiness check: resolves when no drill is overdue, else rejects with {@link BreakGlassDrillOverdueError}. */
  async check(): Promise<void> {
    const { overdue } = await this.evaluate();
    if (overdue.length > 0) throw new BreakGlassDrillOverdueError(overdue);
  }

  async #remind(account: BreakGlassAccount): Promise<boolean> {
    const interval = this.#o.reminderIntervalMs ?? ROTATION_REMINDER_INTERVAL_MS;
    return await this.#o.events.transaction(async (tx, emit) => {
      const claimed = await tx.breakGlass.claimRotationReminder(account.realmId, interval);
      if (claimed === null) return false;
      await emit({
        kind: BREAK_GLASS_EVENTS.rotationRequired,
        occurredAt: this.#o.clock.now(),
        realmId: account.realmId,
        userId: account.userId,
        data: { lastUseAt: claimed.lastUseAt?.toISOString() ?? null, reason: "reminder" },
      });
      return true;
    });
  }
}
