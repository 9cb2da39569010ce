/**
 * Copies of a user's personal data outside the user's own rows, for erasure (spec 6; issue 19
 * item 19): the addresses their sessions and ledger recorded, and webhook payloads and outbox
 * mail that mention them. Matching is by case-insensitive substring; callers decide, per match,
 * what to rewrite.
 *
 * @module
 */

/** A stored webhook delivery body. */
export interface StoredPayload {
  /** The id. */
  readonly id: string;
  /** The delivery's raw body. */
  readonly payload: string;
}

/** The text parts of an outbox message. */
export interface StoredMailText {
  /** The id. */
  readonly id: string;
  /** The subject line. */
  readonly subject: string;
  /** The plain-text body. */
  readonly text: string;
  /** The HTML body. */
  readonly html: string;
}

/** Where erasure finds and rewrites the copies. */
export interface PersonalDataStore {
  /** Every IP address recorded for the user (their sessions and security events), distinct. */
  ipAddressesOf(userId: string): Promise<string[]>;
  /** Clears the IP address and device description of every session of the user; returns how many. */
  forgetSessionOrigins(userId: string): Promise<number>;
  /** Webhook deliveries whose payload contains any of `needles` (case-insensitive). */
  webhookPayloadsMentioning(needles: readonly string[]): Promise<StoredPayload[]>;
  /** Replaces a delivery's payload (and drops its last error, which may quote it). */
  replaceWebhookPayload(id: string, payload: string): Promise<void>;
  /** Outbox messages whose subject or bodies contain any of `needles` (case-insensitive). */
  mailMentioning(needles: readonly string[]): Promise<StoredMailText[]>;
  /** Replaces an outbox message's subject and bodies. */
  replaceMailText(message: StoredMailText): Promise<void>;
}
