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
  /** The id. */
  readonly id: string;
  /** The realm it belongs to. */
  readonly realmId: string;
  /** Who acted. */
  readonly actorId: string;
  /** The impersonated user. */
  readonly targetId: string;
  /** The organization it concerns, or null. */
  readonly orgId: string | null;
  /** Why the actor impersonates. */
  readonly reason: string;
  /** Where it stands: `PendingConsent`, `Active` or `Ended`. */
  readonly status: ImpersonationStatus;
  /** Whether the target's consent was required. */
  readonly consentRequired: boolean;
  /** When it was created. */
  readonly createdAt: Date;
  /** When it became Active (at creation without consent, at approval with consent). */
  readonly startedAt: Date | null;
  /** When it expires. */
  readonly expiresAt: Date;
  /** When it was ended, or null. */
  readonly endedAt: Date | null;
  /** The window asked for, in seconds (under consent, the session's window starts at approval). */
  readonly durationSeconds: number;
  /** When the actor's access token was issued (at the start, or fetched once after approval), or null. */
  readonly tokenIssuedAt: Date | null;
}

/** What starting an impersonation takes. */
export interface NewImpersonation {
  /** The id. */
  readonly id: string;
  /** The realm it belongs to. */
  readonly realmId: string;
  /** Who acted. */
  readonly actorId: string;
  /** The user to impersonate. */
  readonly targetId: string;
  /** The organization it concerns, or null. */
  readonly orgId?: string | null;
  /** Why the actor impersonates (recorded and audited). */
  readonly reason: string;
  /** True: starts `PendingConsent`; false: starts `Active` at once. */
  readonly consentRequired: boolean;
  /** When it expires. */
  readonly expiresAt: Date;
  /** The window asked for, in seconds (default: until `expiresAt`). */
  readonly durationSeconds?: number;
}

/** Which impersonations a list holds: current ones (pending or active, unexpired), past ones, or all. */
export type ImpersonationState = "current" | "past" | "all";

/** A filter of {@link ImpersonationStore.list}. */
export interface ImpersonationFilter {
  /** Only impersonations of this target. */
  readonly targetId?: string;
  /** Only impersonations whose target is a member of this organization (an org administrator's view). */
  readonly targetMemberOf?: string;
  /** Default `all`. */
  readonly state?: ImpersonationState;
  /** Skip this many matches (default 0). */
  readonly offset?: number;
  /** At most this many (default 50). */
  readonly limit?: number;
}

/** The consent mode of a realm (`orgId` null) or of one of its organizations. */
export interface ImpersonationConsentSetting {
  /** The realm it belongs to. */
  readonly realmId: string;
  /** The organization it concerns, or null. */
  readonly orgId: string | null;
  /** Whether impersonating a user in this scope needs the user's consent. */
  readonly consentRequired: boolean;
  /** Null when never set (the default: no consent). */
  readonly updatedAt: Date | null;
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
  /**
   * Marks the actor's token as issued, once: only an `Active`, unexpired record whose token was
   * not yet issued changes (one statement, so two concurrent fetches never both succeed).
   * Returns the updated record, or null.
   */
  claimToken(id: string): Promise<Impersonation | null>;
  /** The sessions started for an impersonation (its tokens), ended or not. */
  sessionIds(id: string): Promise<string[]>;
  /** One page of a realm's impersonations, newest first, and how many match in all. */
  list(realmId: string, filter?: ImpersonationFilter): Promise<{ items: Impersonation[]; total: number }>;
  /** The consent mode of a realm (`orgId` null) or organization; the default (no consent) when never set. */
  consentSetting(realmId: string, orgId: string | null): Promise<ImpersonationConsentSetting>;
  /** Sets a consent mode; returns the previous setting and the new one. */
  setConsentSetting(
    realmId: string,
    orgId: string | null,
    consentRequired: boolean,
  ): Promise<{ before: ImpersonationConsentSetting; after: ImpersonationConsentSetting }>;
  /**
   * Whether starting an impersonation of a user of `realmId` who belongs to `orgIds` needs the
   * target's consent: the realm requires it, or any of those organizations does (the strictest wins).
   */
  consentRequiredFor(realmId: string, orgIds: readonly string[]): Promise<boolean>;
}

/** Whether a record counts as current at `now`: not ended and `now < expiresAt`. */
export function isImpersonationCurrent(record: Impersonation, now: Date): boolean {
  return record.status !== "Ended" && record.expiresAt.getTime() > now.getTime();
}
