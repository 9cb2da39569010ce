/**
 * The types of a request's context that every svc route shares: the Hono environment (`SvcEnv`)
 * and the caller it resolves (`Principal`). A module of types only, so that middleware and
 * routes can name them without importing each other.
 *
 * @module
 */
import type { JsonLimits } from "../core/json-limits.ts";

/**
 * The Hono environment of every svc route: the variables middleware puts in the context
 * (`jsonLimits`: the JSON body limits `parseBody` enforces, set by the app).
 */
export type SvcEnv = {
  Variables: { requestId: string; principal: () => Promise<Principal | null>; jsonLimits: JsonLimits };
};

/** Who is calling: a user acting in a realm and, optionally, one of their organizations. */
export interface Principal {
  /** The user id (the token's `sub`). */
  readonly userId: string;
  /** The realm (the token's `realm`). */
  readonly realmId: string;
  /** The effective organization (the token's `org`), or null. */
  readonly orgId: string | null;
  /** The session (the token's `sid`), or null for callers without one. */
  readonly sessionId: string | null;
  /**
   * What authenticated: a user's access token (`User`, the default when absent), a
   * service account's secret (`ServiceAccount`; `userId` is then the account id), or an
   * API key (`ApiKey`; `userId` is the owning user or service account).
   */
  readonly kind?: PrincipalKind;
  /** The session MFA level (the token's `mfa`), for user tokens. */
  readonly mfa?: string;
  /** The token's audience, for user tokens. */
  readonly audience?: string;
  /** The impersonator when the token carries `act`. */
  readonly act?: { readonly actorId: string; readonly impersonationId: string } | null;
  /** The API key or service account id, for those kinds. */
  readonly credentialId?: string;
  /** When the credential stops being valid (the token's `exp`), in clock milliseconds. */
  readonly expiresAt?: number;
  /** The DPoP key the access token is bound to (`cnf.jkt`), proven by this request's proof. */
  readonly dpopJkt?: string;
}

/** The kinds of authenticated caller (spec 2.7 actor kinds). */
export type PrincipalKind = "User" | "ServiceAccount" | "ApiKey";
