/**
 * The SCIM 2.0 service provider (RFC 7644) of each connection, at
 * `{baseUrl}{pathBase}/scim/v2/{connectionId}`: `/ServiceProviderConfig`, `/ResourceTypes`,
 * `/Schemas`, `/Users` and `/Groups`. The caller is the connection's bearer token (current, or
 * the previous one within its overlap). Users are svc users that are members of the
 * connection's organization and that the connection provisioned (or adopted: an existing member
 * whose grants all lie within the organization); groups are organization groups it created.
 * Writes run as one admin mutation each (actor `scim:connection:<id>`, kind `System`), with
 * `user.*` / `group.*` events; `active: false` suspends the user through svc's suspend path
 * (sessions end at once), `active: true` reactivates; DELETE of a user removes it from the
 * organization (or erases it, by the connection's `deleteMode`, when it belongs to no other
 * organization). Before touching a user the connection asks the authority rule that everything
 * the user holds lies within its organization. Every answer is `application/scim+json`; every
 * refusal a SCIM error; every request lands in the connection's provisioning log.
 *
 * This module authenticates, reads bodies and wires the routes; the work is in `users.ts` and
 * `groups.ts` (the writes, which `/Bulk` in `bulk.ts` calls too), `read.ts` (lists and reads),
 * `discovery.ts`, `kit.ts` (what they share) and `openapi.ts` (the entries).
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit, constantTimeEqual, documented, type RouteInstaller, sha256Hex } from "../../mod.ts";
import { errorResponse } from "./answers.ts";
import { bulkHandler } from "./bulk.ts";
import type { ScimCall } from "./call.ts";
import { invalidSyntax, ScimError } from "./errors.ts";
import { GROUP_KIND, USER_KIND } from "./schema.ts";
import { SCIM_PREFIX, TOKEN_PREFIX } from "./shared.ts";
import type { ScimConnection } from "./store.ts";
import { type ScimDeps, scimKit } from "./kit.ts";
import { readHandlers } from "./read.ts";
import { userWrites } from "./users.ts";
import { groupWrites } from "./groups.ts";
import { discovery } from "./discovery.ts";
import { OPERATIONS } from "./openapi.ts";

export type { ScimDeps } from "./kit.ts";

type Obj = Record<string, unknown>;

const connections = new WeakMap<Context, ScimConnection>();

/** The SCIM routes of every connection. */
export function scimRoutes(deps: ScimDeps): RouteInstaller {
  const kit = scimKit(deps);
  const { ctx, conns } = kit;

  /** Authenticates the connection, turns every error into a SCIM error and logs the request. */
  const guard: MiddlewareHandler = async (c, next) => {
    let connection: ScimConnection;
    try {
      connection = await authenticate(c);
    } catch (error) {
      return errorResponse(error);
    }
    connections.set(c, connection);
    await next();
    if (c.error !== undefined) c.res = errorResponse(c.error, ctx.logError);
    const res = c.res;
    let scimType: string | null = null;
    let detail: string | null = null;
    if (res.status >= 400) {
      try {
        const body = await res.clone().json() as { scimType?: string; detail?: string };
        scimType = body.scimType ?? null;
        detail = body.detail ?? null;
      } catch {
        detail = null;
      }
    }
    const id = /\/(?:Users|Groups)\/([0-9a-f-]{36})/i.exec(c.req.path)?.[1] ?? c.res.headers.get("X-Scim-Id");
    try {
      await conns().log(connection.id, {
        at: new Date(ctx.clock.now()),
        method: c.req.method,
        path: c.req.path.slice(c.req.path.indexOf(connection.id) + connection.id.length) || "/",
        status: res.status,
        scimType,
        detail,
        resourceId: id ?? null,
      });
    } catch (error) {
      ctx.logError(`scim: provisioning log: ${(error as Error).message.split("\n")[0]}`);
    }
  };

  const authenticate = async (c: Context): Promise<ScimConnection> => {
    const header = c.req.header("Authorization") ?? "";
    const match = /^Bearer ([A-Za-z0-9_-]{1,200})$/.exec(header);
    const unauthenticated = () => new ScimError(401, null, "A valid bearer token is required.");
    if (match === null || !match[1].startsWith(TOKEN_PREFIX)) throw unauthenticated();
    const hash = sha256Hex(match[1]);
    const found = await conns().byTokenHash(hash, new Date(ctx.clock.now()));
    if (found === null || !constantTimeEqual(found.storedHash, hash)) throw unauthenticated();
    if (found.connection.id !== (c.req.param("connectionId") ?? "").toLowerCase()) throw unauthenticated();
    return found.connection;
  };

  const connectionOf = (c: Context): ScimConnection => connections.get(c)!;

  /** The SCIM call an HTTP request makes. */
  const callOf = (c: Context): ScimCall => ({
    connection: connectionOf(c),
    id: (c.req.param("id") ?? "").toLowerCase(),
    body: () => readJson(c),
    ifMatch: c.req.header("If-Match"),
  });

  /**
   * The request's JSON object body. The routes' body limit is the larger of the single and the
   * bulk limit (so that one wildcard declares it); a body over `maxBytes` is refused here.
   */
  const readJson = async (c: Context, maxBytes = ctx.config.maxBodyBytes): Promise<Obj> => {
    const type = (c.req.header("Content-Type") ?? "").split(";")[0].trim().toLowerCase();
    if (type !== "application/scim+json" && type !== "application/json") {
      throw invalidSyntax("The body must be application/scim+json.");
    }
    const text = await c.req.text();
    if (text.length > maxBytes || new TextEncoder().encode(text).length > maxBytes) {
      throw new ScimError(413, null, `The request body is larger than the limit of ${maxBytes} bytes.`);
    }
    if (text.includes("\u0000") || text.includes("\\u0000")) {
      throw invalidSyntax("The body must not contain U+0000.");
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw invalidSyntax("The body is not JSON.");
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw invalidSyntax("The body must be a JSON object.");
    }
    return body as Obj;
  };

  const { readOne, list } = readHandlers(kit, connectionOf);
  const found = discovery(kit);

  /** Every write, by resource endpoint and method: the routes' and the bulk operations' one code path. */
  const writes = {
    Users: userWrites(kit),
    Groups: groupWrites(kit),
  } as const;

  const bulk = bulkHandler({
    writes,
    maxOperations: ctx.config.bulkMaxOperations,
    maxOperationBytes: ctx.config.maxBodyBytes,
    log: (connection, entry) => conns().log(connection.id, { at: new Date(ctx.clock.now()), ...entry }),
    logError: ctx.logError,
  });

  return documented((app) => {
    const base = `${SCIM_PREFIX}/:connectionId`;
    app.use(`${base}/*`, guard);
    app.use(`${base}/*`, bodyLimit(Math.max(ctx.config.maxBodyBytes, ctx.config.bulkMaxPayloadBytes)));
    app.post(`${base}/Bulk`, async (c) => {
      // A body over maxPayloadSize is refused with 413 while it is read.
      return await bulk(connectionOf(c), await readJson(c, ctx.config.bulkMaxPayloadBytes));
    });
    app.get(`${base}/ServiceProviderConfig`, (c) => found.serviceProviderConfig(connectionOf(c)));
    app.get(`${base}/ResourceTypes`, (c) => found.resourceTypes(connectionOf(c)));
    app.get(`${base}/ResourceTypes/:name`, (c) => found.resourceType(connectionOf(c), c.req.param("name")));
    app.get(`${base}/Schemas`, (c) => found.schemas(connectionOf(c)));
    app.get(`${base}/Schemas/:id`, (c) => found.schema(connectionOf(c), c.req.param("id")));
    app.get(`${base}/Users`, list(USER_KIND));
    app.post(`${base}/Users`, (c) => writes.Users.POST(callOf(c)));
    app.get(`${base}/Users/:id`, readOne(USER_KIND));
    app.put(`${base}/Users/:id`, (c) => writes.Users.PUT(callOf(c)));
    app.patch(`${base}/Users/:id`, (c) => writes.Users.PATCH(callOf(c)));
    app.delete(`${base}/Users/:id`, (c) => writes.Users.DELETE(callOf(c)));
    app.get(`${base}/Groups`, list(GROUP_KIND));
    app.post(`${base}/Groups`, (c) => writes.Groups.POST(callOf(c)));
    app.get(`${base}/Groups/:id`, readOne(GROUP_KIND));
    app.put(`${base}/Groups/:id`, (c) => writes.Groups.PUT(callOf(c)));
    app.patch(`${base}/Groups/:id`, (c) => writes.Groups.PATCH(callOf(c)));
    app.delete(`${base}/Groups/:id`, (c) => writes.Groups.DELETE(callOf(c)));
    app.all(`${base}/*`, () => {
      throw new ScimError(404, null, "No such SCIM endpoint.");
    });
  }, OPERATIONS);
}
