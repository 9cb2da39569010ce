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
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { sql } from "kysely";
import * as v from "valibot";
import {
  bodyLimit,
  ConflictError,
  constantTimeEqual,
  documented,
  type OperationDoc,
  type PluginContext,
  type RouteInstaller,
  sha256Hex,
  type Storage,
} from "../../mod.ts";
import { errorResponse, scimJson } from "./answers.ts";
import { bulkHandler } from "./bulk.ts";
import type { ScimCall, ScimHandler } from "./call.ts";
import { invalidSyntax, invalidValue, notFound, ScimError, uniqueness } from "./errors.ts";
import { parseAttrPath, parseFilter } from "./filter.ts";
import { applyPatch, type PatchOperation } from "./patch.ts";
import { builder, compileFilter, compileSort } from "./query.ts";
import {
  checkGroup,
  checkUser,
  etagOf,
  normalizeResource,
  project,
  representation,
  svcDisplayName,
} from "./resources.ts";
import {
  ENTERPRISE_ATTRIBUTES,
  ENTERPRISE_SCHEMA,
  GROUP_ATTRIBUTES,
  GROUP_KIND,
  GROUP_SCHEMA,
  LIST_SCHEMA,
  PATCH_SCHEMA,
  type ResourceKind,
  schemaAttributes,
  USER_ATTRIBUTES,
  USER_KIND,
  USER_SCHEMA,
} from "./schema.ts";
import { actorIdOf, SCIM_PREFIX, type ScimConfig, TOKEN_PREFIX } from "./shared.ts";
import { connectionStore, type ResourceRow, resourceRowOf, type ScimConnection } from "./store.ts";
import { syncRoles } from "./roles.ts";

/** Most resources one list answers. */
export const MAX_COUNT = 200;

type Obj = Record<string, unknown>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The SCIM routes' dependencies. */
export interface ScimDeps {
  readonly ctx: PluginContext<ScimConfig>;
  /** The external base URL of a connection. */
  baseUrlOf(connectionId: string): string;
}

const connections = new WeakMap<Context, ScimConnection>();

