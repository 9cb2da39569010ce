/**
 * Per-realm token signing keys (spec 2.9): one primary key signs, retired keys stay
 * published through an overlap window so tokens they signed still verify.
 *
 * @module
 */

/** A stored signing key. */
export interface SigningKeyRecord {
  /** The realm it belongs to. */
  readonly realmId: string;
  /** Key id, unique per realm (the JWT `kid`). */
  readonly kid: string;
  /** Whether this key signs new tokens; at most one per realm. */
  readonly isPrimary: boolean;
  /** JWS algorithm, `RS256` by default. */
  readonly algorithm: string;
  /** The private key, PKCS#8 DER. */
  readonly privateKey: Uint8Array;
  /** When it was created. */
  readonly createdAt: Date;
  /** When the key stopped being primary; null while primary or staged. */
  readonly retiredAt: Date | null;
}

/** A key to store. */
export interface NewSigningKey {
  /** Key id, unique per realm (the JWT `kid`). */
  readonly kid: string;
  /** Defaults to `RS256`. */
  readonly algorithm?: string;
  /** PKCS#8 DER. */
  readonly privateKey: Uint8Array;
}

/** The outcome of a rotation. */
export interface SigningKeyRotation {
  /** The new primary key. */
  readonly primary: SigningKeyRecord;
  /** The key that was primary before, now retired; null when the realm had none. */
  readonly retired: SigningKeyRecord | null;
}

/** Signing-key storage. */
export interface SigningKeyStore {
  /**
   * Stores a key. With `isPrimary` it becomes the realm's primary; fails with a
   * `ConflictError` when the realm already has one or the kid is taken (use `rotate`).
   */
  insert(realmId: string, key: NewSigningKey & { readonly isPrimary?: boolean }): Promise<SigningKeyRecord>;
  /** The realm's primary key, or null. */
  getPrimary(realmId: string): Promise<SigningKeyRecord | null>;
  /** One key of a realm by kid, primary, staged or retired; null when unknown. */
  get(realmId: string, kid: string): Promise<SigningKeyRecord | null>;
  /**
   * In one transaction: retires the current primary (sets `retiredAt` to now) and stores
   * `newKey` as primary. A concurrent rotation of the same realm fails with `ConflictError`.
   */
  rotate(realmId: string, newKey: NewSigningKey): Promise<SigningKeyRotation>;
  /**
   * The keys to publish (JWKS): the primary, staged keys (never primary, not retired), and
   * retired keys whose `retiredAt` is within `overlapMs` of now. Primary first, then newest.
   */
  listPublished(realmId: string, overlapMs: number): Promise<SigningKeyRecord[]>;
  /** Every stored key of the realm (published or not yet pruned): primary first, then newest. */
  list(realmId: string): Promise<SigningKeyRecord[]>;
  /** Deletes retired keys that left the overlap window; returns how many. */
  pruneRetired(realmId: string, overlapMs: number): Promise<number>;
}
