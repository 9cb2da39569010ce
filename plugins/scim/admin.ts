/**
 * SCIM connections over the admin API, fenced by the plugin's permissions
 * (`scim:global:connections-read|manage` realm-wide, `scim:org:connections-read|manage` for the
 * caller's own organization):
 *
 * | Method | Path | |
 * |---|---|---|
 * | GET | `/svc-admin/scim/connections` | list (`?orgId=&offset=&limit=`) |
 * | POST | `/svc-admin/scim/connections` | create → 201 with `baseUrl` and the bearer `token` (shown once) |
 * | GET | `/svc-admin/scim/connections/{id}` | read |
 * | PATCH | `/svc-admin/scim/connections/{id}` | change `displayName`, `deleteMode`, `groupRoles` |
 * | POST | `/svc-admin/scim/connections/{id}/rotate` | new token; the old one stays valid `overlapSeconds` |
 * | DELETE | `/svc-admin/scim/connections/{id}` | delete (its token stops at once; provisioned users stay) |
 * | GET | `/svc-admin/scim/connections/{id}/log` | the provisioning log, newest first |
 *
 * The token is stored as its SHA-256 (a 256-bit random secret needs no slow hash) and answered
 * once, with `Cache-Control: no-store`. `groupRoles` maps a SCIM group's displayName to roles of
 * the connection's organization, which the caller must be able to hand out. What the caller may
 * not see is 404. Each change appends one audit entry (never the token).
 *
 * @module
 */
import * as v from "valibot";
import {
  documented,
  errorResponses,
  type FenceScope,
  hidden,
  IsoTimeSchema,
  listBodyOf,
  listedOrg,
  listSchema,
  type OperationDoc,
  PAGE_QUERY_ENTRIES,
  pageOf,
  parseBody,
  parseQuery,
  type PluginContext,
  randomToken,
  randomUuid,
  reachable,
  reaches,
  type RouteInstaller,
  scopedPermissions,
  sha256Hex,
  type Storage,
  unchangedView,
  uuidParam,
  ValidationError,
} from "../../mod.ts";
import { syncRoles } from "./roles.ts";
import { connectionStore, type LogEntry, type ScimConnection } from "./store.ts";
import { PERMISSIONS, type ScimConfig, TOKEN_PREFIX } from "./shared.ts";

const { read: READ, manage: MANAGE } = scopedPermissions(PERMISSIONS);
const BASE = "/svc-admin/scim/connections";
const ITEM = `${BASE}/:connectionId`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const noNul = (what: string) =>
  v.check((text: string) => !text.includes("\u0000"), `${what} must not contain U+0000`);
const displayName = v.pipe(
  v.string("displayName must be a string"),
  v.minLength(1, "displayName must not be empty"),
  v.maxLength(200, "displayName is longer than 200 characters"),
  noNul("displayName"),
);
const deleteMode = v.picklist(
  ["remove_membership", "erase"],
  "deleteMode must be remove_membership or erase",
);
const groupRoles = v.pipe(
  v.record(
    v.pipe(v.string(), v.minLength(1), v.maxLength(200), noNul("groupRoles key")),
    v.pipe(
      v.array(v.pipe(v.string(), v.regex(UUID, "groupRoles: each role is a role id"))),
      v.maxLength(20, "groupRoles: at most 20 roles per group"),
    ),
    "groupRoles must map group display names to role ids",
  ),
  v.check((record) => Object.keys(record).length <= 100, "groupRoles: at most 100 groups"),
);

/** The body of `POST /svc-admin/scim/connections`. */
export const CreateConnectionSchema = v.strictObject({
  orgId: v.pipe(v.string("orgId must be a string"), v.regex(UUID, "orgId must be an organization id")),
  displayName,
  deleteMode: v.optional(deleteMode, "remove_membership"),
  groupRoles: v.optional(groupRoles, {}),
});

/** The body of `PATCH /svc-admin/scim/connections/{id}`. */
export const UpdateConnectionSchema = v.strictObject({
  displayName: v.optional(displayName),
  deleteMode: v.optional(deleteMode),
  groupRoles: v.optional(groupRoles),
});

