/**
 * What the SCIM routes' modules share (`users.ts`, `groups.ts`, `read.ts`, `discovery.ts`,
 * `bulk.ts`): the plugin's context, the connection store, reading a resource row and showing it,
 * the confinement rule, `If-Match`, events and the suspend/reactivate path.
 *
 * @module
 */
import { sql } from "kysely";
import type { PluginContext, Storage } from "../../mod.ts";
import type { ScimCall } from "./call.ts";
import { invalidSyntax, notFound, ScimError } from "./errors.ts";
import type { PatchOperation } from "./patch.ts";
import { builder } from "./query.ts";
import { etagOf, representation } from "./resources.ts";
import { PATCH_SCHEMA, type ResourceKind, USER_KIND } from "./schema.ts";
import { actorIdOf, type ScimConfig } from "./shared.ts";
import { connectionStore, type ResourceRow, resourceRowOf, type ScimConnection } from "./store.ts";

/** Most resources one list answers. */
export const MAX_COUNT = 200;

/** A JSON object. */
export type Obj = Record<string, unknown>;

/** A resource id. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The SCIM routes' dependencies. */
export interface ScimDeps {
  readonly ctx: PluginContext<ScimConfig>;
  /** The external base URL of a connection. */
  baseUrlOf(connectionId: string): string;
}

/** The shared helpers of the SCIM routes, over `deps`. */
export function scimKit(deps: ScimDeps) {
  const { ctx } = deps;
  const conns = (storage: Pick<Storage, "pluginSql"> = ctx.storage) => connectionStore(storage.pluginSql);

  const userColumns = sql`user_id::text AS id, resource, version, created_at, updated_at`;
  const groupColumns = sql`group_id::text AS id, resource, version, created_at, updated_at`;

  /** The `groups` of users (from the connection's groups' members). */
  const groupsOf = async (db: Storage["pluginSql"], connectionId: string, userIds: string[]) => {
    if (userIds.length === 0) return new Map<string, Obj[]>();
    const rows = await db.query<{ user_id: string; group_id: string; display_name: string }>(
      `SELECT m.value AS user_id, g.group_id::text AS group_id, g.display_name
         FROM scim_groups g, jsonb_array_elements(g.resource -> 'members') AS e(v), LATERAL (SELECT e.v ->> 'value' AS value) m
        WHERE g.connection_id = $1 AND jsonb_typeof(g.resource -> 'members') = 'array' AND m.value = ANY($2::text[])`,
      [connectionId, userIds],
    );
    const out = new Map<string, Obj[]>();
    for (const r of rows) {
      const list = out.get(r.user_id) ?? [];
      list.push({
        value: r.group_id,
        display: r.display_name,
        type: "direct",
        $ref: `../Groups/${r.group_id}`,
      });
      out.set(r.user_id, list);
    }
    return out;
  };

  const loadRow = async (
    db: Storage["pluginSql"],
    kind: ResourceKind,
    connectionId: string,
    id: string,
    forUpdate = false,
  ): Promise<ResourceRow> => {
    if (!UUID.test(id)) throw notFound();
    const table = kind === USER_KIND ? "scim_users" : "scim_groups";
    const key = kind === USER_KIND ? "user_id" : "group_id";
    const cols = kind === USER_KIND ? userColumns : groupColumns;
    const q = sql`SELECT ${cols} FROM ${sql.table(table)} WHERE connection_id = ${connectionId} AND ${
      sql.ref(key)
    } = ${id.toLowerCase()}::uuid ${forUpdate ? sql`FOR UPDATE` : sql``}`.compile(builder);
    const rows = await db.query<Parameters<typeof resourceRowOf>[0]>(q.sql, q.parameters);
    if (rows.length === 0) throw notFound();
    return resourceRowOf(rows[0]);
  };

  const show = async (
    kind: ResourceKind,
    connection: ScimConnection,
    row: ResourceRow,
    groups?: Map<string, Obj[]>,
  ): Promise<Obj> => {
    const extra: Obj = {};
    if (kind === USER_KIND) {
      const g = (groups ?? await groupsOf(ctx.storage.pluginSql, connection.id, [row.id])).get(row.id);
      if (g !== undefined) extra.groups = g;
    }
    return representation(kind, row, deps.baseUrlOf(connection.id), extra);
  };

  const actor = (connection: ScimConnection) => actorIdOf(connection.id);

  /** The user may be changed by the connection: a member of its organization, every grant within it. */
  const confined = async (tx: Storage, connection: ScimConnection, userId: string) => {
    // Someone who left the organization by other means is no longer the connection's.
    if (!(await tx.organizations.isMember(connection.orgId, userId))) throw notFound();
    await ctx.admin.requireConfinedToOrganization(connection.realmId, connection.orgId, {
      kind: "User",
      id: userId,
    }, tx);
  };

  const checkIfMatch = (call: ScimCall, row: ResourceRow) => {
    const ifMatch = call.ifMatch;
    if (ifMatch === undefined || ifMatch === "*") return;
    const tags = ifMatch.split(",").map((t) => t.trim());
    if (!tags.includes(etagOf(row.version)) && !tags.includes(etagOf(row.version).slice(2))) {
      throw new ScimError(412, null, "The resource changed since that version (If-Match).");
    }
  };

  const now = () => new Date(ctx.clock.now());
  const emitOf = (connection: ScimConnection) => (kind: string, data: Obj, userId: string | null = null) => ({
    kind,
    occurredAt: ctx.clock.now(),
    realmId: connection.realmId,
    orgId: connection.orgId,
    userId,
    data: { ...data, scimConnectionId: connection.id },
  });

  /** Applies an `active` change through svc's suspend / reactivate path (after the write committed). */
  const applyActive = async (connection: ScimConnection, userId: string, active: boolean) => {
    const authorize = async (tx: Storage) => {
      await loadRow(tx.pluginSql, USER_KIND, connection.id, userId);
      await confined(tx, connection, userId);
    };
    if (active) await ctx.admin.reactivateUser(connection.realmId, userId, actor(connection), { authorize });
    else {
      await ctx.admin.suspendUser(connection.realmId, userId, actor(connection), {
        reason: "SCIM: active set to false",
        authorize,
      });
    }
  };

  return {
    ctx,
    deps,
    conns,
    userColumns,
    groupColumns,
    groupsOf,
    loadRow,
    show,
    actor,
    confined,
    checkIfMatch,
    now,
    emitOf,
    applyActive,
  };
}

/** The helpers {@link scimKit} builds. */
export type ScimKit = ReturnType<typeof scimKit>;

/** The operations of a PATCH body (`schemas` must name the PatchOp message). */
export function patchOperations(body: Obj): PatchOperation[] {
  const schemas = body.schemas;
  if (!Array.isArray(schemas) || !schemas.includes(PATCH_SCHEMA)) {
    throw invalidSyntax(`A PATCH body names the schema ${PATCH_SCHEMA}.`);
  }
  const ops = body.Operations ?? body.operations;
  if (!Array.isArray(ops)) throw invalidSyntax("Operations must be a list.");
  return ops.map((op, i) => {
    if (typeof op !== "object" || op === null) throw invalidSyntax(`Operations[${i}] must be an object.`);
    return op as PatchOperation;
  });
}
