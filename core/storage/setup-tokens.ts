/**
 * The first-run setup links' tokens (issue 27): hashes only, single-use under concurrency.
 *
 * @module
 */

/** The setup tokens of the realms. */
export interface SetupTokenStore {
  /** Records a token hash for `realmId` until `expiresAt`; drops the expired ones. */
  insert(realmId: string, tokenHash: string, expiresAt: Date, now: Date): Promise<void>;
  /** The realm of an unexpired token, or null; consumes nothing. */
  find(tokenHash: string, now: Date): Promise<string | null>;
  /** Consumes an unexpired token atomically; its realm for the one caller that got it, else null. */
  consume(tokenHash: string, now: Date): Promise<string | null>;
  /** Removes every token of the realm (its first administrator exists); how many. */
  clear(realmId: string): Promise<number>;
}
