/**
 * Double-submit CSRF (spec 5.4): a state-changing request that relies on svc's cookies must
 * carry the `X-Svc-Csrf` header equal to the `svc_csrf` cookie. A cross-site page can make
 * the browser send the cookies, but can neither read the CSRF cookie nor set the header.
 *
 * @module
 */
import type { Context } from "hono";
import { constantTimeEqual } from "../../core/digest.ts";
import { SvcError } from "../../core/errors.ts";
import type { SvcEnv } from "../request-id.ts";
import { CSRF_COOKIE, CSRF_HEADER, readCookie } from "./cookies.ts";

/** The CSRF check failed. Code `csrf_failed`, status 403. */
export class CsrfError extends SvcError {
  constructor() {
    super("csrf_failed", `State-changing requests with cookies need the ${CSRF_HEADER} header.`, 403);
  }
}

/** Whether the method changes state (everything but GET, HEAD and OPTIONS). */
export function isStateChanging(method: string): boolean {
  return method !== "GET" && method !== "HEAD" && method !== "OPTIONS";
}

/** Throws `CsrfError` unless the header matches the CSRF cookie. */
export function requireCsrf(c: Context<SvcEnv>): void {
  const cookie = readCookie(c, CSRF_COOKIE);
  const header = c.req.header(CSRF_HEADER);
  if (cookie === undefined || header === undefined || header === "" || !constantTimeEqual(cookie, header)) {
    throw new CsrfError();
  }
}
