/**
 * Per-subject encryption keys (spec 2.9): one raw AES-256 key per subject. Deleting the
 * row crypto-shreds everything encrypted under it (erasure, spec 6).
 *
 * @module
 */

/** A stored subject key. */
export interface SubjectKeyRecord {
  /** The user id. */
  readonly subjectId: string;
  /** Raw AES-256 key bytes (32). */
  readonly key: Uint8Array;
  /** When it was created. */
  readonly createdAt: Date;
}

/** Subject-key storage. */
export interface SubjectKeyStore {
  /**
   * The subject's key, creating it from `keyBytes` when absent. Atomic: concurrent calls
   * with different candidate bytes all return the one key that was stored first.
   * `created` tells whether this call stored it.
   */
  getOrCreate(subjectId: string, keyBytes: Uint8Array): Promise<{ key: SubjectKeyRecord; created: boolean }>;
  /** The subject's key, or null. */
  get(subjectId: string): Promise<SubjectKeyRecord | null>;
  /** Destroys the subject's key; returns whether one existed. */
  delete(subjectId: string): Promise<boolean>;
}
