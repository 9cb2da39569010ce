/**
 * The user-visible security-event ledger (spec 2.7, 6): append-only. The only in-place
 * change is erasure redaction; retention deletes whole old rows.
 *
 * @module
 */

/** A stored security event. */
export interface SecurityEventRecord {
  /** The id. */
  readonly id: string;
  /** The realm it belongs to. */
  readonly realmId: string | null;
  /** The user it concerns. */
  readonly userId: string | null;
  /** The organization context it happened in (null: none, or recorded before contexts were). */
  readonly orgId?: string | null;
  /** Stable event kind, for example `login.succeeded`. */
  readonly kind: string;
  /** When it happened. */
  readonly occurredAt: Date;
  /** Event data; null once redacted. */
  readonly data: unknown | null;
  /** The client address, when known. */
  readonly ipAddress: string | null;
  /** The client's device (from its User-Agent), when known. */
  readonly deviceDescription: string | null;
}

/** An event to append. */
export interface NewSecurityEvent {
  /** The realm it belongs to. */
  readonly realmId?: string | null;
  /** The user it concerns. */
  readonly userId?: string | null;
  /** The organization context it happened in; absent: none. */
  readonly orgId?: string | null;
  /** Stable event kind, for example `login.succeeded`. */
  readonly kind: string;
  /** Event data (stored as JSON); absent: none. */
  readonly data?: unknown;
  /** The client address, when known. */
  readonly ipAddress?: string | null;
  /** The client's device (from its User-Agent), when known. */
  readonly deviceDescription?: string | null;
  /** Defaults to now. */
  readonly occurredAt?: Date;
}

/** Security-event storage. */
export interface SecurityEventStore {
  /** Appends an event. */
  append(event: NewSecurityEvent): Promise<SecurityEventRecord>;
  /**
   * The user's events, newest first (ties by id), at most `limit` (default 50). `before`
   * pages: only events strictly older than it. `orgContext` keeps the events of that
   * organization's context (and, with `withoutOrg`, those of no organization context).
   */
  listByUser(
    userId: string,
    options?: {
      readonly limit?: number;
      readonly before?: Date;
      readonly orgContext?: { readonly orgId: string; readonly withoutOrg: boolean };
    },
  ): Promise<SecurityEventRecord[]>;
  /**
   * Erasure: nulls data, IP address and device description of every event of the user,
   * keeping kind and timestamp. Returns how many rows were redacted.
   */
  redactForUser(userId: string): Promise<number>;
  /** Retention: deletes events older than `cutoff` (of one realm when given); returns how many. */
  deleteOlderThan(cutoff: Date, options?: { readonly realmId?: string }): Promise<number>;
}
