/**
 * The `returnTo` guard of the sign-in page (no open redirect): after sign-in the browser goes to
 * `returnTo` only when it is an http(s) URL on one of the configured origins, or a path of the
 * page's own origin; anything else (another origin, a protocol-relative `//host`, a backslash
 * trick, `javascript:`, credentials in the URL) is refused.
 *
 * @module
 */

/** The absolute URL to go to after sign-in, or null when `returnTo` is refused (or empty). */
export function allowedReturnTo(
  returnTo: string,
  origins: readonly string[],
  pageOrigin: string,
): string | null {
  if (!returnTo) return null;
  // Browsers treat "\" as "/" in special URLs: "/\evil.test" would leave the origin.
  // deno-lint-ignore no-control-regex
  if (/[\\\u0000-\u001f\u007f]/.test(returnTo)) return null;
  const absolute = /^https?:\/\//i.test(returnTo);
  // A relative value must be a path of this origin: one leading "/", never "//host".
  if (!absolute && !/^\/(?!\/)/.test(returnTo)) return null;
  let url: URL;
  try {
    url = new URL(returnTo, pageOrigin);
  } catch {
    return null;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return null;
  if (url.username || url.password) return null;
  if (url.origin !== pageOrigin && !origins.includes(url.origin)) return null;
  return url.href;
}
