/**
 * Impersonation records (spec 2.9, section 3, 4.5). An impersonation is
 * `PendingConsent` (waiting for the target's approval) or `Active`, then `Ended`.
 * Expiry is never written: a record whose ExpiresAt has passed simply stops
 * counting as current (read-side filter).
 */

/** Status as stored. */
export type ImpersonationStatus = "PendingConsent" | "Active" | "Ended";

/** An impersonation record. */
export interface Impersonation {
  readonly id: string;
  readonly realmId: string;
  readonly actorId: string;
  readonly targetId: string;
  readonly orgId: string | null;
  readonly reason: string;
  readonly status: ImpersonationStatus;
  readonly consentRequired: boolean;
  readonly createdAt: Date;
  /** When it became Active (at creation without consent, at approval with consent). */
  readonly startedAt: Date | null;
  readonly expiresAt: Date;
  readonly endedAt: Date | null;
}

/** What starting an impersonation takes. */
export interface NewImpersonation {
  readonly id: string;
  readonly realmId: string;
  readonly actorId: string;
  readonly targetId: string;
  readonly orgId?: string | null;
  readonly reason: string;
  /** True: starts `PendingConsent`; false: starts `Active` at once. */
  readonly consentRequired: boolean;
  readonly expiresAt: Date;
}

/** Where impersonation records live. */
export interface ImpersonationStore {
  /**
   * Starts an impersonation. Rejected with a `ConflictError` (code `conflict`) when the actor
   * already has a current one (see {@link isImpersonationCurrent}); the check and the insert run
   * in one transaction serialized per actor (a transaction-scoped advisory lock), so two
   * concurrent starts by one actor never both succeed.
   */
  create(input: NewImpersonation): Promise<Impersonation>;
  /** The record as stored (expired ones included, status as written), or null. */
  get(id: string): Promise<Impersonation | null>;
  /** The actor's current impersonation (PendingConsent or Active, unexpired), or null. */
  current(actorId: string): Promise<Impersonation | null>;
  /**
   * Approves consent: `PendingConsent` → `Active` (startedAt = now), only while unexpired.
   * `expiresAt` optionally moves the expiry (the window starts when the session starts).
   * Returns the updated record, or null when it was not pending or has expired.
   */
  approveConsent(id: string, options?: { expiresAt?: Date }): Promise<Impersonation | null>;
  /** Ends a not-yet-ended impersonation (endedAt = now). Returns it, or null if none or already ended. */
  end(id: string): Promise<Impersonation | null>;
}

/** Whether a record counts as current at `now`: not ended and `now < expiresAt`. */
export function isImpersonationCurrent(record: Impersonation, now: Date): boolean {
  return record.status !== "Ended" && record.expiresAt.getTime() > now.getTime();
}
