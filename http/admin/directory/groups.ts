/**
 * Group admin routes (realm-level groups, `orgId` null, or organization-level groups):
 *
 * | Method | Path | Body → answer |
 * |---|---|---|
 * | POST | `/svc-admin/groups` | `{key, displayName, orgId?}` → 201 group |
 * | GET | `/svc-admin/groups` | `?orgId=&offset=&limit=` → `{items, offset, limit, total}` |
 * | GET, PATCH, DELETE | `/svc-admin/groups/{groupId}` | read; `{displayName}`; delete → 204 |
 * | GET, POST | `/svc-admin/groups/{groupId}/members` | list; `{userId}` → 201 |
 * | DELETE | `/svc-admin/groups/{groupId}/members/{userId}` | → 204 |
 *
 * Fences: `svc:global:groups-*` for every group of the realm; `svc:org:groups-*` for the groups of
 * the caller's organization only (realm-level groups and other organizations' are 404; an
 * organization admin lists with `?orgId=` naming their organization). Members of an
 * organization-level group must be members of the organization. Group roles and policies reach
 * members, so membership changes and deletions evict their subject snapshots.
 *
 * @module
 */
import * as v from "valibot";
import {
  GROUPS_MANAGE_GLOBAL,
  GROUPS_MANAGE_ORG,
  GROUPS_READ_GLOBAL,
  GROUPS_READ_ORG,
} from "../../../core/definitions/permissions/directory.ts";
import type { RouteInstaller } from "../../app.ts";
import { fence } from "../../auth/fence.ts";
import { documented, errorResponses } from "../../openapi/operation.ts";
import { parseBody } from "../../validate.ts";
import type { AdminRouteDeps } from "../deps.ts";
import {
  adminMutation,
  asConflict,
  hidden,
  listBodyOf,
  listSchema,
  PAGE_QUERY_ENTRIES,
  pageOf,
  parseQuery,
  requireVisible,
} from "../kit.ts";
import {
  DisplayNameField,
  GroupSchema,
  groupView,
  IdField,
  KeyField,
  pathId,
  permissionsOf,
  teamOrGroupMemberRoutes,
  visibleGroup,
  visibleOrg,
} from "./shared.ts";
import { handedOutBy, requireMayLiftDenies } from "../authority.ts";

const READ = {
  global: [GROUPS_READ_GLOBAL, GROUPS_MANAGE_GLOBAL],
  org: [GROUPS_READ_ORG, GROUPS_MANAGE_ORG],
};
const MANAGE = { global: [GROUPS_MANAGE_GLOBAL], org: [GROUPS_MANAGE_ORG] };

/** The body of `POST /svc-admin/groups`. */
export const CreateGroupSchema = v.strictObject({
  key: KeyField("key"),
  displayName: DisplayNameField,
  orgId: v.optional(v.nullable(IdField("orgId"))),
});

/** The body of `PATCH /svc-admin/groups/{groupId}`. */
export const UpdateGroupSchema = v.strictObject({ displayName: DisplayNameField });

/** The query of `GET /svc-admin/groups`. */
export const GroupQuerySchema = v.strictObject({
  orgId: v.optional(
    v.pipe(
      IdField("orgId"),
      v.description("Only this organization's groups; absent: every group of the realm (realm-wide fence)."),
    ),
  ),
  search: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(200, "search is longer than 200 characters"),
      v.description("Case-insensitive part of the key or display name."),
    ),
  ),
  ...PAGE_QUERY_ENTRIES,
});

const TAGS = ["Admin: groups"];
const GroupListSchema = v.pipe(listSchema(GroupSchema), v.title("GroupList"));
const groupParam = { groupId: "The group id." };

