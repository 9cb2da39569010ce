/**
 * Team admin routes (teams belong to an organization):
 *
 * | Method | Path | Body → answer |
 * |---|---|---|
 * | POST | `/svc-admin/organizations/{orgId}/teams` | `{name}` → 201 team |
 * | GET | `/svc-admin/organizations/{orgId}/teams` | `?offset=&limit=` → `{items, offset, limit, total}` |
 * | GET, PATCH, DELETE | `/svc-admin/teams/{teamId}` | read; `{name}`; delete → 204 |
 * | GET, POST | `/svc-admin/teams/{teamId}/members` | list; `{userId}` (a member of the organization) → 201 |
 * | DELETE | `/svc-admin/teams/{teamId}/members/{userId}` | → 204 |
 *
 * Fences: `svc:global:teams-*` for every team of the realm, `svc:org:teams-*` for the teams of
 * the caller's organization (others are 404). Membership changes and deletions evict the
 * affected users' subject snapshots (team ids narrow grants).
 *
 * @module
 */
import * as v from "valibot";
import {
  TEAMS_MANAGE_GLOBAL,
  TEAMS_MANAGE_ORG,
  TEAMS_READ_GLOBAL,
  TEAMS_READ_ORG,
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
  pageOf,
  PageQuerySchema,
  parseQuery,
} from "../kit.ts";
import {
  pathId,
  permissionsOf,
  teamOrGroupMemberRoutes,
  TeamSchema,
  teamView,
  visibleOrg,
  visibleTeam,
} from "./shared.ts";

const READ = { global: [TEAMS_READ_GLOBAL, TEAMS_MANAGE_GLOBAL], org: [TEAMS_READ_ORG, TEAMS_MANAGE_ORG] };
const MANAGE = { global: [TEAMS_MANAGE_GLOBAL], org: [TEAMS_MANAGE_ORG] };

const TeamNameField = v.pipe(
  v.string("name must be a string"),
  v.trim(),
  v.minLength(1, "name must not be empty"),
  v.maxLength(200, "name is longer than 200 characters"),
);

/** The body of `POST /svc-admin/organizations/{orgId}/teams` and `PATCH /svc-admin/teams/{teamId}`. */
export const TeamBodySchema = v.strictObject({ name: TeamNameField });

const TAGS = ["Admin: teams"];
const TeamListSchema = v.pipe(listSchema(TeamSchema), v.title("TeamList"));
const teamParam = { teamId: "The team id." };

