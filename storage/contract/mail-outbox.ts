/**
 * The mail outbox (issue 5): every message the outbox transport "sends" is stored here, in
 * insertion order, until a relay marks it sent or it is pruned. Tests read it to find the code
 * or link a flow mailed. Bodies carry the one secret each message exists to deliver (an OTP
 * code, a reset or invitation link), so deployments prune sent and old messages promptly.
 *
 * @module
 */

/** A message as handed to the outbox. */
export interface NewOutboxMessage {
  /** What the message is for (`email_otp`, `password_reset`…); free text for the store. */
  readonly kind: string;
  /** The recipient address. */
  readonly to: string;
  /** The sender (`From`) as given, such as `svc <no-reply@example.com>`. */
  readonly from: string;
  /** The subject line. */
  readonly subject: string;
  /** The plain-text body. */
  readonly text: string;
  /** The HTML body. */
  readonly html: string;
}

/** A stored message. */
export interface OutboxMessage extends NewOutboxMessage {
  /** The id. */
  readonly id: string;
  /** Insertion order, strictly increasing across the outbox. */
  readonly seq: number;
  /** When it was created. */
  readonly createdAt: Date;
  /** When a relay marked it sent; null while pending. */
  readonly sentAt: Date | null;
  /** Where delivery stands (issue 14). */
  readonly deliveryStatus: MailDeliveryStatus;
  /** Delivery attempts so far. */
  readonly attempts: number;
  /** When the message is next due for delivery (null: now; meaningless once sent or dead-lettered). */
  readonly nextAttemptAt: Date | null;
  /** Why the last attempt failed (a one-line transport error, never a secret), or null. */
  readonly lastError: string | null;
}

/** Delivery states: `pending` (never tried), `retrying` (failed, tried again later), `sent`, `dead_letter` (gave up). */
export type MailDeliveryStatus = "pending" | "retrying" | "sent" | "dead_letter";

/** Delays before the 1st, 2nd… retry of a failed delivery; past the last, dead-letter: 30s, 2m, 10m, 1h, 6h, 24h. */
export const MAIL_RETRY_DELAYS_MS: readonly number[] = Object.freeze([
  30_000,
  120_000,
  600_000,
  3_600_000,
  21_600_000,
  86_400_000,
]);

/** Which messages to list. */
export interface OutboxQuery {
  /** Only messages to this address (compared case-insensitively). */
  readonly to?: string;
  /** Only messages of this kind. */
  readonly kind?: string;
  /** Only messages not yet marked sent. */
  readonly pendingOnly?: boolean;
  /** At most this many (default 100, at most 1000), oldest first. */
  readonly limit?: number;
  /** Only messages with a `seq` greater than this (paging). */
  readonly afterSeq?: number;
  /** Skip this many (after the other filters; default 0). */
  readonly offset?: number;
  /** Only messages in this delivery state. */
  readonly deliveryStatus?: MailDeliveryStatus;
  /** Only messages to an address of a user of this realm (the outbox itself is not realm-scoped). */
  readonly realmId?: string;
  /** Newest first instead of oldest first. */
  readonly newestFirst?: boolean;
}

/** Where outbox messages live. */
export interface MailOutboxStore {
  /** Stores a message (createdAt = now, pending) and returns it. */
  add(message: NewOutboxMessage): Promise<OutboxMessage>;
  /** Messages matching `query`, oldest first (by `seq`). */
  list(query?: OutboxQuery): Promise<OutboxMessage[]>;
  /** The newest message matching `query` (its `limit`/`afterSeq` are ignored), or null. */
  latest(query?: Omit<OutboxQuery, "limit" | "afterSeq">): Promise<OutboxMessage | null>;
  /** Marks a pending message sent (sentAt = now). Returns false when unknown or already sent. */
  markSent(id: string): Promise<boolean>;
  /** Deletes messages created before `before`. Returns how many. */
  prune(before: Date): Promise<number>;
  /** How many messages match `query` (its `limit`, `offset` and order are ignored). */
  count(query?: OutboxQuery): Promise<number>;
  /** One message by id, or null. */
  get(id: string): Promise<OutboxMessage | null>;
  /**
   * Claims up to `limit` messages due for delivery (pending or retrying, next attempt time reached)
   * with `FOR UPDATE SKIP LOCKED`: concurrent claimers never get the same message. Each claim counts
   * one attempt and pushes its next attempt time `leaseMs` ahead, so a worker that dies mid-send
   * leaves the message to be claimed again once the lease ends. Oldest first.
   */
  claimDue(options?: { limit?: number; leaseMs?: number }): Promise<OutboxMessage[]>;
  /** Records a delivery: status `sent`, sentAt = now. False when unknown or no longer deliverable. */
  markDelivered(id: string): Promise<boolean>;
  /**
   * Records a failed attempt: `retrying` with the next attempt after `retryDelaysMs[attempts - 1]`,
   * or `dead_letter` past the last delay. Returns the new status, or null when unknown or done.
   */
  markDeliveryFailed(
    id: string,
    error: string,
    options?: { retryDelaysMs?: readonly number[] },
  ): Promise<MailDeliveryStatus | null>;
  /** Deletes every message to `to` (case-insensitive), for erasure. Returns how many. */
  deleteForRecipient(to: string): Promise<number>;
}
