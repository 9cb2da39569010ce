/**
 * The admin API of roles and their grants (spec 2.10):
 *
 * | Method | Path | |
 * |---|---|---|
 * | POST | `/svc-admin/roles` | create `{key, displayName, orgId?, grants}` with its grants in one transaction |
 * | GET | `/svc-admin/roles` | list (`?level=realm\|organization&orgId=&search=&offset=&limit=`) |
 * | GET | `/svc-admin/roles/{roleId}` | read, with its grants; `ETag` |
 * | PATCH | `/svc-admin/roles/{roleId}` | change `{displayName}`; `If-Match` |
 * | DELETE | `/svc-admin/roles/{roleId}` | delete it, its grants and every assignment of it |
 * | POST | `/svc-admin/roles/{roleId}/grants` | add a grant |
 * | POST | `/svc-admin/roles/{roleId}/grants/lookup` | the grant with a logical identity (pattern, effect, condition) |
 * | DELETE | `/svc-admin/roles/{roleId}/grants/{grantId}` | remove a grant |
 *
 * Every grant is checked by the engine's grammar and condition parser (400 with the field) and by
 * the escalation guard (403 `escalation_refused`). The role's version (its `ETag`) moves with each
 * change of the role or its grants. Every change evicts the snapshots of the role's holders.
 *
 * @module
 */
import * as v from "valibot";
import { ConflictError } from "../../core/errors.ts";
import type { Grant, Role } from "../../core/storage/roles.ts";
import { ROLE_VERSION_CHANGED } from "../../core/storage/roles.ts";
import type { Storage } from "../../core/storage/storage.ts";
import type { RouteInstaller } from "../app.ts";
import { fence, type FenceScope } from "../auth/fence.ts";
import { documented, errorResponses } from "../openapi/operation.ts";
import { parseBody } from "../validate.ts";
import type { AdminRouteDeps } from "./deps.ts";
import { pinnedGrants, requireMayLiftDenies } from "./authority.ts";
import { escalationGuard } from "./escalation.ts";
import { evictHolders, holdersOfRole } from "./eviction.ts";
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
  changesNothing,
  checkVersion,
  hidden,
  ifMatchVersion,
  listBody,
  listSchema,
  PAGE_QUERY_ENTRIES,
  pageOf,
  parseQuery,
  PreconditionFailedError,
  requireVisible,
  setVersionTag,
} from "./kit.ts";
import { ROLES_MANAGE, ROLES_READ, targetOrganization, uuidField, visibleRole } from "./role-scope.ts";

const key = v.pipe(
  v.string("key must be a string"),
  v.regex(/^[a-z0-9][a-z0-9_.:-]{0,99}$/, "key is 1–100 characters of a-z, 0-9, _ . : - (lowercase first)"),
);
const displayName = v.pipe(
  v.string("displayName must be a string"),
  v.trim(),
  v.minLength(1, "displayName must not be empty"),
  v.maxLength(200, "displayName is longer than 200 characters"),
);

/** The body of `POST /svc-admin/roles`. */
export const CreateRoleSchema = v.strictObject({
  key: v.pipe(key, v.description("Unique per realm level or organization.")),
  displayName,
  orgId: v.optional(
    v.pipe(
      uuidField("orgId"),
      v.description("An organization-level role of this organization; absent: realm-level."),
    ),
  ),
  grants: v.optional(GrantListSchema, []),
});

/** The body of `PATCH /svc-admin/roles/{roleId}`. */
export const UpdateRoleSchema = v.strictObject({ displayName: v.optional(displayName) });

/** The query of `GET /svc-admin/roles`. */
export const ListRolesQuerySchema = v.object({
  level: v.optional(
    v.pipe(
      v.picklist(["realm", "organization"], "level must be realm or organization"),
      v.description("Only realm-level roles, or only organization-level ones."),
    ),
  ),
  orgId: v.optional(v.pipe(uuidField("orgId"), v.description("Only this organization's roles."))),
  search: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(100, "search is longer than 100 characters"),
      v.description("Part of the key."),
    ),
  ),
  ...PAGE_QUERY_ENTRIES,
});

/** A role as the API shows it. */
export const RoleViewSchema = v.pipe(
  v.object({
    id: v.string(),
    realmId: v.string(),
    orgId: v.nullable(v.string()),
    key: v.string(),
    displayName: v.string(),
    version: v.pipe(v.number(), v.description("The ETag's value; moves with every change.")),
    createdAt: v.string(),
  }),
  v.title("AdminRole"),
);

/** A role with its grants. */
export const RoleWithGrantsSchema = v.pipe(
  v.object({ ...RoleViewSchema.entries, grants: v.array(GrantViewSchema) }),
  v.title("AdminRoleWithGrants"),
);

