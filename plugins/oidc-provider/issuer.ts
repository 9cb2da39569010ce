/**
 * The provider's issuer and endpoint URLs under a path base (`SVC_PATH_BASE`).
 *
 * The issuer is the public URL the routes are reached at: `SVC_BASE_URL` with the path base
 * appended once. When `SVC_BASE_URL` already ends with the path base (a proxy that forwards
 * `/idp/…` unchanged and a base URL written with `/idp`), it is not appended again; when the base
 * URL carries a path and the path base is empty (a proxy that strips `/idp`), the base URL's path
 * is kept. Every endpoint is the issuer followed by its path, so an RP that discovers
 * `{issuer}/.well-known/openid-configuration` finds the issuer it asked for (OIDC Discovery 4.3).
 *
 * @module
 */
import { publicRoot } from "../../mod.ts";

/** The issuer: svc's public root (`publicRoot`: `baseUrl` with `pathBase` appended once). */
export function providerRoot(baseUrl: string, pathBase: string): string {
  return publicRoot({ baseUrl, pathBase });
}

/** The path (from the host's root) of a provider path under the root: for redirects within svc. */
export function rootPath(root: string, path: string): string {
  return `${new URL(root).pathname.replace(/\/+$/, "")}${path}`;
}
