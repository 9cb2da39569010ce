/**
 * The admin API of policies: grants given directly to a user or a group, realm-wide or in one
 * organization.
 *
 * | Method | Path | |
 * |---|---|---|
 * | POST | `/svc-admin/policies` | create `{name, principalKind, principalId, orgId?, grants}` in one transaction |
 * | GET | `/svc-admin/policies` | list (`?principalKind=&principalId=&orgId=&offset=&limit=`) |
 * | GET, DELETE | `/svc-admin/policies/{policyId}` | read with its grants; delete it and its grants |
 * | POST | `/svc-admin/policies/{policyId}/grants` | add a grant |
 * | POST | `/svc-admin/policies/{policyId}/grants/lookup` | the grant with a logical identity |
 * | DELETE | `/svc-admin/policies/{policyId}/grants/{grantId}` | remove a grant |
 *
 * Grants are validated and guarded like role grants; organization administrators manage the
 * policies of their organization for its members and groups; every change evicts the snapshots
 * of the principal (a group's: each member's).
 *
 * @module
 */
import * as v from "valibot";
import { SvcError } from "../../core/errors.ts";
import { isUuid } from "../../core/ids.ts";
import type { Policy } from "../../core/storage/policies.ts";
import type { Grant } from "../../core/storage/roles.ts";
import type { Storage } from "../../core/storage/storage.ts";
import type { RouteInstaller } from "../app.ts";
import { fence, type FenceScope } from "../auth/fence.ts";
import { documented, errorResponses } from "../openapi/operation.ts";
import { parseBody } from "../validate.ts";
import type { AdminRouteDeps } from "./deps.ts";
import { pinnedGrants, requireMayLiftDenies } from "./authority.ts";
import { escalationGuard } from "./escalation.ts";
import { evictHolders, holdersOfPrincipal } from "./eviction.ts";
import {
  checkGrants,
  grantAuditView,
  grantInput,
  GrantListSchema,
  grantRoutes,
  grantView,
  GrantViewSchema,
} from "./grants.ts";
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
import { requirePrincipal, ROLES_MANAGE, ROLES_READ, targetOrganization, uuidField } from "./role-scope.ts";

const principalKind = v.picklist(["User", "Group"], "principalKind must be User or Group");

/** The body of `POST /svc-admin/policies`. */
export const CreatePolicySchema = v.strictObject({
  name: v.pipe(
    v.string("name must be a string"),
    v.trim(),
    v.minLength(1, "name must not be empty"),
    v.maxLength(200, "name is longer than 200 characters"),
  ),
  principalKind,
  principalId: uuidField("principalId"),
  orgId: v.optional(
    v.pipe(uuidField("orgId"), v.description("The organization the grants apply in; absent: realm-wide.")),
  ),
  grants: v.optional(GrantListSchema, []),
});

/** The query of `GET /svc-admin/policies`. */
export const ListPoliciesQuerySchema = v.object({
  principalKind: v.optional(v.pipe(principalKind, v.description("With principalId: this principal's."))),
  principalId: v.optional(v.pipe(uuidField("principalId"), v.description("With principalKind."))),
  orgId: v.optional(v.pipe(uuidField("orgId"), v.description("Only this organization's policies."))),
  ...PAGE_QUERY_ENTRIES,
});

/** A policy as the API shows it. */
export const PolicyViewSchema = v.pipe(
  v.object({
    id: v.string(),
    realmId: v.string(),
    orgId: v.nullable(v.string()),
    name: v.string(),
    principalKind: v.picklist(["User", "Group"]),
    principalId: v.string(),
    createdAt: v.string(),
  }),
  v.title("AdminPolicy"),
);

/** A policy with its grants. */
export const PolicyWithGrantsSchema = v.pipe(
  v.object({ ...PolicyViewSchema.entries, grants: v.array(GrantViewSchema) }),
  v.title("AdminPolicyWithGrants"),
);