/** The body of `POST …/rotate`. */
export const RotateSchema = v.strictObject({
  overlapSeconds: v.optional(
    v.pipe(
      v.number("overlapSeconds must be a number"),
      v.integer("overlapSeconds must be whole"),
      v.minValue(0, "overlapSeconds must be at least 0"),
      v.maxValue(7 * 86400, "overlapSeconds must be at most 604800 (7 days)"),
    ),
  ),
});

/** The query of the list. */
export const ListQuerySchema = v.strictObject({
  ...PAGE_QUERY_ENTRIES,
  orgId: v.optional(v.pipe(v.string(), v.regex(UUID, "orgId must be an organization id"))),
});

/** The query of the log. */
export const LogQuerySchema = v.strictObject({
  limit: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,3}$/, "limit is 1 to 200"),
      v.transform(Number),
      v.minValue(1),
      v.maxValue(200),
    ),
  ),
});

/** A connection as the API shows it (never the token). */
export const ConnectionSchema = v.pipe(
  v.object({
    id: v.string(),
    realmId: v.string(),
    orgId: v.string(),
    displayName: v.string(),
    baseUrl: v.string(),
    deleteMode: v.string(),
    groupRoles: v.record(v.string(), v.array(v.string())),
    tokenRotatedAt: IsoTimeSchema,
    previousTokenExpiresAt: v.nullable(IsoTimeSchema),
    createdAt: IsoTimeSchema,
    updatedAt: IsoTimeSchema,
  }),
  v.title("ScimConnection"),
);

/** A connection with its new token (creation and rotation). */
export const ConnectionWithTokenSchema = v.pipe(
  v.object({ ...ConnectionSchema.entries, token: v.string() }),
  v.title("ScimConnectionWithToken"),
);

/** A provisioning log entry. */
export const LogEntrySchema = v.pipe(
  v.object({
    at: IsoTimeSchema,
    method: v.string(),
    path: v.string(),
    status: v.number(),
    scimType: v.nullable(v.string()),
    detail: v.nullable(v.string()),
    resourceId: v.nullable(v.string()),
  }),
  v.title("ScimLogEntry"),
);

const TAGS = ["Admin: SCIM"];
const PARAMS = { connectionId: "The connection's id" };

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "GET",
    path: BASE,
    summary: "List SCIM connections",
    tags: TAGS,
    permissions: [...READ.global, ...READ.org],
    query: ListQuerySchema,
    responses: {
      200: { description: "One page, by creation time", body: listSchema(ConnectionSchema) },
      ...errorResponses(400, 401, 403, 404),
    },
  },
  {
    method: "POST",
    path: BASE,
    summary: "Create an organization's SCIM connection",
    description:
      "Answers the SCIM base URL and the bearer token to give the identity provider; the token is shown once (stored hashed).",
    tags: TAGS,
    permissions: [...MANAGE.global, ...MANAGE.org],
    body: CreateConnectionSchema,
    responses: {
      201: { description: "Created (with its token)", body: ConnectionWithTokenSchema },
      ...errorResponses(400, 401, 403, 404),
    },
  },
  {
    method: "GET",
    path: ITEM,
    summary: "Read a SCIM connection",
    tags: TAGS,
    permissions: [...READ.global, ...READ.org],
    params: PARAMS,
    responses: {
      200: { description: "The connection", body: ConnectionSchema },
      ...errorResponses(401, 403, 404),
    },
  },
  {
    method: "PATCH",
    path: ITEM,
    summary: "Change a SCIM connection",
    tags: TAGS,
    permissions: [...MANAGE.global, ...MANAGE.org],
    params: PARAMS,
    body: UpdateConnectionSchema,
    responses: {
      200: { description: "The connection", body: ConnectionSchema },
      ...errorResponses(400, 401, 403, 404),
    },
  },
  {
    method: "POST",
    path: `${ITEM}/rotate`,
    summary: "Rotate a SCIM connection's token",
    description: "A new token, shown once; the previous one stays valid for `overlapSeconds` (default 3600).",
    tags: TAGS,
    permissions: [...MANAGE.global, ...MANAGE.org],
    params: PARAMS,
    body: RotateSchema,
    responses: {
      200: { description: "The connection with its new token", body: ConnectionWithTokenSchema },
      ...errorResponses(400, 401, 403, 404),
    },
  },
  {
    method: "DELETE",
    path: ITEM,
    summary: "Delete a SCIM connection",
    description: "Its tokens stop at once. The users and groups it provisioned stay in svc.",
    tags: TAGS,
    permissions: [...MANAGE.global, ...MANAGE.org],
    params: PARAMS,
    responses: { 204: { description: "Deleted" }, ...errorResponses(401, 403, 404) },
  },
  {
    method: "GET",
    path: `${ITEM}/log`,
    summary: "Read a SCIM connection's provisioning log",
    description: "The most recent requests (up to 200 kept), newest first, with their outcomes.",
    tags: TAGS,
    permissions: [...READ.global, ...READ.org],
    params: PARAMS,
    query: LogQuerySchema,
    responses: {
      200: { description: "Recent requests", body: v.object({ items: v.array(LogEntrySchema) }) },
      ...errorResponses(400, 401, 403, 404),
    },
  },
];

