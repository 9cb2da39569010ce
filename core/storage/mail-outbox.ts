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
  /**
   * The realm the message belongs to (issue 24): a realm administrator reads only its realm's
   * mail, whatever the address.
   */
  readonly realmId: string;
  /** The user the message is for, or null when the address is no user's (a sign-up link). */
  readonly userId: string | null;
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
export interface OutboxMessage extends Omit<NewOutboxMessage, "realmId"> {
  /**
   * The realm the message belongs to; null only for mail stored before messages carried their
   * realm whose address was no single realm's user's (no realm administrator reads it).
   */
  readonly realmId: string | null;
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
  /** Only messages of this realm (the fence of the admin API: by the message's realm, never by address). */
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
  /** One message by id (only of `scope.realmId` when given), or null. */
  get(id: string, scope?: { readonly realmId: string }): Promise<OutboxMessage | null>;
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
  /**
   * For erasure: deletes every message for the user, whatever address it went to, and the messages
   * of the user's realm for no user (or stored before messages carried their realm) that went to
   * one of `addresses` (case-insensitive). Another realm's mail to the same address stays. Returns
   * how many.
   */
  deleteForUser(
    userId: string,
    scope: { readonly realmId: string; readonly addresses: readonly string[] },
  ): Promise<number>;
  /** The distinct addresses (lowercased) mail for the user went to, oldest first: its past addresses too. */
  addressesOf(userId: string): Promise<string[]>;
}
