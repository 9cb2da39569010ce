/**
 * The request log: one entry per answered request (`SVC_LOG_REQUESTS=true`), with the request id
 * the answer carries, the method, the registered route (never the raw URL, whose path or query
 * may hold a token), the status and the duration. Headers and bodies are never logged.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import type { SvcEnv } from "./request-id.ts";

/** One request as the log records it. */
export interface RequestLogEntry {
  /** The request id the answer carries in `X-Request-Id`. */
  readonly requestId: string;
  /** The HTTP method (`GET`, `POST`…). */
  readonly method: string;
  /** The registered route (`/svc-admin/users/:id`), or `unmatched`. */
  readonly route: string;
  /** The HTTP status of the answer. */
  readonly status: number;
  /** Milliseconds from entering the middleware to the answer, rounded to 0.1 ms. */
  readonly durationMs: number;
}

/** Calls `log` once per answered request (install it after the request id). `now` is a monotonic clock in ms. */
export function requestLog(
  log: (entry: RequestLogEntry) => void,
  now: () => number,
): MiddlewareHandler<SvcEnv> {
  return async (c, next) => {
    const started = now();
    try {
      await next();
    } finally {
      const matched = routePath(c, -1);
      log({
        requestId: c.get("requestId"),
        method: c.req.method,
        route: matched === "*" || matched === "/*" || matched === "" ? "unmatched" : matched,
        status: c.res.status,
        durationMs: Math.round((now() - started) * 10) / 10,
      });
    }
  };
}
