/**
 * Request body limits: a body over the limit answers 413 `payload_too_large` before it is
 * buffered. The app applies the default limit (`SVC_MAX_BODY_BYTES`, 64 KiB) to every request; a
 * route that takes files declares its own, larger limit with {@link bodyLimit}, which then
 * replaces the default for that route.
 *
 * A declared `Content-Length` over the limit is refused without reading a byte. From a server
 * that frames bodies by their declared length (`ClientBindings.framedBodies`, which svc's server
 * entry sets), a body declared within the limit (no `Transfer-Encoding`) is read whole in one
 * call, and measured again. Otherwise (no length, chunked, a Request made in process whose length
 * may lie) the body is read up to the limit and no further. Either way it is then handed on as
 * a buffer (Hono's body cache), so the limit holds on Deno, Bun and Node whatever the client
 * declares. Modelled on Hono's `hono/body-limit`, which trusts `Content-Length`.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import { SvcError } from "../core/errors.ts";
import type { ClientBindings } from "./client-ip.ts";
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
  const declared = c.req.header("Content-Length");
  const declaredLength = declared !== undefined && c.req.header("Transfer-Encoding") === undefined &&
      /^\d+$/.test(declared)
    ? Number(declared)
    : null;
  if (declaredLength !== null && declaredLength > maxBytes) {
    const body = c.req.raw.body;
    if (body === null) throw new PayloadTooLargeError(maxBytes);
    return await refuse(body, maxBytes);
  }
  let bytes: Uint8Array<ArrayBuffer> | null;
  if (declaredLength !== null && (c.env as ClientBindings | undefined)?.framedBodies === true) {
    // Framed by its declared length, within the limit: the server delivers at most that many
    // bytes, read in one call (on Node `@hono/node-server` reads them from the socket without a
    // web stream and a second Request). Measured again all the same.
    bytes = new Uint8Array(await c.req.raw.arrayBuffer());
    if (bytes.byteLength > maxBytes) throw new PayloadTooLargeError(maxBytes);
  } else {
    const body = c.req.raw.body;
    if (body === null) return await next();
    bytes = await readAtMost(body, maxBytes);
    if (bytes === null) return await refuse(body, maxBytes);
  }
  keepBody(c, bytes);
  await next();
}

/**
 * Hands the body read to the route through Hono's body cache (`c.req.text()`, `json()`,
 * `arrayBuffer()`, `bytes()`, `parseBody()`…), as bytes and, when first asked, as text, instead of
 * a new `Request` carrying it: on Node that copy cost more than the rest of a small request's body
 * handling. Past this middleware the body is read through `c.req` only, never `c.req.raw`.
 */
function keepBody(c: Context<SvcEnv>, bytes: Uint8Array<ArrayBuffer>): void {
  const cache = c.req.bodyCache as Record<string, Promise<unknown> | undefined>;
  cache.arrayBuffer = Promise.resolve(bytes.buffer);
  let text: Promise<string> | undefined;
  // UTF-8, a leading byte order mark dropped, as `Body.text()` decodes.
  Object.defineProperty(cache, "text", {
    enumerable: true,
    configurable: true,
    get: () => text ??= Promise.resolve(new TextDecoder().decode(bytes)),
  });
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
