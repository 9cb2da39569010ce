/**
 * The provider's endpoint paths, in a module of their own so that every part of the provider
 * (and `client-assertion.ts`, which `shared.ts` uses) can name them without a circle.
 *
 * @module
 */

/** The provider's endpoints, relative to the path base. */
export const PATHS = {
  discovery: "/.well-known/openid-configuration",
  oauthMetadata: "/.well-known/oauth-authorization-server",
  authorize: "/oidc/authorize",
  par: "/oidc/par",
  consent: "/oidc/consent",
  token: "/oidc/token",
  userinfo: "/oidc/userinfo",
  revoke: "/oidc/revoke",
  introspect: "/oidc/introspect",
  logout: "/oidc/logout",
  register: "/oidc/register",
  registration: "/oidc/register/:clientId",
  jwks: "/.well-known/jwks.json",
} as const;
