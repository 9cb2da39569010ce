/**
 * TOTP enrollments (spec 2.3, 5.1): the shared secret is stored encrypted (ciphertext
 * bytes; the store never sees the plaintext) and the last accepted 30 s step only moves
 * forward, so a code is single use even inside the drift window.
 *
 * @module
 */

/** A stored TOTP enrollment; at most one per user. */
export interface TotpEnrollmentRecord {
  /** The id. */
  readonly id: string;
  /** The user it concerns. */
  readonly userId: string;
  /** The encrypted secret. */
  readonly secretCiphertext: Uint8Array;
  /** When enrollment was confirmed by a first valid code; null while pending. */
  readonly confirmedAt: Date | null;
  /** The last accepted time step (unix seconds / 30), or null. */
  readonly lastAcceptedStep: number | null;
  /** When it was created. */
  readonly createdAt: Date;
}

/** TOTP-enrollment storage. */
export interface TotpEnrollmentStore {
  /**
   * Starts (or restarts) an unconfirmed enrollment with a new secret. Fails with a
   * `ConflictError` when the user already has a confirmed enrollment (delete it first).
   */
  begin(userId: string, secretCiphertext: Uint8Array): Promise<TotpEnrollmentRecord>;
  /** The user's enrollment, or null. */
  get(userId: string): Promise<TotpEnrollmentRecord | null>;
  /**
   * Confirms a pending enrollment with the step of the code that proved it (that step is
   * then spent). Returns false when there is no pending enrollment.
   */
  confirm(userId: string, step: number): Promise<boolean>;
  /**
   * Accepts `step` for a confirmed enrollment only if it is greater than the last accepted
   * step, in a single conditional UPDATE. Returns whether it applied; false means a replay
   * (or no confirmed enrollment).
   */
  advanceStep(userId: string, step: number): Promise<boolean>;
  /** Removes the user's enrollment; returns whether one existed. */
  delete(userId: string): Promise<boolean>;
}
