/**
 * API keys (spec 5.5): looked up by the SHA-256 hex of the presented token; plaintext is
 * never stored. Revoking keeps the first revocation time; last use is best effort.
 *
 * @module
 */

/** A stored API key. */
export interface ApiKeyRecord {
  /** The id. */
  readonly id: string;
  /** The realm it belongs to. */
  readonly realmId: string;
  /** Whether the key belongs to a user or a service account. */
  readonly ownerKind: "User" | "ServiceAccount";
  /** The owning user or service account id, per `ownerKind`. */
  readonly ownerId: string;
  /** The name. */
  readonly name: string;
  /** SHA-256 hex of the token. */
  readonly tokenHash: string;
  /** When it was created. */
  readonly createdAt: Date;
  /** When it expires. */
  readonly expiresAt: Date | null;
  /** When it was revoked, or null. */
  readonly revokedAt: Date | null;
  /** When it was last used, or null. */
  readonly lastUsedAt: Date | null;
}

/** An API key to create. */
export interface NewApiKey {
  /** The realm it belongs to. */
  readonly realmId: string;
  /** Whether the key belongs to a user or a service account. */
  readonly ownerKind: "User" | "ServiceAccount";
  /** The owning user or service account id, per `ownerKind`. */
  readonly ownerId: string;
  /** The name. */
  readonly name: string;
  /** The token's SHA-256 (the token itself is never stored). */
  readonly tokenHash: string;
  /** When it expires. */
  readonly expiresAt?: Date | null;
}

/** Whether a key is usable at `now` (unrevoked and unexpired). */
export function isApiKeyActive(key: ApiKeyRecord, now: number): boolean {
  return key.revokedAt === null && (key.expiresAt === null || key.expiresAt.getTime() > now);
}

/** Which keys of a realm {@link ApiKeyStore.listPage} lists. */
export interface ApiKeyFilter {
  /** Only keys of this owner kind. */
  readonly ownerKind?: "User" | "ServiceAccount";
  /** Only keys of this owner. */
  readonly ownerId?: string;
  /** Only keys owned by users who are members of this organization. */
  readonly memberOfOrgId?: string;
}

/** API-key storage. */
export interface ApiKeyStore {
  /** Creates; `ConflictError` on a duplicate token hash. */
  create(input: NewApiKey): Promise<ApiKeyRecord>;
  /** The key with this id (in any state), or null. */
  get(id: string): Promise<ApiKeyRecord | null>;
  /** The key whose token hashes to `tokenHash`, in any state (check with `isApiKeyActive`). */
  getByTokenHash(tokenHash: string): Promise<ApiKeyRecord | null>;
  /** An owner's keys, newest first. */
  listByOwner(ownerKind: "User" | "ServiceAccount", ownerId: string): Promise<ApiKeyRecord[]>;
  /** One page of a realm's keys (newest first, then id) matching `filter`, and how many match. */
  listPage(
    realmId: string,
    filter: ApiKeyFilter,
    page: { readonly offset: number; readonly limit: number },
  ): Promise<{ items: ApiKeyRecord[]; total: number }>;
  /**
   * Revokes, keeping the original revocation time when already revoked. An unknown id is a
   * no-op. Returns the key (null when unknown).
   */
  revoke(id: string): Promise<ApiKeyRecord | null>;
  /**
   * Revokes every unrevoked key of an owner (suspension, erasure), keeping earlier revocation
   * times; returns how many it revoked.
   */
  revokeAllForOwner(ownerKind: "User" | "ServiceAccount", ownerId: string): Promise<number>;
  /** Best effort: records a use now; never throws. */
  recordUse(id: string): Promise<void>;
  /** Deletes; returns whether it existed. */
  delete(id: string): Promise<boolean>;
}
