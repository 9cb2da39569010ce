/**
 * Request body limits: a body over the limit answers 413 `payload_too_large` before it is
 * buffered. The app applies the default limit (`SVC_MAX_BODY_BYTES`, 64 KiB) to every request; a
 * route that takes files declares its own, larger limit with {@link bodyLimit}, which then
 * replaces the default for that route.
 *
 * A declared `Content-Length` over the limit is refused without reading a byte. Otherwise (no
 * length, chunked, or a length that may lie) the body is read up to the limit and no further,
 * then handed on as a buffer, so it holds on Deno, Bun and Node whatever the client declares.
 * Modelled on Hono's `hono/body-limit`, which trusts `Content-Length`.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import { SvcError } from "../core/errors.ts";
import type { SvcEnv } from "./request-id.ts";

/** The default limit of a request body: 64 KiB, plenty for any JSON request svc takes. */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;

/** 413 `payload_too_large`: the request body is over the route's limit. */
export class PayloadTooLargeError extends SvcError {
  /** An error naming the limit of `maxBytes` bytes, which its details also carry. */
  constructor(maxBytes: number) {
    super(
      "payload_too_large",
      `The request body is larger than the limit of ${maxBytes} bytes.`,
      413,
      { maxBytes },
    );
  }
}

/** Marks a route-level limit so that the app-wide default steps aside for it. */
const ROUTE_LIMIT = Symbol("svc.bodyLimit");

type LimitMiddleware = MiddlewareHandler<SvcEnv> & { [ROUTE_LIMIT]?: number };

/**
 * A route's own body limit, for routes that take more than the default (file imports).
 * Place it before the handler; the app-wide default does not apply to that route.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   bodyLimit,
 *   createApp,
 *   cryptoRandom,
 *   loadConfig,
 *   type RouteInstaller,
 *   systemClock,
 * } from "@svc/svc";
 *
 * const importRoutes: RouteInstaller = (app, deps) => {
 *   app.post("/svc-admin/import", bodyLimit(deps.config.server.maxUploadBytes), async (c) => {
 *     const file = await c.req.arrayBuffer(); // at most maxUploadBytes
 *     return c.json({ bytes: file.byteLength });
 *   });
 * };
 * const { config } = loadConfig({ env: { SVC_MAX_UPLOAD_BYTES: "1048576" } });
 * const app = createApp({
 *   config,
 *   readinessChecks: [],
 *   clock: systemClock,
 *   random: cryptoRandom,
 *   routes: [importRoutes],
 * });
 *
 * // Over the 64 KiB default, within the route's own limit of 1 MiB:
 * const upload = (bytes: number) =>
 *   app.request("/svc-admin/import", { method: "POST", body: new Uint8Array(bytes) });
 * const ok = await upload(200 * 1024);
 * assert.deepEqual(await ok.json(), { bytes: 200 * 1024 });
 * const tooLarge = await upload(2 * 1024 * 1024);
 * assert.equal(tooLarge.status, 413); // payload_too_large
 * ```
 */
export function bodyLimit(maxBytes: number): MiddlewareHandler<SvcEnv> {
  const middleware: LimitMiddleware = (c, next) => enforce(c, next, maxBytes);
  middleware[ROUTE_LIMIT] = maxBytes;
  return middleware;
}

/** The app-wide limit: `maxBytes` for every request whose route declares no {@link bodyLimit}. */
export function defaultBodyLimit(maxBytes: number): MiddlewareHandler<SvcEnv> {
  return (c, next) => {
    const routeDeclaresLimit = matchedRoutes(c).some((route) =>
      (route.handler as LimitMiddleware)[ROUTE_LIMIT] !== undefined
    );
    return routeDeclaresLimit ? next() : enforce(c, next, maxBytes);
  };
}

async function enforce(c: Context<SvcEnv>, next: () => Promise<void>, maxBytes: number): Promise<void> {
  const body = c.req.raw.body;
  if (body === null) return await next();
  const declared = c.req.header("Content-Length");
  if (
    declared !== undefined && c.req.header("Transfer-Encoding") === undefined &&
    /^\d+$/.test(declared) && Number(declared) > maxBytes
  ) {
    return await refuse(body, maxBytes);
  }
  const bytes = await readAtMost(body, maxBytes);
  if (bytes === null) return await refuse(body, maxBytes);
  c.req.raw = new Request(c.req.raw, { body: bytes });
  await next();
}

/** Stops reading (so a server can drop the rest of the upload) and throws the 413. */
async function refuse(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<never> {
  await body.cancel().catch(() => {});
  throw new PayloadTooLargeError(maxBytes);
}

/** The whole body if it has at most `maxBytes` bytes; null (reading stopped) once it has more. */
async function readAtMost(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
): Promise<Uint8Array<ArrayBuffer> | null> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) return null;
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
