/**
 * SCIM Groups: organization groups the connection creates, replaces, PATCHes and deletes, each
 * one admin mutation with its audit entry and `group.*` events; members must be users of the
 * connection; a group's name drives its role assignments (`roles.ts`). The HTTP routes and
 * `/Bulk` call these same handlers.
 *
 * @module
 */
import { ConflictError, type Storage } from "../../mod.ts";
import { scimJson } from "./answers.ts";
import type { ScimHandler } from "./call.ts";
import { invalidValue, uniqueness } from "./errors.ts";
import { applyPatch } from "./patch.ts";
import { checkGroup, etagOf, normalizeResource } from "./resources.ts";
import { GROUP_KIND } from "./schema.ts";
import { resourceRowOf, type ScimConnection } from "./store.ts";
import { syncRoles } from "./roles.ts";

import { type Obj, patchOperations, type ScimKit, UUID } from "./kit.ts";

/** The Groups write handlers over `kit`, by method. */
export function groupWrites(
  kit: ScimKit,
): Readonly<Record<"POST" | "PUT" | "PATCH" | "DELETE", ScimHandler>> {
  const { ctx, deps, loadRow, show, actor, confined, checkIfMatch, now, emitOf } = kit;
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

  return { POST: createGroup, PUT: changeGroup("put"), PATCH: changeGroup("patch"), DELETE: deleteGroup };
}
