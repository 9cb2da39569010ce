/**
 * The authenticated caller of a request. An `Authenticator` turns a request into a
 * principal (or none); the token transport (bearer and cookies) is one authenticator,
 * and tests install their own. Routes ask for the principal with `requirePrincipal`.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { UnauthenticatedError } from "../../core/errors.ts";
import type { SvcEnv } from "../request-id.ts";

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

/**
 * Resolves the caller of a request. Resolves to null when the request carries no
 * credentials; throws `UnauthenticatedError` when it carries bad ones.
 */
export type Authenticator = (c: Context<SvcEnv>) => Promise<Principal | null>;

/**
 * Middleware that makes the caller available as `c.var.principal()`: the authenticator runs
 * at most once per request, and only when a route asks (health checks never do).
 */
export function authenticate(authenticator: Authenticator | undefined): MiddlewareHandler<SvcEnv> {
  return async (c, next) => {
    let resolved: Promise<Principal | null> | null = null;
    c.set("principal", () => {
      resolved ??= authenticator === undefined ? Promise.resolve(null) : authenticator(c);
      return resolved;
    });
    await next();
  };
}

/** The caller, or 401 `unauthenticated`. */
export async function requirePrincipal(c: Context<SvcEnv>): Promise<Principal> {
  const principal = await c.get("principal")();
  if (principal === null) throw new UnauthenticatedError("Authentication is required.");
  return principal;
}
