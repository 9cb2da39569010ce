/**
 * Known devices (spec 2.3): one row per (user, device), keyed by the SHA-256 hex of the
 * device fingerprint (the fingerprint itself is never stored).
 *
 * @module
 */

/** A stored known device. */
export interface KnownDeviceRecord {
  /** The user it concerns. */
  readonly userId: string;
  /** SHA-256 hex of the fingerprint. */
  readonly fingerprintHash: string;
  /** A description for people. */
  readonly description: string | null;
  /** When it was first seen. */
  readonly firstSeenAt: Date;
  /** When it was last seen. */
  readonly lastSeenAt: Date;
}

/** Known-device storage. */
export interface KnownDeviceStore {
  /**
   * Records a sighting in one upsert: inserts with first/last seen = now, or moves last
   * seen (and replaces the description when one is given). `isNew` is true only for the
   * call that inserted the row (the new-device event trigger). `fingerprintHash` must be
   * 64 lowercase hex characters (`ValidationError` otherwise).
   */
  recordSeen(
    userId: string,
    fingerprintHash: string,
    description?: string | null,
  ): Promise<{ device: KnownDeviceRecord; isNew: boolean }>;
  /** One device, or null. */
  get(userId: string, fingerprintHash: string): Promise<KnownDeviceRecord | null>;
  /** The user's devices, most recently seen first. */
  listByUser(userId: string): Promise<KnownDeviceRecord[]>;
  /** Forgets one device; returns whether it existed. */
  delete(userId: string, fingerprintHash: string): Promise<boolean>;
  /** Forgets every device of the user; returns how many. */
  deleteAllForUser(userId: string): Promise<number>;
}