/** The view of a policy. */
export function policyView(p: Policy): v.InferOutput<typeof PolicyViewSchema> {
  return {
    id: p.id,
    realmId: p.realmId,
    orgId: p.orgId,
    name: p.name,
    principalKind: p.principalKind,
    principalId: p.principalId,
    createdAt: p.createdAt.toISOString(),
  };
}

function policyAuditView(p: Policy, grants?: readonly Grant[]) {
  const { createdAt: _, realmId: _r, ...rest } = policyView(p);
  return { ...rest, ...(grants === undefined ? {} : { grants: grants.map(grantAuditView) }) };
}

const TAGS = ["Admin: policies"];
const POLICY_ID = { policyId: "The policy's id." };

/** The policy routes. */
export function policyRoutes(deps: AdminRouteDeps): RouteInstaller {
  const { storage, snapshots } = deps;

  /** The policy `id` if the caller may see it, else 404. */
  const visiblePolicy = async (scope: FenceScope, id: string, tx: Storage = storage) => {
    const policy = isUuid(id) ? await tx.policies.get(id) : null;
    if (policy === null || policy.realmId !== scope.principal.realmId.toLowerCase()) throw hidden("policy");
    requireVisible(scope, policy.orgId, "policy");
    return policy;
  };
  const grants = grantRoutes<Policy>(deps, {
    kind: "policy",
    events: { added: "role.policy_grant_added", removed: "role.policy_grant_removed" },
    visible: (tx, scope, id) => visiblePolicy(scope, id, tx),
    grants: (tx) => tx.policies,
    holders: (tx, policy) => holdersOfPrincipal(tx, policy.principalKind, policy.principalId),
    docs: { tags: TAGS },
  });

  return documented((app, appDeps) => {
    const event = (scope: FenceScope, kind: string, p: Policy, data: Record<string, unknown> = {}) => ({
      kind,
      occurredAt: appDeps.clock.now(),
      realmId: scope.principal.realmId,
      orgId: p.orgId,
      userId: p.principalKind === "User" ? p.principalId : null,
      data: {
        policyId: p.id,
        name: p.name,
        principalKind: p.principalKind,
        principalId: p.principalId,
        ...data,
      },
    });

    app.post("/svc-admin/policies", async (c) => {
      const scope = await fence(c, snapshots, ROLES_MANAGE);
      const body = await parseBody(c, CreatePolicySchema);
      checkGrants(body.grants);
      const orgId = await targetOrganization(storage, scope, body.orgId);
      await requirePrincipal(storage, scope, body.principalKind, body.principalId.toLowerCase());
      const guard = await escalationGuard(deps, scope, orgId);
      guard.refuse(body.grants.map((g) => g.pattern));
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const created = await tx.policies.create({
          realmId: scope.principal.realmId,
          orgId,
          name: body.name,
          principalKind: body.principalKind,
          principalId: body.principalId.toLowerCase(),
        }, body.grants.map(grantInput)).catch(asConflict);
        const holders = await holdersOfPrincipal(
          tx,
          created.policy.principalKind,
          created.policy.principalId,
        );
        await emit(event(scope, "role.policy_created", created.policy, { grants: created.grants.length }));
        return {
          value: { ...created, holders },
          audit: {
            action: "policy.create",
            target: created.policy.id,
            orgId,
            after: policyAuditView(created.policy, created.grants),
          },
        };
      });
      await evictHolders(snapshots, value.holders);
      c.header("Location", `/svc-admin/policies/${value.policy.id}`);
      return c.json({ ...policyView(value.policy), grants: value.grants.map(grantView) }, 201);
    });

    app.get("/svc-admin/policies", async (c) => {
      const scope = await fence(c, snapshots, ROLES_READ);
      const query = parseQuery(c, ListPoliciesQuerySchema);
      const page = pageOf(query);
      if ((query.principalKind === undefined) !== (query.principalId === undefined)) {
        throw new SvcError(
          "invalid_request",
          "Invalid request: give principalKind and principalId together.",
          400,
          {
            issues: [{ path: "principalId", message: "give principalKind and principalId together" }],
          },
        );
      }
      const requested = query.orgId?.toLowerCase();
      // Naming an organization the caller may not see: 404, like the organization itself.
      if (requested !== undefined) requireVisible(scope, requested, "organization");
      const own = scope.global ? undefined : scope.orgId!.toLowerCase();
      const result = await storage.policies.listPage(scope.principal.realmId, {
        ...page,
        orgId: own ?? requested,
        principal: query.principalKind === undefined
          ? undefined
          : { kind: query.principalKind, id: query.principalId!.toLowerCase() },
      });
      return c.json(listBody(result.items.map(policyView), page, result.total));
    });

    app.get("/svc-admin/policies/:policyId", async (c) => {
      const scope = await fence(c, snapshots, ROLES_READ);
      const policy = await visiblePolicy(scope, c.req.param("policyId"));
      const grants = await storage.policies.listGrants(policy.id);
      return c.json({ ...policyView(policy), grants: grants.map(grantView) });
    });

    app.delete("/svc-admin/policies/:policyId", async (c) => {
      const scope = await fence(c, snapshots, ROLES_MANAGE);
      // Deleting takes power away and needs no authority over the holders, except where it lifts
      // a Deny: its Deny grants (where they applied) are handed out by the deletion.
      const lifting = await visiblePolicy(scope, c.req.param("policyId"));
      await requireMayLiftDenies(
        deps,
        scope,
        pinnedGrants(await storage.policies.listGrants(lifting.id), lifting.orgId, lifting.id),
      );
      const { value: holders } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const before = await visiblePolicy(scope, c.req.param("policyId"), tx);
        const grants = await tx.policies.listGrants(before.id);
        const holders = await holdersOfPrincipal(tx, before.principalKind, before.principalId);
        if (!(await tx.policies.delete(before.id))) throw hidden("policy");
        await emit(event(scope, "role.policy_deleted", before));
        return {
          value: holders,
          audit: {
            action: "policy.delete",
            target: before.id,
            orgId: before.orgId,
            before: policyAuditView(before, grants),
          },
        };
      });
      await evictHolders(snapshots, holders);
      return c.body(null, 204);
    });

    grants.install(app, event);
  }, [
    {
      method: "POST",
      path: "/svc-admin/policies",
      summary: "Create a policy with its grants",
      description: "Grants given directly to a user or a group, in one atomic write. Grants are " +
        "validated like role grants; `svc:` permissions the caller lacks are refused (403 `escalation_refused`).",
      tags: TAGS,
      permissions: [...ROLES_MANAGE.global, ...ROLES_MANAGE.org],
      body: CreatePolicySchema,
      responses: {
        201: { description: "The policy and its grants", body: PolicyWithGrantsSchema },
        ...errorResponses(400, 401, 403, 404, 409),
      },
    },
    {
      method: "GET",
      path: "/svc-admin/policies",
      summary: "List policies",
      description: "By creation time, then id. Organization administrators see their organization's.",
      tags: TAGS,
      permissions: [...ROLES_READ.global, ...ROLES_READ.org],
      query: ListPoliciesQuerySchema,
      responses: {
        200: { description: "A page of policies", body: listSchema(PolicyViewSchema) },
        ...errorResponses(400, 401, 403),
      },
    },
    {
      method: "GET",
      path: "/svc-admin/policies/:policyId",
      summary: "Read a policy with its grants",
      tags: TAGS,
      permissions: [...ROLES_READ.global, ...ROLES_READ.org],
      params: POLICY_ID,
      responses: {
        200: { description: "The policy", body: PolicyWithGrantsSchema },
        ...errorResponses(401, 403, 404),
      },
    },
    {
      method: "DELETE",
      path: "/svc-admin/policies/:policyId",
      summary: "Delete a policy and its grants",
      tags: TAGS,
      permissions: [...ROLES_MANAGE.global, ...ROLES_MANAGE.org],
      params: POLICY_ID,
      responses: { 204: { description: "Deleted" }, ...errorResponses(401, 403, 404) },
    },
    ...grants.operations,
  ]);
}
