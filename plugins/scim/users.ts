/**
 * SCIM Users: create (or adopt an existing member whose grants lie within the organization),
 * replace, PATCH and delete, each one admin mutation with its audit entry and `user.*` events;
 * `active` goes through svc's suspend/reactivate path. The HTTP routes and `/Bulk` call these
 * same handlers.
 *
 * @module
 */
import { scimJson } from "./answers.ts";
import type { ScimHandler } from "./call.ts";
import { notFound, uniqueness } from "./errors.ts";
import { applyPatch } from "./patch.ts";
import { checkUser, etagOf, normalizeResource, svcDisplayName } from "./resources.ts";
import { USER_KIND } from "./schema.ts";
import { resourceRowOf } from "./store.ts";

import { patchOperations, type ScimKit } from "./kit.ts";

/** The Users write handlers over `kit`, by method. */
export function userWrites(kit: ScimKit): Readonly<Record<"POST" | "PUT" | "PATCH" | "DELETE", ScimHandler>> {
  const { ctx, deps, loadRow, show, actor, confined, checkIfMatch, now, emitOf, applyActive } = kit;
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

  return { POST: createUser, PUT: changeUser("put"), PATCH: changeUser("patch"), DELETE: deleteUser };
}