/** The group routes. */
export function groupRoutes(deps: AdminRouteDeps): RouteInstaller {
  const { storage, snapshots } = deps;
  const membership = teamOrGroupMemberRoutes(deps, {
    kind: "group",
    read: READ,
    manage: MANAGE,
    visible: visibleGroup,
    members: (storage) => storage.groups,
    docs: {
      tags: TAGS,
      listTitle: "GroupMemberList",
      addSummary: "Add a user to a group",
      addDescription:
        "Organization-level groups take members of the organization only (409 `not_organization_member`).",
    },
  });

  const install: RouteInstaller = (app, appDeps) => {
    const now = () => appDeps.clock.now();

    app.post("/svc-admin/groups", async (c) => {
      const scope = await fence(c, snapshots, MANAGE);
      const body = await parseBody(c, CreateGroupSchema);
      const orgId = body.orgId?.toLowerCase() ?? null;
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        if (orgId === null) requireVisible(scope, null, "organization");
        else await visibleOrg(tx, scope, orgId);
        const group = await tx.groups.create({
          realmId: scope.principal.realmId,
          orgId,
          key: body.key,
          displayName: body.displayName,
        }).catch(asConflict);
        await emit({
          kind: "group.created",
          occurredAt: now(),
          realmId: group.realmId,
          orgId,
          data: { groupId: group.id, key: group.key },
        });
        return {
          value: group,
          audit: { action: "group.create", target: group.id, orgId, after: groupView(group) },
        };
      });
      return c.json(groupView(value), 201);
    });

    app.get("/svc-admin/groups", async (c) => {
      const scope = await fence(c, snapshots, READ);
      const query = parseQuery(c, GroupQuerySchema);
      const page = pageOf(query);
      const orgId = query.orgId?.toLowerCase();
      if (orgId === undefined) requireVisible(scope, null, "organization");
      else await visibleOrg(storage, scope, orgId);
      const all = await storage.groups.list(scope.principal.realmId, orgId === undefined ? {} : { orgId });
      const needle = query.search?.trim().toLowerCase();
      const found = needle
        ? all.filter((g) =>
          g.key.toLowerCase().includes(needle) || g.displayName.toLowerCase().includes(needle)
        )
        : all;
      return c.json(listBodyOf(found, page, groupView));
    });

    app.get("/svc-admin/groups/:groupId", async (c) => {
      const scope = await fence(c, snapshots, READ);
      return c.json(groupView(await visibleGroup(storage, scope, pathId(c, "groupId", "group"))));
    });

    app.patch("/svc-admin/groups/:groupId", async (c) => {
      const scope = await fence(c, snapshots, MANAGE);
      const groupId = pathId(c, "groupId", "group");
      const body = await parseBody(c, UpdateGroupSchema);
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const before = await visibleGroup(tx, scope, groupId);
        if (before.displayName === body.displayName) return { value: before, audit: null };
        const after = await tx.groups.update(groupId, { displayName: body.displayName });
        await emit({
          kind: "group.updated",
          occurredAt: now(),
          realmId: after.realmId,
          orgId: after.orgId,
          data: { groupId, displayName: after.displayName },
        });
        return {
          value: after,
          audit: {
            action: "group.update",
            target: groupId,
            orgId: after.orgId,
            before: groupView(before),
            after: groupView(after),
          },
        };
      });
      return c.json(groupView(value));
    });

    app.delete("/svc-admin/groups/:groupId", async (c) => {
      const scope = await fence(c, snapshots, MANAGE);
      const groupId = pathId(c, "groupId", "group");
      // Deleting takes power away and needs no authority over the members, except where it lifts
      // a Deny: the Deny grants of the group's roles are handed out to its members by the deletion.
      await visibleGroup(storage, scope, groupId);
      await requireMayLiftDenies(
        deps,
        scope,
        await handedOutBy(storage, { kind: "Group", id: groupId }) ?? [],
      );
      const { value: members } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const group = await visibleGroup(tx, scope, groupId);
        const members = (await tx.groups.listMembers(groupId)).map((m) => m.userId);
        if (!await tx.groups.delete(groupId)) throw hidden("group");
        await emit({
          kind: "group.deleted",
          occurredAt: now(),
          realmId: group.realmId,
          orgId: group.orgId,
          data: { groupId, key: group.key, members: members.length },
        });
        return {
          value: members,
          audit: {
            action: "group.delete",
            target: groupId,
            orgId: group.orgId,
            before: { ...groupView(group), members },
          },
        };
      });
      for (const userId of members) await snapshots.invalidateUser(userId);
      return c.body(null, 204);
    });

    membership.install(app, appDeps);
  };

  return documented(install, [
    {
      method: "POST",
      path: "/svc-admin/groups",
      summary: "Create a group",
      description: "Realm-level without `orgId` (realm-wide fence), or in an organization.",
      tags: TAGS,
      permissions: permissionsOf(MANAGE),
      body: CreateGroupSchema,
      responses: {
        201: { description: "The group (`group_key_taken` on a duplicate key)", body: GroupSchema },
        ...errorResponses(400, 401, 403, 404, 409),
      },
    },
    {
      method: "GET",
      path: "/svc-admin/groups",
      summary: "List groups",
      description: "By creation time, then id.",
      tags: TAGS,
      permissions: permissionsOf(READ),
      query: GroupQuerySchema,
      responses: {
        200: { description: "A page of groups", body: GroupListSchema },
        ...errorResponses(400, 401, 403, 404),
      },
    },
    {
      method: "GET",
      path: "/svc-admin/groups/:groupId",
      summary: "Read a group",
      tags: TAGS,
      permissions: permissionsOf(READ),
      params: groupParam,
      responses: { 200: { description: "The group", body: GroupSchema }, ...errorResponses(401, 403, 404) },
    },
    {
      method: "PATCH",
      path: "/svc-admin/groups/:groupId",
      summary: "Change a group's display name",
      tags: TAGS,
      permissions: permissionsOf(MANAGE),
      params: groupParam,
      body: UpdateGroupSchema,
      responses: {
        200: { description: "The group", body: GroupSchema },
        ...errorResponses(400, 401, 403, 404),
      },
    },
    {
      method: "DELETE",
      path: "/svc-admin/groups/:groupId",
      summary: "Delete a group and its memberships",
      tags: TAGS,
      permissions: permissionsOf(MANAGE),
      params: groupParam,
      responses: { 204: { description: "Deleted" }, ...errorResponses(401, 403, 404) },
    },
    ...membership.operations,
  ]);
}
