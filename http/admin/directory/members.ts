/**
 * Organization member admin routes (spec 2.10: stable order, creation time then id, offset/limit):
 *
 * | Method | Path | Body → answer |
 * |---|---|---|
 * | GET | `/svc-admin/organizations/{orgId}/members` | `?offset=&limit=` → `{items, offset, limit, total}` |
 * | POST | `/svc-admin/organizations/{orgId}/members` | `{userId}` → 201 membership |
 * | DELETE | `/svc-admin/organizations/{orgId}/members/{userId}` | → 204 |
 *
 * Members are listed by membership creation time, then user id; a member joining while an
 * operator pages never shifts the members that were there (storage gives new memberships a
 * strictly later creation time). Adding a user is realm-wide (`svc:global:members-manage`): an
 * organization admin brings people in by invitation, which the invitee accepts. Removing is also
 * open to the organization's own admin (`svc:org:members-manage`) and takes the user out of the
 * organization's teams and organization-level groups in the same transaction. Adding emits
 * `user.org_joined`, removing `user.org_left`; both evict the user's subject snapshots.
 *
 * @module
 */
import * as v from "valibot";
import {
  MEMBERS_MANAGE_GLOBAL,
  MEMBERS_MANAGE_ORG,
  MEMBERS_READ_GLOBAL,
  MEMBERS_READ_ORG,
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
  listBody,
  listSchema,
  pageOf,
  PageQuerySchema,
  parseQuery,
} from "../kit.ts";
import {
  membershipView,
  OrganizationMemberSchema,
  pathId,
  UserRefSchema,
  visibleOrg,
  visibleUser,
} from "./shared.ts";

const READ = {
  global: [MEMBERS_READ_GLOBAL, MEMBERS_MANAGE_GLOBAL],
  org: [MEMBERS_READ_ORG, MEMBERS_MANAGE_ORG],
};
const ADD = { global: [MEMBERS_MANAGE_GLOBAL] };
const REMOVE = { global: [MEMBERS_MANAGE_GLOBAL], org: [MEMBERS_MANAGE_ORG] };

/** The user joined an organization. */
export const USER_ORG_JOINED = "user.org_joined";
/** The user left (was removed from) an organization. */
export const USER_ORG_LEFT = "user.org_left";

const TAGS = ["Admin: organizations"];
const MemberListSchema = v.pipe(listSchema(OrganizationMemberSchema), v.title("OrganizationMemberList"));

/** The organization member routes. */
export function memberRoutes(deps: AdminRouteDeps): RouteInstaller {
  const { storage, snapshots } = deps;

  const install: RouteInstaller = (app, appDeps) => {
    const now = () => appDeps.clock.now();

    app.get("/svc-admin/organizations/:orgId/members", async (c) => {
      const scope = await fence(c, snapshots, READ);
      const org = await visibleOrg(storage, scope, pathId(c, "orgId", "organization"));
      const page = pageOf(parseQuery(c, PageQuerySchema));
      const [items, total] = await Promise.all([
        storage.organizations.listMembers(org.id, page),
        storage.organizations.countMembers(org.id),
      ]);
      return c.json(listBody(items.map(membershipView), page, total));
    });

    app.post("/svc-admin/organizations/:orgId/members", async (c) => {
      const scope = await fence(c, snapshots, ADD);
      const orgId = pathId(c, "orgId", "organization");
      const body = await parseBody(c, UserRefSchema);
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const org = await visibleOrg(tx, scope, orgId);
        const userId = await visibleUser(tx, scope, body.userId.toLowerCase(), null);
        const membership = await tx.organizations.addMember(orgId, userId).catch(asConflict);
        await emit({
          kind: USER_ORG_JOINED,
          occurredAt: now(),
          realmId: org.realmId,
          orgId,
          userId,
          data: { orgId },
        });
        return {
          value: membership,
          audit: {
            action: "organization.member.add",
            target: userId,
            orgId,
            after: membershipView(membership),
          },
        };
      });
      await snapshots.invalidateUser(value.userId);
      return c.json(membershipView(value), 201);
    });

    app.delete("/svc-admin/organizations/:orgId/members/:userId", async (c) => {
      const scope = await fence(c, snapshots, REMOVE);
      const orgId = pathId(c, "orgId", "organization");
      const userId = pathId(c, "userId", "member");
      await adminMutation(deps, scope, async ({ tx, emit }) => {
        const org = await visibleOrg(tx, scope, orgId);
        if (!(await tx.organizations.removeMember(orgId, userId))) throw hidden("member");
        // Leaving an organization leaves its teams and its organization-level groups too.
        const teams = await tx.teams.listTeamIdsOfUser(userId, orgId);
        for (const teamId of teams) await tx.teams.removeMember(teamId, userId);
        const groups = (await tx.groups.listGroupsOfUser(userId, { orgId })).filter((g) => g.orgId === orgId);
        for (const group of groups) await tx.groups.removeMember(group.id, userId);
        await emit({
          kind: USER_ORG_LEFT,
          occurredAt: now(),
          realmId: org.realmId,
          orgId,
          userId,
          data: { orgId },
        });
        return {
          value: null,
          audit: {
            action: "organization.member.remove",
            target: userId,
            orgId,
            before: { orgId, userId, teamIds: teams, groupIds: groups.map((g) => g.id) },
          },
        };
      });
      await snapshots.invalidateUser(userId);
      return c.body(null, 204);
    });
  };

  return documented(install, [
    {
      method: "GET",
      path: "/svc-admin/organizations/:orgId/members",
      summary: "List an organization's members",
      description: "By membership creation time, then user id: stable while members join.",
      tags: TAGS,
      permissions: [...READ.global, ...READ.org],
      params: { orgId: "The organization id." },
      query: PageQuerySchema,
      responses: {
        200: { description: "A page of members", body: MemberListSchema },
        ...errorResponses(400, 401, 403, 404),
      },
    },
    {
      method: "POST",
      path: "/svc-admin/organizations/:orgId/members",
      summary: "Add a user of the realm to an organization",
      description: "Emits `user.org_joined`. 409 `org_membership_exists` for a member.",
      tags: TAGS,
      permissions: ADD.global,
      params: { orgId: "The organization id." },
      body: UserRefSchema,
      responses: {
        201: { description: "The membership", body: OrganizationMemberSchema },
        ...errorResponses(400, 401, 403, 404, 409),
      },
    },
    {
      method: "DELETE",
      path: "/svc-admin/organizations/:orgId/members/:userId",
      summary: "Remove a member from an organization",
      description:
        "Also removes the user from the organization's teams and organization-level groups, in the " +
        "same transaction. Emits `user.org_left`.",
      tags: TAGS,
      permissions: [...REMOVE.global, ...REMOVE.org],
      params: { orgId: "The organization id.", userId: "The member's user id." },
      responses: { 204: { description: "Removed" }, ...errorResponses(401, 403, 404) },
    },
  ]);
}
