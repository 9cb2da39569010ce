/**
 * The one JSON error shape every svc route answers with:
 *
 * ```json
 * { "error": { "code": "not_found", "message": "…", "requestId": "…", "details": { } } }
 * ```
 *
 * `code` is stable (snake_case, what clients branch on); `message` is for humans and never
 * carries secrets or stack traces; `details` is optional and structured.
 *
 * @module
 */
import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { HTTPException } from "hono/http-exception";
import * as v from "valibot";
import { SvcError } from "../core/errors.ts";
import type { SvcEnv } from "./request-id.ts";

/** The body of every error response. */
export interface ErrorBody {
  error: { code: string; message: string; requestId: string; details?: Record<string, unknown> };
}

/** An error response in the svc shape. */
export function errorResponse(
  c: Context<SvcEnv>,
  status: number,
  code: string,
  message: string,
  details?: Record<string, unknown>,
): Response {
  const body: ErrorBody = {
    error: { code, message, requestId: c.get("requestId") ?? "", ...(details ? { details } : {}) },
  };
  c.header("Cache-Control", "no-store");
  return c.json(body, status as ContentfulStatusCode);
}

/** One validation issue, for `details.issues`: the dotted field path ("" for the whole body) and the problem. */
export interface IssueDetail {
  path: string;
  message: string;
}

/** valibot issues as `details.issues`. */
export function issueDetails(issues: readonly v.BaseIssue<unknown>[]): IssueDetail[] {
  return issues.map((issue) => ({ path: v.getDotPath(issue) ?? "", message: issue.message }));
}

/** The 400 `invalid_request` error for valibot issues; its message names the first bad field. */
export function validationError(issues: readonly v.BaseIssue<unknown>[]): SvcError {
  const details = issueDetails(issues);
  const first = details[0];
  const where = first && first.path !== "" ? `${first.path}: ` : "";
  return new SvcError("invalid_request", `Invalid request: ${where}${first?.message ?? "invalid"}.`, 400, {
    issues: details,
  });
}

const HTTP_CODES: Record<number, string> = {
  400: "bad_request",
  401: "unauthenticated",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  408: "request_timeout",
  413: "payload_too_large",
  415: "unsupported_media_type",
  429: "rate_limited",
};

/**
 * The `app.onError` handler: `SvcError` → its status and code; valibot errors → 400
 * `invalid_request` with the field path; Hono's `HTTPException` → its status; anything else →
 * 500 `internal_error` with a generic message (reported through `logError`, never to the client).
 */
export function errorHandler(logError?: (line: string) => void): ErrorHandler<SvcEnv> {
  return (err, c) => {
    if (err instanceof SvcError) {
      const status = err.status >= 400 && err.status <= 599 ? err.status : 500;
      // An authentication challenge (`WWW-Authenticate: DPoP …`, `DPoP-Nonce`) the error carries.
      const headers = (err as { headers?: unknown }).headers;
      if (typeof headers === "object" && headers !== null) {
        for (const [name, value] of Object.entries(headers)) {
          if (typeof value === "string") c.header(name, value);
        }
      }
      return errorResponse(c, status, err.code, err.message, err.details);
    }
    if (err instanceof v.ValiError) {
      const e = validationError(err.issues);
      return errorResponse(c, e.status, e.code, e.message, e.details);
    }
    if (err instanceof HTTPException && err.status < 500) {
      return errorResponse(
        c,
        err.status,
        HTTP_CODES[err.status] ?? "bad_request",
        err.message || "Bad request.",
      );
    }
    logError?.(
      `internal error (request ${c.get("requestId")}, ${c.req.method} ${new URL(c.req.url).pathname}): ${
        err instanceof Error ? err.stack ?? err.message : String(err)
      }`,
    );
    return errorResponse(c, 500, "internal_error", "An internal error occurred.");
  };
}

/** The `app.notFound` handler: 404 `not_found`. */
export const notFoundHandler: NotFoundHandler<SvcEnv> = (c) =>
  errorResponse(c, 404, "not_found", "No such endpoint.");