/** The SCIM routes of every connection. */
export function scimRoutes(deps: ScimDeps): RouteInstaller {
  const { ctx } = deps;
  const conns = (storage: Pick<Storage, "pluginSql"> = ctx.storage) => connectionStore(storage.pluginSql);

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

  // -------------------------------------------------------------------------
  // Reading

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

  const readOne = (kind: ResourceKind) => async (c: Context) => {
    const connection = connectionOf(c);
    const row = await loadRow(ctx.storage.pluginSql, kind, connection.id, c.req.param("id") ?? "");
    const etag = etagOf(row.version);
    if (c.req.header("If-None-Match") === etag) {
      return new Response(null, { status: 304, headers: { ETag: etag } });
    }
    const body = project(
      kind,
      await show(kind, connection, row),
      c.req.query("attributes"),
      c.req.query("excludedAttributes"),
    );
    return scimJson(body, 200, { ETag: etag });
  };

  const intParam = (c: Context, name: string, fallback: number, min: number): number => {
    const text = c.req.query(name);
    if (text === undefined || text === "") return fallback;
    if (!/^-?\d{1,9}$/.test(text)) throw invalidValue(`${name} must be an integer.`);
    return Math.max(min, Number(text));
  };

  const list = (kind: ResourceKind) => async (c: Context) => {
    const connection = connectionOf(c);
    const startIndex = intParam(c, "startIndex", 1, 1);
    const count = Math.min(intParam(c, "count", 100, 0), MAX_COUNT);
    const filterText = c.req.query("filter");
    const where = filterText === undefined || filterText === ""
      ? sql`true`
      : compileFilter(kind, parseFilter(filterText));
    const sortBy = c.req.query("sortBy");
    const sortOrder = (c.req.query("sortOrder") ?? "ascending").toLowerCase();
    if (sortOrder !== "ascending" && sortOrder !== "descending") {
      throw invalidValue("sortOrder must be ascending or descending.");
    }
    const dir = sql.raw(sortOrder === "descending" ? "DESC" : "ASC");
    const key = kind === USER_KIND ? "user_id" : "group_id";
    const order = sortBy === undefined || sortBy === ""
      ? sql`created_at, ${sql.ref(key)}`
      : sql`${compileSort(kind, parseAttrPath(sortBy, invalidValue))} ${dir} NULLS LAST, ${sql.ref(key)}`;
    const table = sql.table(kind === USER_KIND ? "scim_users" : "scim_groups");
    const cols = kind === USER_KIND ? userColumns : groupColumns;
    const db = ctx.storage.pluginSql;
    const page = sql`SELECT ${cols}, count(*) OVER () AS total FROM ${table}
      WHERE connection_id = ${connection.id} AND (${where})
      ORDER BY ${order} LIMIT ${count} OFFSET ${startIndex - 1}`.compile(builder);
    const rows = await db.query<Parameters<typeof resourceRowOf>[0] & { total: string | number }>(
      page.sql,
      page.parameters,
    );
    let total = rows.length > 0 ? Number(rows[0].total) : 0;
    if (rows.length === 0) {
      const counted =
        sql`SELECT count(*) AS total FROM ${table} WHERE connection_id = ${connection.id} AND (${where})`
          .compile(builder);
      total = Number((await db.query<{ total: string | number }>(counted.sql, counted.parameters))[0].total);
    }
    const resources = rows.map(resourceRowOf);
    const groups = kind === USER_KIND
      ? await groupsOf(db, connection.id, resources.map((r) => r.id))
      : undefined;
    const attributes = c.req.query("attributes");
    const excluded = c.req.query("excludedAttributes");
    const shown = [];
    for (const row of resources) {
      shown.push(project(kind, await show(kind, connection, row, groups), attributes, excluded));
    }
    return scimJson({
      schemas: [LIST_SCHEMA],
      totalResults: total,
      startIndex,
      itemsPerPage: shown.length,
      Resources: shown,
    });
  };

  // -------------------------------------------------------------------------
  // Writing

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

  const createUser: ScimHandler = async (call) => {
    const { connection } = call;
    const resource = normalizeResource(USER_KIND, await call.body());
    const { userName, email } = checkUser(resource);
    const active = resource.active !== false;
    // A user without `active` is active, and says so.
    resource.active = active;
    const { row, statusNow } = await ctx.admin.mutateAsService(
      connection.realmId,
      actor(connection),
      async ({ tx, emit }) => {
        const db = tx.pluginSql;
        const taken = await db.query(
          `SELECT 1 FROM scim_users WHERE connection_id = $1 AND lower(user_name) = lower($2)`,
          [connection.id, userName],
        );
        if (taken.length > 0) throw uniqueness("userName is already in use.");
        const event = emitOf(connection);
        let user = await tx.users.findByEmail(connection.realmId, email);
        let adopted = false;
        if (user !== null) {
          // An existing account is adopted only when it already belongs to this organization (or
          // the organization's directory deprovisioned it and it belongs to no organization since),
          // no connection manages it, and everything it holds lies within the organization.
          const linked = await db.query(`SELECT 1 FROM scim_users WHERE user_id = $1`, [user.id]);
          if (linked.length > 0 || user.isBreakGlass || user.anonymizedAt !== null) {
            throw uniqueness("userName or email is already in use.");
          }
          if (!(await tx.organizations.isMember(connection.orgId, user.id))) {
            const departed = await db.query(
              `SELECT 1 FROM scim_departed WHERE org_id = $1 AND user_id = $2`,
              [connection.orgId, user.id],
            );
            if (departed.length === 0 || (await tx.organizations.listOrgsOfUser(user.id)).length > 0) {
              throw uniqueness("userName or email is already in use.");
            }
            await tx.organizations.addMember(connection.orgId, user.id);
            await emit(event("user.org_joined", { orgId: connection.orgId }, user.id));
          }
          await db.query(`DELETE FROM scim_departed WHERE org_id = $1 AND user_id = $2`, [
            connection.orgId,
            user.id,
          ]);
          await confined(tx, connection, user.id);
          adopted = true;
        } else {
          user = await tx.users.create({
            realmId: connection.realmId,
            email,
            displayName: svcDisplayName(resource),
            status: active ? "Active" : "Suspended",
          });
          await tx.organizations.addMember(connection.orgId, user.id);
          await emit(event("user.created", { via: "scim" }, user.id));
          await emit(event("user.org_joined", { orgId: connection.orgId }, user.id));
        }
        const at = now();
        const rows = await db.query<Parameters<typeof resourceRowOf>[0]>(
          `INSERT INTO scim_users (connection_id, user_id, user_name, external_id, display_name, active, resource, version, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8, $8)
         RETURNING user_id::text AS id, resource, version, created_at, updated_at`,
          [
            connection.id,
            user.id,
            userName,
            resource.externalId ?? null,
            resource.displayName ?? null,
            active,
            JSON.stringify(resource),
            at,
          ],
        );
        return {
          value: { row: resourceRowOf(rows[0]), statusNow: user.status },
          audit: {
            action: "scim.user.create",
            target: user.id,
            orgId: connection.orgId,
            after: { userName, email, active, adopted, externalId: resource.externalId ?? null },
          },
        };
      },
    );
    if ((statusNow === "Active") !== active) await applyActive(connection, row.id, active);
    await ctx.admin.invalidateUser(row.id);
    return scimJson(await show(USER_KIND, connection, row), 201, {
      Location: `${deps.baseUrlOf(connection.id)}/Users/${row.id}`,
      ETag: etagOf(row.version),
    });
  };

  const changeUser = (mode: "put" | "patch"): ScimHandler => async (call) => {
    const { connection, id } = call;
    const body = await call.body();
    const operations = mode === "patch" ? patchOperations(body) : null;
    const result = await ctx.admin.mutateAsService(
      connection.realmId,
      actor(connection),
      async ({ tx, emit }) => {
        const db = tx.pluginSql;
        const row = await loadRow(db, USER_KIND, connection.id, id, true);
        checkIfMatch(call, row);
        await confined(tx, connection, row.id);
        const next = operations === null
          ? normalizeResource(USER_KIND, body)
          : applyPatch(USER_KIND, row.resource, operations);
        const { userName, email } = checkUser(next);
        const wasActive = row.resource.active !== false;
        const active = next.active !== false;
        next.active = active;
        if (JSON.stringify(next) === JSON.stringify(row.resource)) {
          return { value: { row, activeChanged: null as boolean | null }, audit: null };
        }
        if (userName.toLowerCase() !== String(row.resource.userName).toLowerCase()) {
          const taken = await db.query(
            `SELECT 1 FROM scim_users WHERE connection_id = $1 AND lower(user_name) = lower($2) AND user_id <> $3`,
            [connection.id, userName, row.id],
          );
          if (taken.length > 0) throw uniqueness("userName is already in use.");
        }
        const user = await tx.users.get(row.id);
        if (user === null) throw notFound();
        const changes: { email?: string; displayName?: string | null } = {};
        if (user.email !== email) changes.email = email;
        const shownName = svcDisplayName(next);
        if (user.displayName !== shownName) changes.displayName = shownName;
        if (Object.keys(changes).length > 0) await tx.users.update(user.id, changes);
        const rows = await db.query<Parameters<typeof resourceRowOf>[0]>(
          `UPDATE scim_users SET user_name = $3, external_id = $4, display_name = $5, active = $6, resource = $7,
           version = version + 1, updated_at = $8
         WHERE connection_id = $1 AND user_id = $2
         RETURNING user_id::text AS id, resource, version, created_at, updated_at`,
          [
            connection.id,
            row.id,
            userName,
            next.externalId ?? null,
            next.displayName ?? null,
            active,
            JSON.stringify(next),
            now(),
          ],
        );
        await emit(emitOf(connection)("user.updated", { via: "scim", fields: Object.keys(changes) }, row.id));
        return {
          value: { row: resourceRowOf(rows[0]), activeChanged: wasActive === active ? null : active },
          audit: {
            action: "scim.user.update",
            target: row.id,
            orgId: connection.orgId,
            before: row.resource,
            after: next,
          },
        };
      },
    );
    if (result.activeChanged !== null) await applyActive(connection, result.row.id, result.activeChanged);
    return scimJson(await show(USER_KIND, connection, result.row), 200, { ETag: etagOf(result.row.version) });
  };

  const deleteUser: ScimHandler = async (call) => {
    const { connection, id } = call;
    const erase = await ctx.admin.mutateAsService(
      connection.realmId,
      actor(connection),
      async ({ tx, emit }) => {
        const db = tx.pluginSql;
        const row = await loadRow(db, USER_KIND, connection.id, id, true);
        checkIfMatch(call, row);
        await confined(tx, connection, row.id);
        await tx.organizations.removeMember(connection.orgId, row.id);
        const teams = await tx.teams.listTeamIdsOfUser(row.id, connection.orgId);
        for (const teamId of teams) await tx.teams.removeMember(teamId, row.id);
        const groups = (await tx.groups.listGroupsOfUser(row.id, { orgId: connection.orgId }))
          .filter((g) => g.orgId === connection.orgId);
        for (const group of groups) await tx.groups.removeMember(group.id, row.id);
        await db.query(`DELETE FROM scim_users WHERE connection_id = $1 AND user_id = $2`, [
          connection.id,
          row.id,
        ]);
        // The connection's groups no longer list the user.
        await db.query(
          `UPDATE scim_groups SET resource = jsonb_set(resource, '{members}', COALESCE((
           SELECT jsonb_agg(e.v) FROM jsonb_array_elements(resource -> 'members') AS e(v) WHERE e.v ->> 'value' <> $2
         ), '[]'::jsonb)), version = version + 1, updated_at = $3
         WHERE connection_id = $1 AND jsonb_typeof(resource -> 'members') = 'array'
           AND resource -> 'members' @> jsonb_build_array(jsonb_build_object('value', $2::text))`,
          [connection.id, row.id, now()],
        );
        await emit(emitOf(connection)("user.org_left", { orgId: connection.orgId }, row.id));
        const elsewhere = (await tx.organizations.listOrgsOfUser(row.id)).length > 0;
        if (connection.deleteMode !== "erase" || elsewhere) {
          await db.query(
            `INSERT INTO scim_departed (org_id, user_id, departed_at) VALUES ($1, $2, $3)
             ON CONFLICT (org_id, user_id) DO UPDATE SET departed_at = excluded.departed_at`,
            [connection.orgId, row.id, now()],
          );
        }
        return {
          value: connection.deleteMode === "erase" && !elsewhere,
          audit: {
            action: "scim.user.delete",
            target: row.id,
            orgId: connection.orgId,
            before: { ...row.resource, teamIds: teams, groupIds: groups.map((g) => g.id) },
          },
        };
      },
    );
    if (erase) await ctx.admin.eraseUser(connection.realmId, id, actor(connection));
    await ctx.admin.invalidateUser(id);
    return new Response(null, { status: 204 });
  };

  // -------------------------------------------------------------------------
  // Groups

  /** The member ids of a group resource, checked to be users of the connection. */
  const membersOf = async (
    db: Storage["pluginSql"],
    connection: ScimConnection,
    resource: Obj,
  ): Promise<string[]> => {
    const members = (resource.members ?? []) as { value?: string }[];
    const ids = [...new Set(members.map((m) => String(m.value ?? "").toLowerCase()))];
    if (ids.some((id) => !UUID.test(id))) throw invalidValue("members: each value is the id of a user.");
    if (ids.length === 0) return [];
    const known = await db.query<{ id: string }>(
      `SELECT user_id::text AS id FROM scim_users WHERE connection_id = $1 AND user_id = ANY($2::uuid[])`,
      [connection.id, ids],
    );
    if (known.length !== ids.length) {
      throw invalidValue("members: every member must be a user of this connection.");
    }
    return ids;
  };

  /** Members as stored: `{value, display?}` with lowercase ids, once each. */
  const canonicalMembers = (resource: Obj): Obj => {
    const seen = new Set<string>();
    const members = ((resource.members ?? []) as Obj[]).flatMap((m) => {
      const value = String(m.value ?? "").toLowerCase();
      if (seen.has(value)) return [];
      seen.add(value);
      return [{ value, ...(m.display === undefined ? {} : { display: m.display }) }];
    });
    const out = { ...resource };
    if (members.length > 0) out.members = members;
    else delete out.members;
    return out;
  };

  const createGroup: ScimHandler = async (call) => {
    const { connection } = call;
    const resource = canonicalMembers(normalizeResource(GROUP_KIND, await call.body()));
    const { displayName } = checkGroup(resource);
    const { row, members } = await ctx.admin.mutateAsService(
      connection.realmId,
      actor(connection),
      async ({ tx, emit }) => {
        const db = tx.pluginSql;
        const taken = await db.query(
          `SELECT 1 FROM scim_groups WHERE connection_id = $1 AND lower(display_name) = lower($2)`,
          [connection.id, displayName],
        );
        if (taken.length > 0) throw uniqueness("displayName is already in use.");
        const members = await membersOf(db, connection, resource);
        const event = emitOf(connection);
        const group = await tx.groups.create({
          realmId: connection.realmId,
          orgId: connection.orgId,
          key: `scim-${crypto.randomUUID().slice(0, 18)}`,
          displayName: displayName.slice(0, 200),
        });
        await emit(event("group.created", { groupId: group.id, via: "scim" }));
        for (const userId of members) {
          await confined(tx, connection, userId);
          await tx.groups.addMember(group.id, userId);
          await emit(event("group.member_added", { groupId: group.id }, userId));
        }
        await syncRoles(tx, connection, group.id, displayName);
        const at = now();
        const rows = await db.query<Parameters<typeof resourceRowOf>[0]>(
          `INSERT INTO scim_groups (connection_id, group_id, display_name, external_id, resource, version, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, 1, $6, $6)
         RETURNING group_id::text AS id, resource, version, created_at, updated_at`,
          [connection.id, group.id, displayName, resource.externalId ?? null, JSON.stringify(resource), at],
        );
        return {
          value: { row: resourceRowOf(rows[0]), members },
          audit: {
            action: "scim.group.create",
            target: group.id,
            orgId: connection.orgId,
            after: { displayName, externalId: resource.externalId ?? null, members },
          },
        };
      },
    );
    for (const userId of members) await ctx.admin.invalidateUser(userId);
    return scimJson(await show(GROUP_KIND, connection, row), 201, {
      Location: `${deps.baseUrlOf(connection.id)}/Groups/${row.id}`,
      ETag: etagOf(row.version),
    });
  };

  const changeGroup = (mode: "put" | "patch"): ScimHandler => async (call) => {
    const { connection, id } = call;
    const body = await call.body();
    const operations = mode === "patch" ? patchOperations(body) : null;
    const { row, touched } = await ctx.admin.mutateAsService(
      connection.realmId,
      actor(connection),
      async ({ tx, emit }) => {
        const db = tx.pluginSql;
        const row = await loadRow(db, GROUP_KIND, connection.id, id, true);
        checkIfMatch(call, row);
        const next = canonicalMembers(
          operations === null
            ? normalizeResource(GROUP_KIND, body)
            : applyPatch(GROUP_KIND, row.resource, operations),
        );
        const { displayName } = checkGroup(next);
        if (JSON.stringify(next) === JSON.stringify(row.resource)) {
          return { value: { row, touched: [] as string[] }, audit: null };
        }
        if (displayName.toLowerCase() !== String(row.resource.displayName).toLowerCase()) {
          const taken = await db.query(
            `SELECT 1 FROM scim_groups WHERE connection_id = $1 AND lower(display_name) = lower($2) AND group_id <> $3`,
            [connection.id, displayName, row.id],
          );
          if (taken.length > 0) throw uniqueness("displayName is already in use.");
        }
        const before = new Set(((row.resource.members ?? []) as Obj[]).map((m) => String(m.value)));
        const after = new Set(await membersOf(db, connection, next));
        const added = [...after].filter((m) => !before.has(m));
        const removed = [...before].filter((m) => !after.has(m));
        const event = emitOf(connection);
        for (const userId of added) {
          await confined(tx, connection, userId);
          await tx.groups.addMember(row.id, userId).catch((error) => {
            if (!(error instanceof ConflictError)) throw error;
          });
          await emit(event("group.member_added", { groupId: row.id }, userId));
        }
        for (const userId of removed) {
          await tx.groups.removeMember(row.id, userId);
          await emit(event("group.member_removed", { groupId: row.id }, userId));
        }
        if (displayName !== row.resource.displayName) {
          await tx.groups.update(row.id, { displayName: displayName.slice(0, 200) });
          await syncRoles(tx, connection, row.id, displayName);
        }
        const rows = await db.query<Parameters<typeof resourceRowOf>[0]>(
          `UPDATE scim_groups SET display_name = $3, external_id = $4, resource = $5, version = version + 1, updated_at = $6
         WHERE connection_id = $1 AND group_id = $2
         RETURNING group_id::text AS id, resource, version, created_at, updated_at`,
          [connection.id, row.id, displayName, next.externalId ?? null, JSON.stringify(next), now()],
        );
        await emit(
          event("group.updated", {
            groupId: row.id,
            via: "scim",
            added: added.length,
            removed: removed.length,
          }),
        );
        return {
          // A rename may change the group's roles: every member's grants may change.
          value: {
            row: resourceRowOf(rows[0]),
            touched: displayName !== row.resource.displayName
              ? [...new Set([...before, ...after])]
              : [...added, ...removed],
          },
          audit: {
            action: "scim.group.update",
            target: row.id,
            orgId: connection.orgId,
            before: { displayName: row.resource.displayName, externalId: row.resource.externalId ?? null },
            after: { displayName, externalId: next.externalId ?? null, added, removed },
          },
        };
      },
    );
    for (const userId of touched) await ctx.admin.invalidateUser(userId);
    return scimJson(await show(GROUP_KIND, connection, row), 200, { ETag: etagOf(row.version) });
  };

  const deleteGroup: ScimHandler = async (call) => {
    const { connection, id } = call;
    const members = await ctx.admin.mutateAsService(
      connection.realmId,
      actor(connection),
      async ({ tx, emit }) => {
        const db = tx.pluginSql;
        const row = await loadRow(db, GROUP_KIND, connection.id, id, true);
        checkIfMatch(call, row);
        const members = ((row.resource.members ?? []) as Obj[]).map((m) => String(m.value));
        for (const a of await tx.roles.listAssignmentsForPrincipal("Group", row.id)) {
          await tx.roles.unassign(
            a.id,
          );
        }
        await tx.groups.delete(row.id);
        await db.query(`DELETE FROM scim_groups WHERE connection_id = $1 AND group_id = $2`, [
          connection.id,
          row.id,
        ]);
        await emit(emitOf(connection)("group.deleted", { groupId: row.id, via: "scim" }));
        return {
          value: members,
          audit: {
            action: "scim.group.delete",
            target: row.id,
            orgId: connection.orgId,
            before: row.resource,
          },
        };
      },
    );
    for (const userId of members) await ctx.admin.invalidateUser(userId);
    return new Response(null, { status: 204 });
  };

  // -------------------------------------------------------------------------
  // Discovery

  const serviceProviderConfig = (c: Context) => {
    const connection = connectionOf(c);
    return scimJson({
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"],
      documentationUri: "https://datatracker.ietf.org/doc/html/rfc7644",
      patch: { supported: true },
      bulk: {
        supported: true,
        maxOperations: ctx.config.bulkMaxOperations,
        maxPayloadSize: ctx.config.bulkMaxPayloadBytes,
      },
      filter: { supported: true, maxResults: MAX_COUNT },
      changePassword: { supported: false },
      sort: { supported: true },
      etag: { supported: true },
      authenticationSchemes: [{
        type: "oauthbearertoken",
        name: "Bearer token",
        description: "The connection's bearer token (Authorization: Bearer svc_scim_…)",
        primary: true,
      }],
      meta: {
        resourceType: "ServiceProviderConfig",
        location: `${deps.baseUrlOf(connection.id)}/ServiceProviderConfig`,
      },
    });
  };

  const resourceTypeOf = (connection: ScimConnection, kind: ResourceKind) => ({
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:ResourceType"],
    id: kind.name,
    name: kind.name,
    endpoint: kind.endpoint,
    description: kind.name === "User" ? "Members of the organization" : "Groups of the organization",
    schema: kind.schema,
    schemaExtensions: Object.keys(kind.extensions).map((urn) => ({ schema: urn, required: false })),
    meta: {
      resourceType: "ResourceType",
      location: `${deps.baseUrlOf(connection.id)}/ResourceTypes/${kind.name}`,
    },
  });

  const schemaOf = (connection: ScimConnection, id: string) => {
    const table: Record<string, [string, Parameters<typeof schemaAttributes>[0]]> = {
      [USER_SCHEMA]: ["User", USER_ATTRIBUTES],
      [GROUP_SCHEMA]: ["Group", GROUP_ATTRIBUTES],
      [ENTERPRISE_SCHEMA]: ["EnterpriseUser", ENTERPRISE_ATTRIBUTES],
    };
    const [name, attrs] = table[id];
    return {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Schema"],
      id,
      name,
      description: name,
      attributes: schemaAttributes(attrs),
      meta: { resourceType: "Schema", location: `${deps.baseUrlOf(connection.id)}/Schemas/${id}` },
    };
  };

  const listOf = (resources: unknown[]) =>
    scimJson({
      schemas: [LIST_SCHEMA],
      totalResults: resources.length,
      startIndex: 1,
      itemsPerPage: resources.length,
      Resources: resources,
    });

  /** Every write, by resource endpoint and method: the routes' and the bulk operations' one code path. */
  const writes = {
    Users: { POST: createUser, PUT: changeUser("put"), PATCH: changeUser("patch"), DELETE: deleteUser },
    Groups: { POST: createGroup, PUT: changeGroup("put"), PATCH: changeGroup("patch"), DELETE: deleteGroup },
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
    app.get(`${base}/ServiceProviderConfig`, (c) => serviceProviderConfig(c));
    app.get(`${base}/ResourceTypes`, (c) => {
      const connection = connectionOf(c);
      return listOf([resourceTypeOf(connection, USER_KIND), resourceTypeOf(connection, GROUP_KIND)]);
    });
    app.get(`${base}/ResourceTypes/:name`, (c) => {
      const kind = [USER_KIND, GROUP_KIND].find((k) => k.name === c.req.param("name"));
      if (kind === undefined) throw notFound();
      return scimJson(resourceTypeOf(connectionOf(c), kind));
    });
    app.get(`${base}/Schemas`, (c) => {
      const connection = connectionOf(c);
      return listOf([USER_SCHEMA, GROUP_SCHEMA, ENTERPRISE_SCHEMA].map((id) => schemaOf(connection, id)));
    });
    app.get(`${base}/Schemas/:id`, (c) => {
      const id = [USER_SCHEMA, GROUP_SCHEMA, ENTERPRISE_SCHEMA].find((s) => s === c.req.param("id"));
      if (id === undefined) throw notFound();
      return scimJson(schemaOf(connectionOf(c), id));
    });
    app.get(`${base}/Users`, list(USER_KIND));
    app.post(`${base}/Users`, (c) => createUser(callOf(c)));
    app.get(`${base}/Users/:id`, readOne(USER_KIND));
    app.put(`${base}/Users/:id`, (c) => writes.Users.PUT(callOf(c)));
    app.patch(`${base}/Users/:id`, (c) => writes.Users.PATCH(callOf(c)));
    app.delete(`${base}/Users/:id`, (c) => writes.Users.DELETE(callOf(c)));
    app.get(`${base}/Groups`, list(GROUP_KIND));
    app.post(`${base}/Groups`, (c) => createGroup(callOf(c)));
    app.get(`${base}/Groups/:id`, readOne(GROUP_KIND));
    app.put(`${base}/Groups/:id`, (c) => writes.Groups.PUT(callOf(c)));
    app.patch(`${base}/Groups/:id`, (c) => writes.Groups.PATCH(callOf(c)));
    app.delete(`${base}/Groups/:id`, (c) => writes.Groups.DELETE(callOf(c)));
    app.all(`${base}/*`, () => {
      throw new ScimError(404, null, "No such SCIM endpoint.");
    });
  }, OPERATIONS);
}

