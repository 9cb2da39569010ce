/**
 * OAuth/OIDC authorization codes (spec 2.9, section 3), keyed by the SHA-256 hex
 * of the code. A code is exchanged at most once and then kept, consumed, until
 * purged, so that a replay is told apart from an unknown code.
 */

/** An authorization code as stored. */
export interface AuthorizationCode {
  /** Lowercase SHA-256 hex of the code (the key). */
  readonly codeHash: string;
  /** The client id. */
  readonly clientId: string;
  /** The redirect URI the code was issued for. */
  readonly redirectUri: string;
  /** The realm it belongs to. */
  readonly realmId: string;
  /** The user it concerns. */
  readonly userId: string;
  /** The session it concerns. */
  readonly sessionId: string;
  /** The organization it concerns, or null. */
  readonly orgId: string | null;
  /** The granted scopes. */
  readonly scopes: readonly string[];
  /** When the user authenticated (the OIDC `auth_time`). */
  readonly authTime: Date;
  /** The code can be exchanged while `now < expiresAt`. */
  readonly expiresAt: Date;
  /** Whether the code was already exchanged. */
  readonly consumed: boolean;
  /** The PKCE code challenge, or null. */
  readonly codeChallenge: string | null;
  /** The PKCE code challenge method, or null. */
  readonly codeChallengeMethod: string | null;
  /** The OIDC nonce of the authorization request, or null. */
  readonly nonce: string | null;
  /** The DPoP key thumbprint the code is bound to (RFC 9449 `dpop_jkt`), or null. */
  readonly dpopJkt?: string | null;
}

/** What a new code carries (`consumed` starts false; optional fields default to null). */
export type NewAuthorizationCode =
  & Omit<AuthorizationCode, "consumed" | "orgId" | "codeChallenge" | "codeChallengeMethod" | "nonce">
  & Partial<Pick<AuthorizationCode, "orgId" | "codeChallenge" | "codeChallengeMethod" | "nonce">>;

/**
 * Result of an exchange.
 * - `Consumed`: this caller, and only this one, consumed the unexpired code; `code` is the
 *   record as it now stands (consumed: true).
 * - `Reused`: the code was already consumed (whether or not it has expired since: a replay is
 *   reported as such until the row is purged). `code` is the record, for example to revoke
 *   what the first exchange issued.
 * - `Unknown`: no such code, or it expired without being consumed (it is left for purge).
 */
export type CodeExchangeResult =
  | { outcome: "Consumed"; code: AuthorizationCode }
  | { outcome: "Reused"; code: AuthorizationCode }
  | { outcome: "Unknown" };

/** Where authorization codes live. */
export interface AuthorizationCodeStore {
  /** Stores a new code. A code hash that already exists is a conflict (throws). */
  store(code: NewAuthorizationCode): Promise<void>;
  /** Exchanges a code, in one atomic statement that locks the row; see {@link CodeExchangeResult}. */
  exchange(codeHash: string): Promise<CodeExchangeResult>;
  /** Reads a code as stored, or null. */
  get(codeHash: string): Promise<AuthorizationCode | null>;
  /** Deletes codes (consumed or not) with `expiresAt <= now` (default: the store's clock). */
  purge(now?: Date): Promise<number>;
}
