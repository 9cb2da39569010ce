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
  readonly subject: string;
  /** The plain-text body. */
  readonly text: string;
  /** The HTML body. */
  readonly html: string;
}

/** A stored message. */
export interface OutboxMessage extends NewOutboxMessage {
  readonly id: string;
  /** Insertion order, strictly increasing across the outbox. */
  readonly seq: number;
  readonly createdAt: Date;
  /** When a relay marked it sent; null while pending. */
  readonly sentAt: Date | null;
}

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
  /** Deletes every message to `to` (case-insensitive), for erasure. Returns how many. */
  deleteForRecipient(to: string): Promise<number>;
}