const TAGS = ["SCIM 2.0"];
const SCIM_AUTH =
  "The caller is the connection's bearer token (`Authorization: Bearer svc_scim_…`), not a svc session.";
const Resource = v.pipe(
  v.looseObject({ schemas: v.optional(v.array(v.string())), id: v.optional(v.string()) }),
  v.title("ScimResource"),
);
const ListResponse = v.pipe(
  v.looseObject({
    schemas: v.array(v.string()),
    totalResults: v.number(),
    startIndex: v.optional(v.number()),
    itemsPerPage: v.optional(v.number()),
    Resources: v.array(Resource),
  }),
  v.title("ScimListResponse"),
);
const PatchOp = v.pipe(
  v.looseObject({
    schemas: v.array(v.string()),
    Operations: v.array(
      v.looseObject({ op: v.string(), path: v.optional(v.string()), value: v.optional(v.unknown()) }),
    ),
  }),
  v.title("ScimPatchOp"),
);
const BulkRequest = v.pipe(
  v.looseObject({
    schemas: v.array(v.string()),
    failOnErrors: v.optional(v.number()),
    Operations: v.array(
      v.looseObject({
        method: v.string(),
        bulkId: v.optional(v.string()),
        version: v.optional(v.string()),
        path: v.string(),
        data: v.optional(v.unknown()),
      }),
    ),
  }),
  v.title("ScimBulkRequest"),
);
const BulkResponse = v.pipe(
  v.looseObject({
    schemas: v.array(v.string()),
    Operations: v.array(
      v.looseObject({
        method: v.string(),
        bulkId: v.optional(v.string()),
        location: v.optional(v.string()),
        version: v.optional(v.string()),
        status: v.string(),
        response: v.optional(v.unknown()),
      }),
    ),
  }),
  v.title("ScimBulkResponse"),
);
const ErrorBody = v.pipe(
  v.looseObject({
    schemas: v.array(v.string()),
    status: v.string(),
    scimType: v.optional(v.string()),
    detail: v.string(),
  }),
  v.title("ScimError"),
);
const ListQuery = v.looseObject({
  filter: v.optional(v.string()),
  startIndex: v.optional(v.string()),
  count: v.optional(v.string()),
  sortBy: v.optional(v.string()),
  sortOrder: v.optional(v.string()),
  attributes: v.optional(v.string()),
  excludedAttributes: v.optional(v.string()),
});
const ok = (description: string, body: v.GenericSchema = Resource) => ({
  description,
  body,
  mediaType: "application/scim+json",
});
const refusals = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((
      status,
    ) => [status, { description: "A SCIM error", body: ErrorBody, mediaType: "application/scim+json" }]),
  );
