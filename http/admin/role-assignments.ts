/**
 * The admin API of role assignments (spec 2.10):
 *
 * | Method | Path | |
 * |---|---|---|
 * | POST | `/svc-admin/role-assignments` | assign `{roleId, principalKind, principalId, orgId?}` |
 * | GET | `/svc-admin/role-assignments` | list by role (`?roleId=`) or by principal (`?principalKind=&principalId=`) |
 * | DELETE | `/svc-admin/role-assignments/{assignmentId}` | remove an assignment |
 *
 * A principal is a `User`, a `Group` or a `ServiceAccount` of the caller's realm (a service
 * account then holds the role's grants: it is a subject of snapshots). Organization
 * administrators assign their organization's roles to its members and groups. Assigning a role
 * whose grants reach `svc:` permissions the caller lacks is refused (403 `escalation_refused`).
 * Every change evicts the principal's snapshots (a group's: each member's).
 *
 * @module
 */
import * as v from "valibot";
import { isUuid } from "../../core/ids.ts";
import type { RoleAssignment } from "../../core/storage/roles.ts";
import type { RouteInstaller } from "../app.ts";
import { fence, type FenceScope } from "../auth/fence.ts";
import { documented, errorResponses } from "../openapi/operation.ts";
import { parseBody } from "../validate.ts";
import type { AdminRouteDeps } from "./deps.ts";
import { pinnedGrants, requireMayLiftDenies } from "./authority.ts";
import { escalationGuard } from "./escalation.ts";
import { evictHolders, holdersOfPrincipal } from "./eviction.ts";
import {
  adminMutation,
  asConflict,
  hidden,
  listBody,
  listSchema,
  PAGE_QUERY_ENTRIES,
  pageOf,
  parseQuery,
  requireVisible,
} from "./kit.ts";
import { requirePrincipal, ROLES_MANAGE, ROLES_READ, uuidField, visibleRole } from "./role-scope.ts";
import { SvcError } from "../../core/errors.ts";

const principalKind = v.picklist(
  ["User", "Group", "ServiceAccount"],
  "principalKind must be User, Group or ServiceAccount",
);

/** The body of `POST /svc-admin/role-assignments`. */
export const CreateRoleAssignmentSchema = v.strictObject({
  roleId: uuidField("roleId"),
  principalKind,
  principalId: uuidField("principalId"),
  orgId: v.optional(
    v.pipe(
      uuidField("orgId"),
      v.description(
        "Where the assignment applies. An organization-level role: its organization (the default); " +
          "a realm-level role: absent for realm-wide.",
      ),
    ),
  ),
});

/** The query of `GET /svc-admin/role-assignments`: a role, or a principal. */
export const ListRoleAssignmentsQuerySchema = v.object({
  roleId: v.optional(v.pipe(uuidField("roleId"), v.description("The assignments of this role."))),
  principalKind: v.optional(v.pipe(principalKind, v.description("With principalId: this principal's."))),
  principalId: v.optional(v.pipe(uuidField("principalId"), v.description("With principalKind."))),
  ...PAGE_QUERY_ENTRIES,
});

/** A role assignment as the API shows it. */
export const RoleAssignmentViewSchema = v.pipe(
  v.object({
    id: v.string(),
    realmId: v.string(),
    roleId: v.string(),
    principalKind: v.picklist(["User", "Group", "ServiceAccount"]),
    principalId: v.string(),
    orgId: v.nullable(v.string()),
    createdAt: v.string(),
  }),
  v.title("AdminRoleAssignment"),
);

/** The view of an assignment. */
export function assignmentView(a: RoleAssignment): v.InferOutput<typeof RoleAssignmentViewSchema> {
  return {
    id: a.id,
    realmId: a.realmId,
    roleId: a.roleId,
    principalKind: a.principalKind,
    principalId: a.principalId,
    orgId: a.orgId,
    createdAt: a.createdAt.toISOString(),
  };
}

function assignmentAuditView(a: RoleAssignment) {
  const { createdAt: _, realmId: _r, ...rest } = assignmentView(a);
  return rest;
}

const TAGS = ["Admin: roles"];

