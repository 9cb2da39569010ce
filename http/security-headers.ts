/**
 * Response headers every svc answer carries (`X-Content-Type-Options`, `Referrer-Policy`,
 * `X-Frame-Options`, and `Strict-Transport-Security` behind an https base URL), and
 * {@link noStore}, which routes whose answers carry a secret declare.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import type { SvcEnv } from "./env.ts";

/**
 * Sets a header of the answer from a middleware, after `next()` (`append` adds a value instead).
 * Once a handler has answered, Hono's `c.header` first copies the whole response (its headers may
 * be immutable, as those of `Response.redirect` or of a fetched response are); on Node, where
 * `@hono/node-server` keeps an answer's string body aside until it is written, that copy builds a
 * full `Response` with a stream body, once per header, and the answer is then written from that
 * stream. svc's own answers have mutable headers: they are set in place, and only immutable ones
 * go through `c.header`. Before an answer exists it is `c.header` as well.
 */
export function setAnswerHeader(c: Context, name: string, value: string, append = false): void {
  if (c.finalized) {
    try {
      if (append) c.res.headers.append(name, value);
      else c.res.headers.set(name, value);
      return;
    } catch (err) {
      // Immutable headers: Hono copies the response, then sets the header on the copy.
      if (!(err instanceof TypeError)) throw err;
    }
  }
  c.header(name, value, append ? { append: true } : undefined);
}

/** The HSTS policy sent when the base URL is https: one year, subdomains included. */
export const HSTS_POLICY = "max-age=31536000; includeSubDomains";

/**
 * Sets the baseline headers on every response, errors and 404 included (install it before the
 * routes). A header a route set itself is kept.
 */
export function securityHeaders(options: { baseUrl: string }): MiddlewareHandler<SvcEnv> {
  const headers: [string, string][] = [
    ["X-Content-Type-Options", "nosniff"],
    ["Referrer-Policy", "no-referrer"],
    ["X-Frame-Options", "DENY"],
  ];
  if (new URL(options.baseUrl).protocol === "https:") {
    headers.push(["Strict-Transport-Security", HSTS_POLICY]);
  }
  return async (c, next) => {
    await next();
    for (const [name, value] of headers) if (!c.res.headers.has(name)) setAnswerHeader(c, name, value);
  };
}

/**
 * Route middleware for answers that carry a secret (tokens, webhook signing secrets, recovery
 * codes, TOTP seeds…): `Cache-Control: no-store`, so no cache or history keeps them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Hono } from "hono";
 * import { noStore } from "@svc/svc";
 *
 * const app = new Hono();
 * app.post("/profile/factors/recovery-codes", noStore, (c) => c.json({ codes: ["7kq2-m9xd"] }));
 *
 * const res = await app.request("/profile/factors/recovery-codes", { method: "POST" });
 * assert.equal(res.headers.get("Cache-Control"), "no-store");
 * ```
 */
export const noStore: MiddlewareHandler<SvcEnv> = async (c, next): Promise<void> => {
  await next();
  setAnswerHeader(c, "Cache-Control", "no-store");
};
