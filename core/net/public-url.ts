/**
 * The public URL svc's routes are reached at, from `SVC_BASE_URL` and `SVC_PATH_BASE`: one rule for
 * every absolute URL svc hands out (mailed links, the OpenAPI server, the OIDC issuer, the SAML
 * and federation callbacks, SCIM base URLs, the URLs the CLI prints).
 *
 * The path base is appended to the base URL once: when the base URL already ends with it (a
 * proxy that forwards `/idp/…` unchanged, and a base URL written with `/idp`), it is not appended
 * again; when the base URL carries a path and the path base is empty (a proxy that strips `/idp`),
 * the base URL's path is kept.
 *
 * @module
 */

/** Where svc is reached (`config.server`'s two fields). */
export interface PublicUrlSettings {
  /** `SVC_BASE_URL`: the public URL of svc. */
  readonly baseUrl: string;
  /** `SVC_PATH_BASE`: the path every route is mounted under ("" for the root). */
  readonly pathBase: string;
}

/**
 * The public URL of svc's routes (no trailing slash): `baseUrl` with `pathBase` appended unless the
 * base URL's path already ends with it.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { publicRoot } from "@svc/svc";
 *
 * assert.equal(publicRoot({ baseUrl: "https://id.example.com", pathBase: "/idp" }), "https://id.example.com/idp");
 * assert.equal(publicRoot({ baseUrl: "https://id.example.com/idp/", pathBase: "/idp" }), "https://id.example.com/idp");
 * assert.equal(publicRoot({ baseUrl: "https://id.example.com/idp", pathBase: "" }), "https://id.example.com/idp");
 * ```
 */
export function publicRoot(settings: PublicUrlSettings): string {
  const base = settings.baseUrl.replace(/\/+$/, "");
  const mount = settings.pathBase.replace(/\/+$/, "");
  if (mount === "") return base;
  const path = new URL(base).pathname.replace(/\/+$/, "");
  return path === mount || path.endsWith(mount) ? base : `${base}${mount}`;
}

/** The absolute public URL of a route path (`/oidc/token`) under {@link publicRoot}. */
export function publicUrl(settings: PublicUrlSettings, path: string): string {
  return `${publicRoot(settings)}${path.startsWith("/") ? path : `/${path}`}`;
}
