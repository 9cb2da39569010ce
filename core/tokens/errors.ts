/**
 * Token errors. Every rejected token, whatever the reason (bad signature, wrong `typ`,
 * unknown key, expiry, wrong audience, replayed single-use jti…), is the same 401
 * `invalid_token` on the wire, so that a rejection tells an attacker nothing; the reason
 * stays on the error object for logs and tests.
 *
 * @module
 */
import { SvcError } from "../errors.ts";

/** Why a token was rejected (never sent to clients). */
export type InvalidTokenReason =
  | "malformed"
  | "header"
  | "typ"
  | "alg"
  | "kid"
  | "signature"
  | "expired"
  | "not_yet_valid"
  | "issuer"
  | "audience"
  | "claims"
  | "consumed"
  | "realm"
  /** A reset link minted before the password last changed (its credential stamp is stale). */
  | "stale"
  /** An access token of a session that ended (logout, reset, suspension…). */
  | "session_ended";

/** A token failed verification. Code `invalid_token`, status 401. */
export class InvalidTokenError extends SvcError {
  /** Why; for logs and tests only. */
  readonly reason: InvalidTokenReason;
  /** `reason` stays on the error; the wire answer is always the same. */
  constructor(reason: InvalidTokenReason) {
    super("invalid_token", "The token is invalid or expired.", 401);
    this.reason = reason;
  }
}

/**
 * A refresh token cannot be used (unknown, already used, revoked, expired, or its session
 * ended). Code `invalid_refresh_token`, status 401: the client signs in again.
 */
export class InvalidRefreshTokenError extends SvcError {
  constructor() {
    super("invalid_refresh_token", "The refresh token is invalid, used or expired; sign in again.", 401);
  }
}

/**
 * A refresh grant's guard (`RefreshGrantGuard`) did not hold: the token is of another realm or
 * client (`audience`), its session has no companion row (`companion`), or the client changed,
 * was suspended or deleted since the caller read it (`client`: read it again, then retry).
 * Nothing was rotated. The same answer as {@link InvalidRefreshTokenError} to a client.
 */
export class RefreshGuardError extends InvalidRefreshTokenError {
  /** Which condition failed. */
  readonly failed: "audience" | "companion" | "client";

  /** The guard's failed condition. */
  constructor(failed: "audience" | "companion" | "client") {
    super();
    this.failed = failed;
  }
}