/** The role assignment routes. */
export function roleAssignmentRoutes(deps: AdminRouteDeps): RouteInstaller {
  const { storage, snapshots } = deps;
  return documented((app, appDeps) => {
    const events = (scope: FenceScope, verb: "assigned" | "unassigned", a: RoleAssignment, key: string) => {
      const base = {
        occurredAt: appDeps.clock.now(),
        realmId: scope.principal.realmId,
        orgId: a.orgId,
        data: { ...assignmentAuditView(a), roleKey: key },
      };
      return [
        { ...base, kind: `role.${verb}`, userId: null },
        ...(a.principalKind === "User"
          ? [{ ...base, kind: `user.role_${verb}`, userId: a.principalId }]
          : []),
      ];
    };

    /** The assignment `id` if the caller may see it (its role's realm, its organization), else 404. */
    const visibleAssignment = async (scope: FenceScope, id: string, tx = storage) => {
      const assignment = isUuid(id) ? await tx.roles.getAssignment(id) : null;
      if (assignment === null || assignment.realmId !== scope.principal.realmId.toLowerCase()) {
        throw hidden("role assignment");
      }
      requireVisible(scope, assignment.orgId, "role assignment");
      return assignment;
    };

    app.post("/svc-admin/role-assignments", async (c) => {
      const scope = await fence(c, snapshots, ROLES_MANAGE);
      const body = await parseBody(c, CreateRoleAssignmentSchema);
      const role = await visibleRole(storage, scope, body.roleId);
      const orgId = role.orgId ?? body.orgId?.toLowerCase() ?? null;
      if (role.orgId !== null && body.orgId !== undefined && body.orgId.toLowerCase() !== role.orgId) {
        throw new SvcError(
          "invalid_request",
          "Invalid request: orgId: an organization-level role is assigned in its organization only.",
          400,
          {
            issues: [{
              path: "orgId",
              message: "an organization-level role is assigned in its organization only",
            }],
          },
        );
      }
      requireVisible(scope, orgId, "organization");
      await requirePrincipal(storage, scope, body.principalKind, body.principalId.toLowerCase());
      const guard = await escalationGuard(deps, scope, orgId);
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        // The role's grants as this transaction sees them.
        guard.refuse((await tx.roles.listGrants(role.id)).map((g) => g.pattern));
        const assignment = await tx.roles.assign({
          roleId: role.id,
          principalKind: body.principalKind,
          principalId: body.principalId.toLowerCase(),
          orgId,
        }).catch(asConflict);
        const holders = await holdersOfPrincipal(tx, assignment.principalKind, assignment.principalId);
        for (const e of events(scope, "assigned", assignment, role.key)) await emit(e);
        return {
          value: { assignment, holders },
          audit: {
            action: "role.assign",
            target: assignment.id,
            orgId: assignment.orgId,
            after: assignmentAuditView(assignment),
          },
        };
      });
      await evictHolders(snapshots, value.holders);
      c.header("Location", `/svc-admin/role-assignments/${value.assignment.id}`);
      return c.json(assignmentView(value.assignment), 201);
    });

    app.get("/svc-admin/role-assignments", async (c) => {
      const scope = await fence(c, snapshots, ROLES_READ);
      const query = parseQuery(c, ListRoleAssignmentsQuerySchema);
      const page = pageOf(query);
      const byPrincipal = query.principalKind !== undefined || query.principalId !== undefined;
      if (
        (query.roleId === undefined) === !byPrincipal ||
        (byPrincipal && !(query.principalKind && query.principalId))
      ) {
        throw new SvcError(
          "invalid_request",
          "Invalid request: give roleId, or principalKind and principalId.",
          400,
          { issues: [{ path: "", message: "give roleId, or principalKind and principalId" }] },
        );
      }
      if (query.roleId !== undefined) await visibleRole(storage, scope, query.roleId);
      const result = await storage.roles.listAssignmentsPage(scope.principal.realmId, {
        ...page,
        roleId: query.roleId?.toLowerCase(),
        principal: byPrincipal
          ? { kind: query.principalKind!, id: query.principalId!.toLowerCase() }
          : undefined,
        // Organization administrators see the assignments in their organization only.
        orgId: scope.global ? undefined : scope.orgId!.toLowerCase(),
      });
      return c.json(listBody(result.items.map(assignmentView), page, result.total));
    });

    app.delete("/svc-admin/role-assignments/:assignmentId", async (c) => {
      const scope = await fence(c, snapshots, ROLES_MANAGE);
      // Unassigning takes power away and needs no authority over the holder, except where it
      // lifts a Deny: the role's Deny grants (where they applied) are handed out by removing it.
      const assigned = await visibleAssignment(scope, c.req.param("assignmentId"));
      const role = await storage.roles.get(assigned.roleId);
      await requireMayLiftDenies(
        deps,
        scope,
        pinnedGrants(
          await storage.roles.listGrants(assigned.roleId),
          assigned.orgId ?? role?.orgId ?? null,
          `role:${role?.key ?? assigned.roleId}`,
        ),
      );
      const { value: holders } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const before = await visibleAssignment(scope, c.req.param("assignmentId"), tx);
        const role = await tx.roles.get(before.roleId);
        const holders = await holdersOfPrincipal(tx, before.principalKind, before.principalId);
        if (!(await tx.roles.unassign(before.id))) throw hidden("role assignment");
        for (const e of events(scope, "unassigned", before, role?.key ?? "")) await emit(e);
        return {
          value: holders,
          audit: {
            action: "role.unassign",
            target: before.id,
            orgId: before.orgId,
            before: assignmentAuditView(before),
          },
        };
      });
      await evictHolders(snapshots, holders);
      return c.body(null, 204);
    });
  }, [
    {
      method: "POST",
      path: "/svc-admin/role-assignments",
      summary: "Assign a role",
      description: "To a user, a group or a service account of the realm. Refused (403 " +
        "`escalation_refused`) when the role's grants reach `svc:` permissions the caller does not hold.",
      tags: TAGS,
      permissions: [...ROLES_MANAGE.global, ...ROLES_MANAGE.org],
      body: CreateRoleAssignmentSchema,
      responses: {
        201: { description: "The assignment", body: RoleAssignmentViewSchema },
        ...errorResponses(400, 401, 403, 404, 409),
      },
    },
    {
      method: "GET",
      path: "/svc-admin/role-assignments",
      summary: "List role assignments by role or by principal",
      description: "By creation time, then id. Organization administrators see those in their organization.",
      tags: TAGS,
      permissions: [...ROLES_READ.global, ...ROLES_READ.org],
      query: ListRoleAssignmentsQuerySchema,
      responses: {
        200: { description: "A page of assignments", body: listSchema(RoleAssignmentViewSchema) },
        ...errorResponses(400, 401, 403, 404),
      },
    },
    {
      method: "DELETE",
      path: "/svc-admin/role-assignments/:assignmentId",
      summary: "Remove a role assignment",
      tags: TAGS,
      permissions: [...ROLES_MANAGE.global, ...ROLES_MANAGE.org],
      params: { assignmentId: "The assignment's id." },
      responses: { 204: { description: "Removed" }, ...errorResponses(401, 403, 404) },
    },
  ]);
}
