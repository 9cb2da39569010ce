/**
 * The authenticated caller of a request. An `Authenticator` turns a request into a
 * principal (or none); the token transport (bearer and cookies) is one authenticator,
 * and tests install their own. Routes ask for the principal with `requirePrincipal`.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { UnauthenticatedError } from "../../core/errors.ts";
import type { Principal, SvcEnv } from "../env.ts";

export type { Principal, PrincipalKind } from "../env.ts";

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
