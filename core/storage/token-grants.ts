/**
 * Token grants (spec 2.9): what an exchanged authorization code granted, keyed by
 * the code hash, so that a reused code can revoke what it issued.
 */

/** A token grant. */
export interface TokenGrant {
  /** Lowercase SHA-256 hex of the authorization code (the key). */
  readonly codeHash: string;
  /** The client id. */
  readonly clientId: string;
  /** The realm it belongs to. */
  readonly realmId: string;
  /** The user it concerns. */
  readonly userId: string;
  /** The session it concerns. */
  readonly sessionId: string;
  /** The granted scopes. */
  readonly scopes: readonly string[];
  /** When the tokens were issued. */
  readonly issuedAt: Date;
  /** The refresh-token family issued with it; null when offline_access was not granted. */
  readonly refreshFamilyId: string | null;
}

/** Where token grants live. */
export interface TokenGrantStore {
  /** Stores a grant; a grant for the same code hash is replaced. */
  store(grant: TokenGrant): Promise<void>;
  /** The grant issued for a code hash, or null. */
  findByCodeHash(codeHash: string): Promise<TokenGrant | null>;
  /** Deletes every grant of a refresh family. Returns how many. */
  deleteByRefreshFamily(refreshFamilyId: string): Promise<number>;
  /** The sessions a client of the realm was issued tokens for (ending them ends its tokens). */
  sessionIdsOfClient(realmId: string, clientId: string): Promise<string[]>;
}
