/**
 * The deny-list of single-use token ids (spec 2.2, 2.9): password reset, email
 * verification and invitation tokens are consumed by jti.
 */

/** Where consumed jtis live. */
export interface ConsumedTokenStore {
  /**
   * Consumes a jti in one atomic statement (`INSERT … ON CONFLICT DO NOTHING RETURNING`).
   * True for the first presentation only; every later one (concurrent or not) gets false, until
   * the row is pruned. `expiresAt` must be no earlier than the token's own `exp`, so that a
   * pruned jti belongs to a token that no longer verifies anyway.
   */
  consume(jti: string, expiresAt: Date): Promise<boolean>;
  /** Whether a jti is currently on the deny-list. */
  isConsumed(jti: string): Promise<boolean>;
  /** Deletes entries with `expiresAt <= now` (default: the store's clock). Returns how many. */
  prune(now?: Date): Promise<number>;
}