/** The admin routes of the connections. */
export function adminRoutes(
  ctx: PluginContext<ScimConfig>,
  baseUrlOf: (id: string) => string,
): RouteInstaller {
  const store = (tx: Pick<Storage, "pluginSql"> = ctx.storage) => connectionStore(tx.pluginSql);
  const view = (c: ScimConnection) => ({
    id: c.id,
    realmId: c.realmId,
    orgId: c.orgId,
    displayName: c.displayName,
    baseUrl: baseUrlOf(c.id),
    deleteMode: c.deleteMode,
    groupRoles: Object.fromEntries(Object.entries(c.groupRoles).map(([k, r]) => [k, [...r]])),
    tokenRotatedAt: c.tokenRotatedAt.toISOString(),
    previousTokenExpiresAt: c.previousTokenExpiresAt?.toISOString() ?? null,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  });
  const logView = (e: LogEntry) => ({ ...e, at: e.at.toISOString() });
  const newToken = () => {
    const token = `${TOKEN_PREFIX}${randomToken(ctx.random, 32)}`;
    return { token, hash: sha256Hex(token) };
  };
  /** The connection `id` (a UUID) when the caller's scope reaches it; 404 otherwise. */
  const visible = async (scope: FenceScope, id: string, tx?: Storage) =>
    reachable(scope, await store(tx).get(id.toLowerCase()), "connection");
  /** The roles of a mapping must be the organization's own, and the caller must be able to hand them out. */
  const checkRoles = async (
    scope: FenceScope,
    orgId: string,
    mapping: Record<string, string[]> | undefined,
  ) => {
    if (mapping === undefined) return;
    const ids = [...new Set(Object.values(mapping).flat().map((id) => id.toLowerCase()))];
    for (const id of ids) {
      const role = await ctx.storage.roles.get(id);
      if (role === null || role.realmId !== scope.principal.realmId.toLowerCase() || role.orgId !== orgId) {
        throw new ValidationError(
          `Invalid request: groupRoles: ${id} is not a role of the connection's organization.`,
        );
      }
    }
    await ctx.admin.requireMayHandOutRoles(scope, ids);
  };

  return documented((app) => {
    app.get(BASE, async (c) => {
      const scope = await ctx.admin.scope(c, READ);
      const query = parseQuery(c, ListQuerySchema);
      const orgId = listedOrg(scope, query.orgId?.toLowerCase());
      const all = await store().list(scope.principal.realmId.toLowerCase(), orgId);
      return c.json(listBodyOf(all, pageOf(query), view));
    });

    app.post(BASE, async (c) => {
      const scope = await ctx.admin.scope(c, MANAGE);
      const body = await parseBody(c, CreateConnectionSchema);
      const org = await ctx.storage.organizations.get(body.orgId.toLowerCase());
      if (org === null || !reaches(scope, org.realmId, org.id)) throw hidden("organization");
      await checkRoles(scope, org.id, body.groupRoles);
      const { token, hash } = newToken();
      const created = await ctx.admin.mutate(scope.principal, async ({ tx }) => {
        const connection = await store(tx).create({
          id: randomUuid(ctx.random),
          realmId: org.realmId,
          orgId: org.id,
          displayName: body.displayName,
          tokenHash: hash,
          deleteMode: body.deleteMode,
          groupRoles: body.groupRoles,
          now: new Date(ctx.clock.now()),
        });
        return {
          value: connection,
          audit: {
            action: "scim.connection.create",
            target: connection.id,
            orgId: org.id,
            after: view(connection),
          },
        };
      });
      c.header("Cache-Control", "no-store");
      return c.json({ ...view(created), token }, 201);
    });

    app.get(ITEM, async (c) => {
      const scope = await ctx.admin.scope(c, READ);
      return c.json(view(await visible(scope, uuidParam(c, "connectionId", "connection"))));
    });

    app.patch(ITEM, async (c) => {
      const scope = await ctx.admin.scope(c, MANAGE);
      const body = await parseBody(c, UpdateConnectionSchema);
      const found = await visible(scope, uuidParam(c, "connectionId", "connection"));
      await checkRoles(scope, found.orgId, body.groupRoles);
      const members = new Set<string>();
      const after = await ctx.admin.mutate(scope.principal, async ({ tx }) => {
        const before = await visible(scope, found.id, tx);
        const changed = await store(tx).update(before.id, body, new Date(ctx.clock.now()));
        if (changed === null) throw hidden("connection");
        if (unchangedView(view, before, changed)) {
          // Nothing changed: no entry (and the stored updatedAt goes back).
          await store(tx).update(before.id, {}, before.updatedAt);
          return { value: before, audit: null };
        }
        // A new mapping applies to the connection's groups at once.
        const resynced: string[] = [];
        if (JSON.stringify(before.groupRoles) !== JSON.stringify(changed.groupRoles)) {
          const groups = await tx.pluginSql.query<{ id: string; display_name: string }>(
            `SELECT group_id::text AS id, display_name FROM scim_groups WHERE connection_id = $1`,
            [changed.id],
          );
          for (const g of groups) {
            if (await syncRoles(tx, changed, g.id, g.display_name)) resynced.push(g.id);
          }
        }
        for (const groupId of resynced) {
          for (const m of await tx.groups.listMembers(groupId)) members.add(m.userId);
        }
        return {
          value: changed,
          audit: {
            action: "scim.connection.update",
            target: changed.id,
            orgId: changed.orgId,
            before: view(before),
            after: { ...view(changed), groupsResynced: resynced },
          },
        };
      });
      // The members of regrouped roles hold other grants now.
      for (const userId of members) await ctx.admin.invalidateUser(userId);
      return c.json(view(after));
    });

    app.post(`${ITEM}/rotate`, async (c) => {
      const scope = await ctx.admin.scope(c, MANAGE);
      const body = await parseBody(c, RotateSchema);
      const found = await visible(scope, uuidParam(c, "connectionId", "connection"));
      const { token, hash } = newToken();
      const overlap = body.overlapSeconds ?? ctx.config.defaultOverlapSeconds;
      const rotated = await ctx.admin.mutate(scope.principal, async ({ tx }) => {
        await visible(scope, found.id, tx);
        const now = new Date(ctx.clock.now());
        const connection = await store(tx).rotate(
          found.id,
          hash,
          overlap === 0 ? null : new Date(now.getTime() + overlap * 1000),
          now,
        );
        if (connection === null) throw hidden("connection");
        return {
          value: connection,
          audit: {
            action: "scim.connection.rotate_token",
            target: connection.id,
            orgId: connection.orgId,
            after: {
              overlapSeconds: overlap,
              previousTokenExpiresAt: view(connection).previousTokenExpiresAt,
            },
          },
        };
      });
      c.header("Cache-Control", "no-store");
      return c.json({ ...view(rotated), token });
    });

    app.delete(ITEM, async (c) => {
      const scope = await ctx.admin.scope(c, MANAGE);
      const found = await visible(scope, uuidParam(c, "connectionId", "connection"));
      await ctx.admin.mutate(scope.principal, async ({ tx }) => {
        const connection = await visible(scope, found.id, tx);
        if (!await store(tx).delete(connection.id)) throw hidden("connection");
        return {
          value: null,
          audit: {
            action: "scim.connection.delete",
            target: connection.id,
            orgId: connection.orgId,
            before: view(connection),
          },
        };
      });
      return c.body(null, 204);
    });

    app.get(`${ITEM}/log`, async (c) => {
      const scope = await ctx.admin.scope(c, READ);
      const query = parseQuery(c, LogQuerySchema);
      const connection = await visible(scope, uuidParam(c, "connectionId", "connection"));
      const items = await store().readLog(connection.id, query.limit ?? 50);
      return c.json({ items: items.map(logView) });
    });
  }, OPERATIONS);
}