/** The view of a role. */
export function roleView(role: Role): v.InferOutput<typeof RoleViewSchema> {
  return {
    id: role.id,
    realmId: role.realmId,
    orgId: role.orgId,
    key: role.key,
    displayName: role.displayName,
    version: role.version,
    createdAt: role.createdAt.toISOString(),
  };
}

function roleAuditView(role: Role, grants?: readonly Grant[]) {
  return {
    id: role.id,
    orgId: role.orgId,
    key: role.key,
    displayName: role.displayName,
    version: role.version,
    ...(grants === undefined ? {} : { grants: grants.map(grantAuditView) }),
  };
}

const TAGS = ["Admin: roles"];
const ROLE_ID = { roleId: "The role's id." };
const ETAG = { ETag: "The role's version, for `If-Match`." };

/** The role and grant routes. */
export function roleRoutes(deps: AdminRouteDeps): RouteInstaller {
  const { storage, snapshots } = deps;

  /** Moves the role's version with a change of its grants (the ETag covers them). */
  const bump = (tx: Storage, role: Role) => tx.roles.update(role.id, {});
  const grants = grantRoutes<Role>(deps, {
    kind: "role",
    events: { added: "role.grant_added", removed: "role.grant_removed" },
    visible: visibleRole,
    grants: (tx) => tx.roles,
    holders: (tx, role) => holdersOfRole(tx, role.id),
    changed: bump,
    docs: {
      tags: TAGS,
      addHeaders: ETAG,
      lookupDescription:
        "Pattern, effect and condition (compared as JSON values; absent matches no condition).",
    },
  });

  return documented((app, appDeps) => {
    /** A `role.*` event about `role`. */
    const event = (scope: FenceScope, kind: string, role: Role, data: Record<string, unknown> = {}) => ({
      kind,
      occurredAt: appDeps.clock.now(),
      realmId: scope.principal.realmId,
      orgId: role.orgId,
      userId: null,
      data: { roleId: role.id, key: role.key, ...data },
    });

    app.post("/svc-admin/roles", async (c) => {
      const scope = await fence(c, snapshots, ROLES_MANAGE);
      const body = await parseBody(c, CreateRoleSchema);
      checkGrants(body.grants);
      const orgId = await targetOrganization(storage, scope, body.orgId);
      const guard = await escalationGuard(deps, scope, orgId);
      guard.refuse(body.grants.map((g) => g.pattern));
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const created = await tx.roles.createWithGrants(
          { realmId: scope.principal.realmId, orgId, key: body.key, displayName: body.displayName },
          body.grants.map(grantInput),
        ).catch(asConflict);
        await emit(event(scope, "role.created", created.role, { grants: created.grants.length }));
        return {
          value: created,
          audit: {
            action: "role.create",
            target: created.role.id,
            orgId,
            after: roleAuditView(created.role, created.grants),
          },
        };
      });
      setVersionTag(c, value.role.version);
      c.header("Location", `/svc-admin/roles/${value.role.id}`);
      return c.json({ ...roleView(value.role), grants: value.grants.map(grantView) }, 201);
    });

    app.get("/svc-admin/roles", async (c) => {
      const scope = await fence(c, snapshots, ROLES_READ);
      const query = parseQuery(c, ListRolesQuerySchema);
      const page = pageOf(query);
      const requested = query.orgId?.toLowerCase();
      // Naming an organization the caller may not see: 404, like the organization itself.
      if (requested !== undefined) requireVisible(scope, requested, "organization");
      const own = scope.global ? undefined : scope.orgId!.toLowerCase();
      let filter: { orgId?: string | null; orgLevelOnly?: boolean };
      if (query.level === "realm") {
        // Realm-level roles: realm administrators only; no organization has any.
        if (requested !== undefined || own !== undefined) return c.json(listBody([], page, 0));
        filter = { orgId: null };
      } else if (own !== undefined) {
        // Organization administrators see their organization's roles only.
        filter = { orgId: own };
      } else if (requested !== undefined) filter = { orgId: requested };
      else filter = { orgLevelOnly: query.level === "organization" };
      const result = await storage.roles.listPage(scope.principal.realmId, {
        ...page,
        ...filter,
        search: query.search,
      });
      return c.json(listBody(result.items.map(roleView), page, result.total));
    });

    app.get("/svc-admin/roles/:roleId", async (c) => {
      const scope = await fence(c, snapshots, ROLES_READ);
      const role = await visibleRole(storage, scope, c.req.param("roleId"));
      const grants = await storage.roles.listGrants(role.id);
      setVersionTag(c, role.version);
      return c.json({ ...roleView(role), grants: grants.map(grantView) });
    });

    app.patch("/svc-admin/roles/:roleId", async (c) => {
      const scope = await fence(c, snapshots, ROLES_MANAGE);
      const expected = ifMatchVersion(c);
      const body = await parseBody(c, UpdateRoleSchema);
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const before = await visibleRole(tx, scope, c.req.param("roleId"));
        checkVersion(expected, before.version);
        if (changesNothing(before, body)) return { value: before, audit: null };
        const after = await tx.roles.update(before.id, { displayName: body.displayName }, {
          expectedVersion: expected,
        }).catch((error) => {
          if (error instanceof ConflictError && error.details?.reason === ROLE_VERSION_CHANGED) {
            throw new PreconditionFailedError();
          }
          throw error;
        });
        await emit(event(scope, "role.updated", after, { displayName: after.displayName }));
        return {
          value: after,
          audit: {
            action: "role.update",
            target: after.id,
            orgId: after.orgId,
            before: roleAuditView(before),
            after: roleAuditView(after),
          },
        };
      });
      setVersionTag(c, value.version);
      return c.json(roleView(value));
    });

    app.delete("/svc-admin/roles/:roleId", async (c) => {
      const scope = await fence(c, snapshots, ROLES_MANAGE);
      // Deleting takes power away and needs no authority over the holders, except where it lifts
      // a Deny: its Deny grants (where they applied) are handed out by the deletion.
      const lifting = await visibleRole(storage, scope, c.req.param("roleId"));
      await requireMayLiftDenies(
        deps,
        scope,
        pinnedGrants(await storage.roles.listGrants(lifting.id), lifting.orgId, lifting.id),
      );
      const { value: holders } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const before = await visibleRole(tx, scope, c.req.param("roleId"));
        const grants = await tx.roles.listGrants(before.id);
        const holders = await holdersOfRole(tx, before.id);
        if (!(await tx.roles.delete(before.id))) throw hidden("role");
        await emit(event(scope, "role.deleted", before));
        return {
          value: holders,
          audit: {
            action: "role.delete",
            target: before.id,
            orgId: before.orgId,
            before: roleAuditView(before, grants),
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
      path: "/svc-admin/roles",
      summary: "Create a role with its grants",
      description: "One atomic write: the role and all its grants, or nothing. Each grant pattern must " +
        "follow the permission grammar and each condition the condition document v1 (400 with the " +
        "field and the engine's reason); granting `svc:` permissions the caller does not hold is " +
        "refused (403 `escalation_refused`). Organization administrators create roles of their " +
        "organization only.",
      tags: TAGS,
      permissions: [...ROLES_MANAGE.global, ...ROLES_MANAGE.org],
      body: CreateRoleSchema,
      responses: {
        201: { description: "The role and its grants", body: RoleWithGrantsSchema, headers: ETAG },
        ...errorResponses(400, 401, 403, 404, 409),
      },
    },
    {
      method: "GET",
      path: "/svc-admin/roles",
      summary: "List roles",
      description: "By creation time, then id. Organization administrators see their organization's roles.",
      tags: TAGS,
      permissions: [...ROLES_READ.global, ...ROLES_READ.org],
      query: ListRolesQuerySchema,
      responses: {
        200: { description: "A page of roles", body: listSchema(RoleViewSchema) },
        ...errorResponses(400, 401, 403),
      },
    },
    {
      method: "GET",
      path: "/svc-admin/roles/:roleId",
      summary: "Read a role with its grants",
      tags: TAGS,
      permissions: [...ROLES_READ.global, ...ROLES_READ.org],
      params: ROLE_ID,
      responses: {
        200: { description: "The role", body: RoleWithGrantsSchema, headers: ETAG },
        ...errorResponses(401, 403, 404),
      },
    },
    {
      method: "PATCH",
      path: "/svc-admin/roles/:roleId",
      summary: "Change a role's display name",
      description: "With `If-Match`, the change applies only at that version (412 otherwise).",
      tags: TAGS,
      permissions: [...ROLES_MANAGE.global, ...ROLES_MANAGE.org],
      params: ROLE_ID,
      body: UpdateRoleSchema,
      responses: {
        200: { description: "The role", body: RoleViewSchema, headers: ETAG },
        ...errorResponses(400, 401, 403, 404, 412),
      },
    },
    {
      method: "DELETE",
      path: "/svc-admin/roles/:roleId",
      summary: "Delete a role",
      description: "Removes its grant rows and every assignment of it, in one transaction.",
      tags: TAGS,
      permissions: [...ROLES_MANAGE.global, ...ROLES_MANAGE.org],
      params: ROLE_ID,
      responses: { 204: { description: "Deleted" }, ...errorResponses(401, 403, 404) },
    },
    ...grants.operations,
  ]);
}