const CONNECTION = { connectionId: "The connection's id" };
const ITEM_PARAMS = { ...CONNECTION, id: "The resource's id" };
const BASE_PATH = `${SCIM_PREFIX}/:connectionId`;

function resourceOperations(name: "Users" | "Groups"): OperationDoc[] {
  const one = name === "Users" ? "user" : "group";
  return [
    {
      method: "GET",
      path: `${BASE_PATH}/${name}`,
      summary: `List or filter ${name.toLowerCase()} (SCIM)`,
      description: `${SCIM_AUTH} RFC 7644 filter, sorting, paging and attribute selection.`,
      tags: TAGS,
      auth: "public",
      params: CONNECTION,
      query: ListQuery,
      responses: { 200: ok("A list response", ListResponse), ...refusals(400, 401) },
    },
    {
      method: "POST",
      path: `${BASE_PATH}/${name}`,
      summary: `Create a ${one} (SCIM)`,
      description: SCIM_AUTH,
      tags: TAGS,
      auth: "public",
      params: CONNECTION,
      body: Resource,
      responses: { 201: ok("Created"), ...refusals(400, 401, 403, 409, 413) },
    },
    {
      method: "GET",
      path: `${BASE_PATH}/${name}/:id`,
      summary: `Read a ${one} (SCIM)`,
      description: SCIM_AUTH,
      tags: TAGS,
      auth: "public",
      params: ITEM_PARAMS,
      responses: {
        200: ok(`The ${one}`),
        304: { description: "Not modified (If-None-Match)" },
        ...refusals(401, 404),
      },
    },
    {
      method: "PUT",
      path: `${BASE_PATH}/${name}/:id`,
      summary: `Replace a ${one} (SCIM)`,
      description: SCIM_AUTH,
      tags: TAGS,
      auth: "public",
      params: ITEM_PARAMS,
      body: Resource,
      responses: { 200: ok(`The ${one}`), ...refusals(400, 401, 403, 404, 409, 412, 413) },
    },
    {
      method: "PATCH",
      path: `${BASE_PATH}/${name}/:id`,
      summary: `Change a ${one} (SCIM PATCH)`,
      description: SCIM_AUTH,
      tags: TAGS,
      auth: "public",
      params: ITEM_PARAMS,
      body: PatchOp,
      responses: { 200: ok(`The ${one}`), ...refusals(400, 401, 403, 404, 409, 412, 413) },
    },
    {
      method: "DELETE",
      path: `${BASE_PATH}/${name}/:id`,
      summary: `Delete a ${one} (SCIM)`,
      description: SCIM_AUTH,
      tags: TAGS,
      auth: "public",
      params: ITEM_PARAMS,
      responses: { 204: { description: "Deleted" }, ...refusals(401, 403, 404, 412) },
    },
  ];
}

