/**
 * Passkey ceremonies (spec 3, 5.3): a random id, a 5-minute TTL, a single attempt, and
 * only the SHA-256 of the challenge stored.
 *
 * @module
 */
import { constantTimeEqual, sha256Hex } from "../digest.ts";

/** Default ceremony lifetime: 5 minutes. */
export const PASSKEY_CEREMONY_TTL_MS = 5 * 60_000;

/** A stored ceremony. */
export interface PasskeyCeremonyRecord {
  /** Random id handed to the browser. */
  readonly id: string;
  /** For example `registration` or `authentication`. */
  readonly kind: string;
  /** SHA-256 hex of the challenge. */
  readonly challengeHash: string;
  /** The realm it belongs to. */
  readonly realmId: string | null;
  /** The user it concerns. */
  readonly userId: string | null;
  /** Ceremony-specific non-secret state. */
  readonly data: Readonly<Record<string, unknown>>;
  /** When it expires. */
  readonly expiresAt: Date;
}

/** A ceremony to start. */
export interface NewPasskeyCeremony {
  /** For example `registration` or `authentication`. */
  readonly kind: string;
  /** The challenge as sent to the authenticator (base64url text or raw bytes); only its hash is kept. */
  readonly challenge: string | Uint8Array;
  /** The realm it belongs to. */
  readonly realmId?: string | null;
  /** The user it concerns. */
  readonly userId?: string | null;
  /** Ceremony-specific non-secret state; default `{}`. */
  readonly data?: Record<string, unknown>;
  /** Defaults to {@link PASSKEY_CEREMONY_TTL_MS}. */
  readonly ttlMs?: number;
}

/** Passkey-ceremony storage. */
export interface PasskeyCeremonyStore {
  /** Stores a ceremony under a fresh random id. */
  create(input: NewPasskeyCeremony): Promise<PasskeyCeremonyRecord>;
  /**
   * The one attempt: deletes the ceremony (`DELETE … RETURNING`) and returns it if it had
   * not expired; null when unknown, already consumed or expired. A second call always
   * returns null. Compare the presented challenge with `challengeMatches`.
   */
  consume(id: string): Promise<PasskeyCeremonyRecord | null>;
  /** Deletes expired ceremonies; returns how many. */
  pruneExpired(): Promise<number>;
}

/** Whether a presented challenge is the one a ceremony was started with (constant time). */
export function challengeMatches(ceremony: PasskeyCeremonyRecord, challenge: string | Uint8Array): boolean {
  return constantTimeEqual(sha256Hex(challenge), ceremony.challengeHash);
}