/** The team routes. */
export function teamRoutes(deps: AdminRouteDeps): RouteInstaller {
  const { storage, snapshots } = deps;
  const membership = teamOrGroupMemberRoutes(deps, {
    kind: "team",
    read: READ,
    manage: MANAGE,
    visible: visibleTeam,
    members: (storage) => storage.teams,
    docs: {
      tags: TAGS,
      listTitle: "TeamMemberList",
      addSummary: "Add a member of the organization to a team",
      addDescription:
        "409 `not_organization_member` for a user outside the organization, `team_member_exists` for a member.",
    },
  });

  const install: RouteInstaller = (app, appDeps) => {
    const now = () => appDeps.clock.now();

    app.post("/svc-admin/organizations/:orgId/teams", async (c) => {
      const scope = await fence(c, snapshots, MANAGE);
      const orgId = pathId(c, "orgId", "organization");
      const body = await parseBody(c, TeamBodySchema);
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        await visibleOrg(tx, scope, orgId);
        const team = await tx.teams.create({ orgId, name: body.name }).catch(asConflict);
        await emit({
          kind: "team.created",
          occurredAt: now(),
          realmId: team.realmId,
          orgId,
          data: { teamId: team.id, name: team.name },
        });
        return {
          value: team,
          audit: { action: "team.create", target: team.id, orgId, after: teamView(team) },
        };
      });
      return c.json(teamView(value), 201);
    });

    app.get("/svc-admin/organizations/:orgId/teams", async (c) => {
      const scope = await fence(c, snapshots, READ);
      const org = await visibleOrg(storage, scope, pathId(c, "orgId", "organization"));
      const page = pageOf(parseQuery(c, PageQuerySchema));
      const all = await storage.teams.listByOrg(org.id);
      return c.json(listBodyOf(all, page, teamView));
    });

    app.get("/svc-admin/teams/:teamId", async (c) => {
      const scope = await fence(c, snapshots, READ);
      return c.json(teamView(await visibleTeam(storage, scope, pathId(c, "teamId", "team"))));
    });

    app.patch("/svc-admin/teams/:teamId", async (c) => {
      const scope = await fence(c, snapshots, MANAGE);
      const teamId = pathId(c, "teamId", "team");
      const body = await parseBody(c, TeamBodySchema);
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const before = await visibleTeam(tx, scope, teamId);
        if (before.name === body.name) return { value: before, audit: null };
        const after = await tx.teams.update(teamId, { name: body.name }).catch(asConflict);
        await emit({
          kind: "team.updated",
          occurredAt: now(),
          realmId: after.realmId,
          orgId: after.orgId,
          data: { teamId, name: after.name },
        });
        return {
          value: after,
          audit: {
            action: "team.update",
            target: teamId,
            orgId: after.orgId,
            before: teamView(before),
            after: teamView(after),
          },
        };
      });
      return c.json(teamView(value));
    });

    app.delete("/svc-admin/teams/:teamId", async (c) => {
      const scope = await fence(c, snapshots, MANAGE);
      const teamId = pathId(c, "teamId", "team");
      const { value: members } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const team = await visibleTeam(tx, scope, teamId);
        const members = (await tx.teams.listMembers(teamId)).map((m) => m.userId);
        if (!await tx.teams.delete(teamId)) throw hidden("team");
        await emit({
          kind: "team.deleted",
          occurredAt: now(),
          realmId: team.realmId,
          orgId: team.orgId,
          data: { teamId, name: team.name, members: members.length },
        });
        return {
          value: members,
          audit: {
            action: "team.delete",
            target: teamId,
            orgId: team.orgId,
            before: { ...teamView(team), members },
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
      path: "/svc-admin/organizations/:orgId/teams",
      summary: "Create a team in an organization",
      tags: TAGS,
      permissions: permissionsOf(MANAGE),
      params: { orgId: "The organization id." },
      body: TeamBodySchema,
      responses: {
        201: { description: "The team (`team_name_taken` on a duplicate name)", body: TeamSchema },
        ...errorResponses(400, 401, 403, 404, 409),
      },
    },
    {
      method: "GET",
      path: "/svc-admin/organizations/:orgId/teams",
      summary: "List an organization's teams",
      description: "By creation time, then id.",
      tags: TAGS,
      permissions: permissionsOf(READ),
      params: { orgId: "The organization id." },
      query: PageQuerySchema,
      responses: {
        200: { description: "A page of teams", body: TeamListSchema },
        ...errorResponses(400, 401, 403, 404),
      },
    },
    {
      method: "GET",
      path: "/svc-admin/teams/:teamId",
      summary: "Read a team",
      tags: TAGS,
      permissions: permissionsOf(READ),
      params: teamParam,
      responses: { 200: { description: "The team", body: TeamSchema }, ...errorResponses(401, 403, 404) },
    },
    {
      method: "PATCH",
      path: "/svc-admin/teams/:teamId",
      summary: "Rename a team",
      tags: TAGS,
      permissions: permissionsOf(MANAGE),
      params: teamParam,
      body: TeamBodySchema,
      responses: {
        200: { description: "The team", body: TeamSchema },
        ...errorResponses(400, 401, 403, 404, 409),
      },
    },
    {
      method: "DELETE",
      path: "/svc-admin/teams/:teamId",
      summary: "Delete a team and its memberships",
      tags: TAGS,
      permissions: permissionsOf(MANAGE),
      params: teamParam,
      responses: { 204: { description: "Deleted" }, ...errorResponses(401, 403, 404) },
    },
    ...membership.operations,
  ]);
}
