/**
 * Service accounts (spec 5.5): looked up by (realm, key); the secret is stored hashed, and
 * rotation keeps the previous hash valid until an overlap expiry, in one atomic write.
 *
 * @module
 */

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
}
