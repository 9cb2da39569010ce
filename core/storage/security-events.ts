/**
 * The user-visible security-event ledger (spec 2.7, 6): append-only. The only in-place
 * change is erasure redaction; retention deletes whole old rows.
 *
 * @module
 */
import type { KnownDeviceRecord } from "./known-devices.ts";

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

/** The webhook deliveries of an event recorded by {@link SecurityEventStore.record}. */
export interface EventDeliveries {
  /** The realm whose endpoints may subscribe. */
  readonly realmId: string;
  /** The event's organization: its endpoints subscribe too (realm-wide ones always). */
  readonly orgId?: string | null;
  /** The event kind the endpoints' patterns are matched against (`*` matches any text). */
  readonly eventKind: string;
  /** The delivery body (the same for every endpoint). */
  readonly payload: string;
  /** A random UUID the delivery ids are derived from (one per endpoint). */
  readonly idSeed: string;
}

/** What a sign-in writes beside its `login.succeeded` event, in the same statement (issue 29). */
export interface SignInWrites {
  /** The abuse counter to delete (the account's failures), or null. */
  readonly clearCounter: string | null;
  /** The device to record as seen now (inserted, or its last-seen time moved), or null. */
  readonly device: {
    readonly userId: string;
    readonly fingerprintHash: string;
    readonly description: string | null;
  } | null;
}

/** What {@link SecurityEventStore.recordSignIn} wrote. */
export interface SignInWritten {
  /** How many webhook deliveries were queued. */
  readonly queued: number;
  /** The device as stored, and whether this statement inserted it; null without a device. */
  readonly device: { readonly record: KnownDeviceRecord; readonly isNew: boolean } | null;
}

/** Security-event storage. */
export interface SecurityEventStore {
  /** Appends an event. */
  append(event: NewSecurityEvent): Promise<SecurityEventRecord>;
  /**
   * Records one event in one statement (issue 29): its ledger entry when `ledger` is given (a
   * `login.succeeded` one also updates the login history, as {@link append} does) and, with
   * `deliveries`, one pending delivery due now per enabled endpoint subscribed to the kind (as
   * `WebhookStore.enqueueForEvent` queues them). Returns how many deliveries were queued.
   */
  record(ledger: NewSecurityEvent | null, deliveries: EventDeliveries | null): Promise<number>;
  /**
   * {@link record} of a sign-in's event, with the sign-in's other writes in the same statement:
   * the account's abuse counter deleted and the device recorded (as `KnownDeviceStore.recordSeen`).
   */
  recordSignIn(
    ledger: NewSecurityEvent | null,
    deliveries: EventDeliveries | null,
    writes: SignInWrites,
  ): Promise<SignInWritten>;
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
