/**
 * Request ids: every request gets one, taken from a sane incoming `X-Request-Id` or drawn at
 * random, kept in the Hono context (`c.get("requestId")`) and echoed on the response.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import { type RandomSource, randomUuid } from "../core/random.ts";
import { setAnswerHeader } from "./security-headers.ts";

import type { SvcEnv } from "./env.ts";

export type { SvcEnv };

/** The header carrying the request id, both ways. */
export const REQUEST_ID_HEADER = "X-Request-Id";

const SANE_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Whether an incoming request id may be reused (at most 128 of `[A-Za-z0-9._-]`). */
export function isSaneRequestId(id: string | undefined | null): id is string {
  return typeof id === "string" && SANE_REQUEST_ID.test(id);
}

/** Middleware assigning the request id; install it first so every response, errors included, carries it. */
export function requestId(random: RandomSource): MiddlewareHandler<SvcEnv> {
  return async (c, next) => {
    const incoming = c.req.header(REQUEST_ID_HEADER);
    const id = isSaneRequestId(incoming) ? incoming : randomUuid(random);
    c.set("requestId", id);
    await next();
    setAnswerHeader(c, REQUEST_ID_HEADER, id);
  };
}
