/**
 * Service accounts (spec 5.5): looked up by (realm, key); the secret is stored hashed, and
 * rotation keeps the previous hash valid until an overlap expiry, in one atomic write.
 *
 * @module
 */
import type { EventDeliveries } from "./security-events.ts";

/** A stored service account. */
export interface ServiceAccountRecord {
  /** The id. */
  readonly id: string;
  /** The realm it belongs to. */
  readonly realmId: string;
  /** Unique per realm (what the account is looked up by). */
  readonly key: string;
  /** The name people see. */
  readonly displayName: string;
  /** The secret's hash (the secret itself is never stored). */
  readonly secretHash: string;
  /** Hash of the secret before the last rotation, accepted until `previousSecretExpiresAt`; or null. */
  readonly previousSecretHash: string | null;
  /** When the previous secret stops being accepted, or null. */
  readonly previousSecretExpiresAt: Date | null;
  /** Whether the account is disabled. */
  readonly disabled: boolean;
  /** When it was created. */
  readonly createdAt: Date;
}

/** A service account to create. */
export interface NewServiceAccount {
  /** The realm it belongs to. */
  readonly realmId: string;
  /** Unique per realm. */
  readonly key: string;
  /** The name people see. */
  readonly displayName: string;
  /** The secret's hash (the secret itself is never stored). */
  readonly secretHash: string;
}

/** The secret hashes accepted now: the current one, and the previous one inside its overlap. */
export function acceptedSecretHashes(account: ServiceAccountRecord, now: number): string[] {
  const hashes = [account.secretHash];
  if (
    account.previousSecretHash !== null && account.previousSecretExpiresAt !== null &&
    account.previousSecretExpiresAt.getTime() > now
  ) hashes.push(account.previousSecretHash);
  return hashes;
}

/**
 * What {@link ServiceAccountStore.recordGrant} checks in its statement: the account `accountId`,
 * of `realmId` and with key `key`, exists, is enabled and accepts the secret whose SHA-256 (hex)
 * is `secretHash` at `at` (as its current secret, or as its previous one before that expires).
 */
export interface ServiceAccountSecretCheck {
  /** The account's id. */
  readonly accountId: string;
  /** Its realm. */
  readonly realmId: string;
  /** Its key. */
  readonly key: string;
  /** The SHA-256 (hex) of the secret the caller presented. */
  readonly secretHash: string;
  /** Clock milliseconds: the previous secret must expire after this. */
  readonly at: number;
}

/** Service-account storage. */
export interface ServiceAccountStore {
  /** Creates; `ConflictError` when (realm, key) is taken. */
  create(input: NewServiceAccount): Promise<ServiceAccountRecord>;
  /** The account with this id, or null. */
  get(id: string): Promise<ServiceAccountRecord | null>;
  /** The account of the realm with this key, or null. */
  getByKey(realmId: string, key: string): Promise<ServiceAccountRecord | null>;
  /** The realm's service accounts by key. */
  list(realmId: string): Promise<ServiceAccountRecord[]>;
  /**
   * One page of the realm's service accounts by key (then id), and how many it has in all; with
   * `search`, only those whose key or display name contains it (case-insensitive).
   */
  listPage(
    realmId: string,
    page: { readonly offset: number; readonly limit: number; readonly search?: string },
  ): Promise<{ items: ServiceAccountRecord[]; total: number }>;
  /**
   * One UPDATE: the current hash becomes the previous one, valid until now + `overlapMs`,
   * and `newSecretHash` becomes current. Returns the updated account, or null when unknown.
   */
  rotateSecret(id: string, newSecretHash: string, overlapMs: number): Promise<ServiceAccountRecord | null>;
  /** Enables or disables; returns whether the account exists. */
  setDisabled(id: string, disabled: boolean): Promise<boolean>;
  /** Deletes; returns whether it existed. */
  delete(id: string): Promise<boolean>;
  /**
   * Records the webhook deliveries of an event of a grant to a service account (one pending
   * delivery due now per enabled endpoint subscribed to the kind, as `SecurityEventStore.record`
   * queues them) in one statement, only if `check` holds in that same statement: a caller that
   * authenticated the account on a copy read earlier (or cached) has it checked against the
   * stored account there. Returns how many deliveries were queued, or null when `check` did not
   * hold (nothing was written). Not for events of the security ledger (they name a user).
   */
  recordGrant(check: ServiceAccountSecretCheck, deliveries: EventDeliveries): Promise<number | null>;
}
