/**
 * Request input validation: bodies are JSON only, within the shape limits (nesting depth and
 * members per object or array, `SVC_MAX_JSON_DEPTH`, `SVC_MAX_JSON_MEMBERS`, checked on the text
 * before it is parsed), checked against a valibot schema; no string that reaches svc (body, key
 * included, path or query parameter) may hold U+0000, which Postgres refuses in text.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import * as v from "valibot";
import { SvcError } from "../core/errors.ts";
import { DEFAULT_JSON_LIMITS, type JsonLimits, jsonTextBreach } from "../core/json-limits.ts";
import { validationError } from "./errors.ts";
import type { SvcEnv } from "./request-id.ts";

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json$/i;

/**
 * Reads the request body as JSON and validates it with `schema`. Throws `SvcError` 400
 * `invalid_json` when the body is not JSON (wrong or missing `Content-Type`, or unparsable),
 * 400 `invalid_request` when it nests deeper or has a wider object or array than the app's
 * JSON limits allow (checked first, on the text, before it is parsed), 400 `invalid_request`
 * when any string in it (a key included) holds U+0000, and 400 `invalid_request` naming the
 * field when it does not match the schema.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import {
 *   createApp,
 *   cryptoRandom,
 *   loadConfig,
 *   parseBody,
 *   type RouteInstaller,
 *   systemClock,
 * } from "@svc/svc";
 *
 * const thingRoutes: RouteInstaller = (app) => {
 *   app.post("/things", async (c) => {
 *     const body = await parseBody(c, v.object({ name: v.string() }));
 *     return c.json({ name: body.name });
 *   });
 * };
 * const { config } = loadConfig({ env: {} });
 * const app = createApp({
 *   config,
 *   readinessChecks: [],
 *   clock: systemClock,
 *   random: cryptoRandom,
 *   routes: [thingRoutes],
 * });
 *
 * const post = (body: string, contentType = "application/json") =>
 *   app.request("/things", { method: "POST", headers: { "Content-Type": contentType }, body });
 * const ok = await post(JSON.stringify({ name: "lamp" }));
 * assert.deepEqual(await ok.json(), { name: "lamp" });
 * const notJson = await post("name=lamp", "application/x-www-form-urlencoded");
 * assert.equal(notJson.status, 400);
 * assert.equal((await notJson.json()).error.code, "invalid_json");
 * const noName = await post("{}");
 * assert.equal(noName.status, 400);
 * assert.equal((await noName.json()).error.details.issues[0].path, "name"); // invalid_request
 * ```
 */
export async function parseBody<S extends v.GenericSchema>(
  c: Context,
  schema: S,
): Promise<v.InferOutput<S>> {
  const mediaType = (c.req.header("Content-Type") ?? "").split(";")[0].trim();
  if (!JSON_MEDIA_TYPE.test(mediaType)) {
    throw new SvcError(
      "invalid_json",
      "The request body must be JSON (Content-Type: application/json).",
      400,
    );
  }
  return validateJsonText(await c.req.text(), schema, jsonLimitsOf(c));
}

/**
 * The checks of {@link parseBody} on a body's text: the JSON limits (before anything else, in
 * one pass without recursion), then parsing, U+0000 and the schema; the same errors.
 */
export function validateJsonText<S extends v.GenericSchema>(
  text: string,
  schema: S,
  limits: JsonLimits,
): v.InferOutput<S> {
  const breach = jsonTextBreach(text, limits);
  if (breach !== null) throw jsonLimitError(breach.message, breach.limit, limits);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new SvcError("invalid_json", "The request body is not valid JSON.", 400);
  }
  // Parsed JSON holds U+0000 only where its text escapes it (a raw one is not JSON).
  if (text.includes("\\u0000") && containsNul(data)) throw nulError("the request body");
  const result = v.safeParse(schema, data);
  if (!result.success) throw validationError(result.issues);
  return result.output;
}

/** The 400 `invalid_request` of a body over the JSON limits; its details name the limit broken. */
function jsonLimitError(message: string, limit: "depth" | "members", limits: JsonLimits): SvcError {
  return new SvcError("invalid_request", `Invalid request: ${message}`, 400, {
    limit,
    maxJsonDepth: limits.maxDepth,
    maxJsonMembers: limits.maxMembers,
  });
}

/** The context variable {@link jsonLimits} sets and {@link parseBody} reads. */
const JSON_LIMITS_KEY = "jsonLimits";

function jsonLimitsOf(c: Context): JsonLimits {
  return (c.get(JSON_LIMITS_KEY) as JsonLimits | undefined) ?? DEFAULT_JSON_LIMITS;
}

/**
 * Middleware giving {@link parseBody} the app's JSON limits (`server.maxJsonDepth`,
 * `server.maxJsonMembers`); without it the defaults apply (160 levels, 1000 members).
 */
export function jsonLimits(limits: JsonLimits): MiddlewareHandler<SvcEnv> {
  return async (c, next) => {
    c.set(JSON_LIMITS_KEY, limits);
    await next();
  };
}

/**
 * Like {@link parseBody} for routes whose body is optional: a request without a body (no
 * `Content-Type`, no length) validates `{}` instead.
 */
export async function parseOptionalBody<S extends v.GenericSchema>(
  c: Context,
  schema: S,
): Promise<v.InferOutput<S>> {
  const length = c.req.header("Content-Length");
  if (c.req.header("Content-Type") === undefined && (length === undefined || length === "0")) {
    const result = v.safeParse(schema, {});
    if (!result.success) throw validationError(result.issues);
    return result.output;
  }
  return await parseBody(c, schema);
}

/**
 * True when any string in `value` (parsed JSON: object keys included) contains U+0000. Walks
 * with an explicit stack, so no nesting depth overflows it.
 */
export function containsNul(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === "string") {
      if (item.includes("\0")) return true;
    } else if (Array.isArray(item)) {
      for (const member of item) pending.push(member);
    } else if (typeof item === "object" && item !== null) {
      for (const key of Object.keys(item)) {
        if (key.includes("\0")) return true;
        pending.push((item as Record<string, unknown>)[key]);
      }
    }
  }
  return false;
}

/** The 400 `invalid_request` for U+0000 in `where`. */
export function nulError(where: string): SvcError {
  return new SvcError("invalid_request", `Invalid request: ${where} contains U+0000.`, 400);
}

/** U+0000 percent-encoded: the only way it reaches a decoded path or query parameter. */
const ENCODED_NUL = /%00/i;

/**
 * Refuses, with 400 `invalid_request`, a request whose path or query holds U+0000 (`%00`),
 * before any route decodes a parameter from them. Headers cannot carry it (the Fetch API
 * refuses it), and `parseBody` checks bodies.
 */
export function rejectNulInUrl(): MiddlewareHandler<SvcEnv> {
  return async (c, next) => {
    const url = c.req.url;
    const start = url.indexOf("/", url.indexOf("//") + 2);
    if (start >= 0 && ENCODED_NUL.test(url.slice(start))) throw nulError("the URL");
    await next();
  };
}
