/**
 * CORS for browser apps on other origins, off unless `SVC_CORS_ORIGINS` lists origins. A listed
 * origin gets its preflights answered (methods, the headers svc reads, credentials, max-age) and
 * its answers marked readable with credentials; any other origin gets no CORS header at all, so
 * the browser keeps its same-origin rule. Every answer carries `Vary: Origin` while CORS is on.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import { CSRF_HEADER } from "./auth/cookies.ts";
import { TRANSPORT_HEADER } from "./auth/login-response.ts";
import { REQUEST_ID_HEADER } from "./request-id.ts";
import { setAnswerHeader } from "./security-headers.ts";
import type { SvcEnv } from "./request-id.ts";

/** Methods a listed origin may use. */
export const CORS_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] as const;

/** Request headers a listed origin may send. */
export const CORS_REQUEST_HEADERS = [
  "Authorization",
  "Content-Type",
  CSRF_HEADER,
  TRANSPORT_HEADER,
  REQUEST_ID_HEADER,
  // DPoP proofs (RFC 9449) of browser apps.
  "DPoP",
] as const;

/** Response headers a listed origin may read: the request id, and DPoP's nonce and challenges. */
export const CORS_EXPOSED_HEADERS = [REQUEST_ID_HEADER, "DPoP-Nonce", "WWW-Authenticate"] as const;

/** How long a browser may cache a preflight answer, in seconds. */
export const CORS_MAX_AGE_SECONDS = 600;

/** The CORS middleware for `origins` (exact origins such as `https://app.example.com`); none: a no-op. */
export function cors(origins: readonly string[]): MiddlewareHandler<SvcEnv> {
  const allowed = new Set(origins);
  return async (c, next) => {
    if (allowed.size === 0) return await next();
    const origin = c.req.header("Origin");
    const listed = origin !== undefined && allowed.has(origin);
    if (listed && c.req.method === "OPTIONS" && c.req.header("Access-Control-Request-Method") !== undefined) {
      return c.body(null, 204, {
        "Access-Control-Allow-Origin": origin,
        "Access-Control-Allow-Credentials": "true",
        "Access-Control-Allow-Methods": CORS_METHODS.join(", "),
        "Access-Control-Allow-Headers": CORS_REQUEST_HEADERS.join(", "),
        "Access-Control-Max-Age": String(CORS_MAX_AGE_SECONDS),
        Vary: "Origin",
      });
    }
    await next();
    setAnswerHeader(c, "Vary", "Origin", true);
    if (!listed) return;
    setAnswerHeader(c, "Access-Control-Allow-Origin", origin);
    setAnswerHeader(c, "Access-Control-Allow-Credentials", "true");
    setAnswerHeader(c, "Access-Control-Expose-Headers", CORS_EXPOSED_HEADERS.join(", "));
  };
}
