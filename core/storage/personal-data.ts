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

/**
 * Free text typed by administrators or recorded about other people that may name the person
 * (issue 25): an impersonation's reason, an API key's name, the data of another user's security
 * event (a JSON text).
 */
export interface StoredFreeText {
  /** Where the text lives. */
  readonly kind: "impersonation_reason" | "api_key_name" | "security_event_data";
  /** The row's id. */
  readonly id: string;
  /** The text (for `security_event_data`, the event's data as JSON text). */
  readonly text: string;
}

/** The payloads of one admin audit entry, as JSON text (null where already redacted). */
export interface StoredAuditPayloads {
  /** The entry's position in its realm's chain. */
  readonly seq: number;
  /** The `before` payload as JSON text, or null. */
  readonly before: string | null;
  /** The `after` payload as JSON text, or null. */
  readonly after: string | null;
}

/** Where erasure finds and rewrites the copies. */
export interface PersonalDataStore {
  /** Every IP address recorded for the user (their sessions and security events), distinct. */
  ipAddressesOf(userId: string): Promise<string[]>;
  /** Clears the IP address and device description of every session of the user; returns how many. */
  forgetSessionOrigins(userId: string): Promise<number>;
  /**
   * Webhook deliveries to the realm's endpoints whose payload contains any of `needles`
   * (case-insensitive); another realm's deliveries are not the realm's to rewrite.
   */
  webhookPayloadsMentioning(realmId: string, needles: readonly string[]): Promise<StoredPayload[]>;
  /** Replaces a delivery's payload (and drops its last error, which may quote it). */
  replaceWebhookPayload(id: string, payload: string): Promise<void>;
  /**
   * Outbox messages of the realm (or stored before messages carried a realm) whose subject or
   * bodies contain any of `needles` (case-insensitive). Another realm's mail is not the realm's to
   * rewrite.
   */
  mailMentioning(realmId: string, needles: readonly string[]): Promise<StoredMailText[]>;
  /**
   * The payloads of the admin audit entries of the realm about `subjectId` (their target), oldest
   * first: the addresses and names the person had (an email change, a display name change).
   */
  auditPayloadsAbout(realmId: string, subjectId: string): Promise<StoredAuditPayloads[]>;
  /**
   * Admin audit entries of the realm with a payload that contains any of `needles`
   * (case-insensitive), but for those whose actor, target or on-behalf-of is `exceptSubject`
   * (erasure nulls those whole).
   */
  auditPayloadsMentioning(
    realmId: string,
    needles: readonly string[],
    exceptSubject: string,
  ): Promise<StoredAuditPayloads[]>;
  /**
   * Nulls the payloads of these entries of the realm (their digests and hashes stay, so the chain
   * still verifies, as retention's redaction does). Returns how many changed.
   */
  clearAuditPayloads(realmId: string, seqs: readonly number[]): Promise<number>;
  /** The realm's free text ({@link StoredFreeText}) that contains any of `needles` (case-insensitive). */
  freeTextMentioning(realmId: string, needles: readonly string[]): Promise<StoredFreeText[]>;
  /** Replaces one free text (a `security_event_data` text must be JSON). */
  replaceFreeText(text: StoredFreeText): Promise<void>;
  /** Replaces an outbox message's subject and bodies. */
  replaceMailText(message: StoredMailText): Promise<void>;
}
