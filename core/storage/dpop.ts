/**
 * DPoP state (RFC 9449): the proofs already accepted (each `jti` single use within its
 * acceptance window) and the key a session's refresh tokens are bound to.
 *
 * @module
 */

/** Where DPoP proofs and session key bindings live. */
export interface DpopStore {
  /**
   * Records a proof as used in one atomic statement (`INSERT … ON CONFLICT DO NOTHING RETURNING`).
   * `proofKey` identifies the proof (a hash of its key thumbprint and `jti`). True for the first
   * presentation only; every later one, concurrent or not, gets false until `expiresAt` passed
   * and the row was pruned (by then the proof's `iat` refuses it anyway).
   */
  useProof(proofKey: string, expiresAt: Date): Promise<boolean>;
  /** Deletes used proofs whose `expiresAt <= now` (default: the store's clock). Returns how many. */
  prune(now?: Date): Promise<number>;
  /** Binds a session's refresh tokens to a key thumbprint (once, at sign-in; `sessions.dpop_jkt`). */
  bindSession(sessionId: string, jkt: string): Promise<void>;
  /** The key thumbprint a session's refresh tokens are bound to, or null. */
  sessionKey(sessionId: string): Promise<string | null>;
  /** The key thumbprint the session of a refresh token (by its hash) is bound to, or null. */
  refreshTokenKey(tokenHash: string): Promise<string | null>;
}