const OPERATIONS: readonly OperationDoc[] = [
  ...["ServiceProviderConfig", "ResourceTypes", "ResourceTypes/:name", "Schemas", "Schemas/:id"].map((
    what,
  ): OperationDoc => ({
    method: "GET",
    path: `${BASE_PATH}/${what}`,
    summary: `SCIM discovery: ${what.replace("/:name", " (one)").replace("/:id", " (one)")}`,
    description: SCIM_AUTH,
    tags: TAGS,
    auth: "public",
    params: what.endsWith(":name")
      ? { ...CONNECTION, name: "User or Group" }
      : what.endsWith(":id")
      ? { ...CONNECTION, id: "A schema URN" }
      : CONNECTION,
    responses: { 200: ok("The description"), ...refusals(401, 404) },
  })),
  ...resourceOperations("Users"),
  ...resourceOperations("Groups"),
  {
    method: "POST",
    path: `${BASE_PATH}/Bulk`,
    summary: "Several writes in one request (SCIM /Bulk)",
    description:
      `${SCIM_AUTH} RFC 7644 §3.7: POST, PUT, PATCH and DELETE operations on /Users and /Groups, each through the same handler, audit entry and events as its own route (not atomic); \`bulkId:\` references in paths and data; failOnErrors. More operations than maxOperations: 413 tooMany; a body over maxPayloadSize: 413.`,
    tags: TAGS,
    auth: "public",
    params: CONNECTION,
    body: BulkRequest,
    responses: {
      200: ok("A bulk response: each operation's status", BulkResponse),
      ...refusals(400, 401, 413),
    },
  },
];

/** The operations of a PATCH body (`schemas` must name the PatchOp message). */
function patchOperations(body: Obj): PatchOperation[] {
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
