/**
 * Admin route cases: roles, grants, role assignments, policies. Every target lives in
 * organization A (an organization-level role or policy), so the administrator of A manages it
 * and the administrator of B gets 404; grants are `docs:` permissions, which the escalation
 * guard leaves to anyone who may manage the role.
 */
import type { AdminBed } from "../../../support/admin.ts";
import type { AdminRouteCase } from "../case.ts";

const DOCS = { pattern: "docs:org:read", effect: "Allow" as const };
const unique = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;

/** A fresh organization-level role of organization A with one `docs:` grant. */
export async function roleOfA(bed: AdminBed) {
  return await bed.bed.storage.roles.createWithGrants(
    { realmId: bed.realmId, orgId: bed.orgA, key: unique("role"), displayName: "Role of A" },
    [DOCS],
  );
}

/** A fresh policy of organization A for its plain member, with one `docs:` grant. */
export async function policyOfA(bed: AdminBed) {
  return await bed.bed.storage.policies.create(
    {
      realmId: bed.realmId,
      orgId: bed.orgA,
      name: unique("policy"),
      principalKind: "User",
      principalId: bed.users.plain,
    },
    [DOCS],
  );
}

const orgCase = (
  route: string,
  mutates: boolean,
  status: number,
  prepare: AdminRouteCase["prepare"],
): AdminRouteCase => ({ route, mutates, orgAdmin: true, otherOrg: 404, status, prepare });

/** The cases of this area. */
export const CASES: readonly AdminRouteCase[] = [
  orgCase("POST /svc-admin/roles", true, 201, (bed) =>
    Promise.resolve({
      path: "/svc-admin/roles",
      body: { key: unique("new"), displayName: "New", orgId: bed.orgA, grants: [DOCS] },
    })),
  orgCase(
    "GET /svc-admin/roles",
    false,
    200,
    (bed) => Promise.resolve({ path: `/svc-admin/roles?orgId=${bed.orgA}` }),
  ),
  orgCase("GET /svc-admin/roles/:roleId", false, 200, async (bed) => ({
    path: `/svc-admin/roles/${(await roleOfA(bed)).role.id}`,
  })),
  orgCase("PATCH /svc-admin/roles/:roleId", true, 200, async (bed) => ({
    path: `/svc-admin/roles/${(await roleOfA(bed)).role.id}`,
    body: { displayName: "Renamed" },
    headers: { "If-Match": '"1"' },
  })),
  orgCase("DELETE /svc-admin/roles/:roleId", true, 204, async (bed) => ({
    path: `/svc-admin/roles/${(await roleOfA(bed)).role.id}`,
  })),
  orgCase("POST /svc-admin/roles/:roleId/grants", true, 201, async (bed) => ({
    path: `/svc-admin/roles/${(await roleOfA(bed)).role.id}/grants`,
    body: { pattern: "docs:org:write", effect: "Allow" },
  })),
  orgCase("POST /svc-admin/roles/:roleId/grants/lookup", false, 200, async (bed) => ({
    path: `/svc-admin/roles/${(await roleOfA(bed)).role.id}/grants/lookup`,
    body: DOCS,
  })),
  orgCase("DELETE /svc-admin/roles/:roleId/grants/:grantId", true, 204, async (bed) => {
    const { role, grants } = await roleOfA(bed);
    return { path: `/svc-admin/roles/${role.id}/grants/${grants[0].id}` };
  }),
  orgCase("POST /svc-admin/role-assignments", true, 201, async (bed) => ({
    path: "/svc-admin/role-assignments",
    body: { roleId: (await roleOfA(bed)).role.id, principalKind: "User", principalId: bed.users.plain },
  })),
  orgCase("GET /svc-admin/role-assignments", false, 200, async (bed) => ({
    path: `/svc-admin/role-assignments?roleId=${(await roleOfA(bed)).role.id}`,
  })),
  orgCase("DELETE /svc-admin/role-assignments/:assignmentId", true, 204, async (bed) => {
    const { role } = await roleOfA(bed);
    const assignment = await bed.bed.storage.roles.assign({
      roleId: role.id,
      principalKind: "User",
      principalId: bed.users.plain,
    });
    return { path: `/svc-admin/role-assignments/${assignment.id}` };
  }),
  orgCase("POST /svc-admin/policies", true, 201, (bed) =>
    Promise.resolve({
      path: "/svc-admin/policies",
      body: {
        name: unique("p"),
        principalKind: "User",
        principalId: bed.users.plain,
        orgId: bed.orgA,
        grants: [DOCS],
      },
    })),
  orgCase(
    "GET /svc-admin/policies",
    false,
    200,
    (bed) => Promise.resolve({ path: `/svc-admin/policies?orgId=${bed.orgA}` }),
  ),
  orgCase("GET /svc-admin/policies/:policyId", false, 200, async (bed) => ({
    path: `/svc-admin/policies/${(await policyOfA(bed)).policy.id}`,
  })),
  orgCase("DELETE /svc-admin/policies/:policyId", true, 204, async (bed) => ({
    path: `/svc-admin/policies/${(await policyOfA(bed)).policy.id}`,
  })),
  orgCase("POST /svc-admin/policies/:policyId/grants", true, 201, async (bed) => ({
    path: `/svc-admin/policies/${(await policyOfA(bed)).policy.id}/grants`,
    body: { pattern: "docs:org:write", effect: "Deny" },
  })),
  orgCase("POST /svc-admin/policies/:policyId/grants/lookup", false, 200, async (bed) => ({
    path: `/svc-admin/policies/${(await policyOfA(bed)).policy.id}/grants/lookup`,
    body: DOCS,
  })),
  orgCase("DELETE /svc-admin/policies/:policyId/grants/:grantId", true, 204, async (bed) => {
    const { policy, grants } = await policyOfA(bed);
    return { path: `/svc-admin/policies/${policy.id}/grants/${grants[0].id}` };
  }),
];
