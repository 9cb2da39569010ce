/**
 * Organization admin routes (spec 2.10: display name, status, default identity provider id):
 *
 * | Method | Path | Body → answer |
 * |---|---|---|
 * | POST | `/svc-admin/organizations` | `{name, displayName, status?, defaultIdentityProviderId?}` → 201 |
 * | GET | `/svc-admin/organizations` | `?search=&offset=&limit=` → `{items, offset, limit, total}` |
 * | GET | `/svc-admin/organizations/{orgId}` | → organization, `ETag` |
 * | PATCH | `/svc-admin/organizations/{orgId}` | `{displayName?, status?, defaultIdentityProviderId?}`, `If-Match` → organization |
 * | DELETE | `/svc-admin/organizations/{orgId}` | → 204 |
 *
 * Creating, listing and deleting are realm-wide (`svc:global:orgs-*`); an organization admin
 * (`svc:org:orgs-read` / `-manage`) reads and changes only its own organization, others are 404.
 * Deleting removes everything scoped to the organization in one transaction (domains,
 * memberships, teams, organization-level groups, roles, assignments and policies, grants narrowed
 * to it, its webhook endpoints); users stay, and every cached subject snapshot is evicted.
 *
 * @module
 */
import * as v from "valibot";
import {
  ORGS_MANAGE_GLOBAL,
  ORGS_MANAGE_ORG,
  ORGS_READ_GLOBAL,
  ORGS_READ_ORG,
} from "../../../core/definitions/permissions/directory.ts";
import { ConflictError } from "../../../core/errors.ts";
import type { RouteInstaller } from "../../app.ts";
import { fence } from "../../auth/fence.ts";
import { documented, errorResponses } from "../../openapi/operation.ts";
import { parseBody } from "../../validate.ts";
import type { AdminRouteDeps } from "../deps.ts";
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
  setVersionTag,
} from "../kit.ts";
import { DisplayNameField, KeyField, OrganizationSchema, orgView, pathId, visibleOrg } from "./shared.ts";

/** Reading organizations. */
export const ORGS_READ = {
  global: [ORGS_READ_GLOBAL, ORGS_MANAGE_GLOBAL],
  org: [ORGS_READ_ORG, ORGS_MANAGE_ORG],
};
/** Changing organizations (and their domains). */
export const ORGS_MANAGE = { global: [ORGS_MANAGE_GLOBAL], org: [ORGS_MANAGE_ORG] };
const GLOBAL_READ = { global: ORGS_READ.global };
const GLOBAL_MANAGE = { global: ORGS_MANAGE.global };

const StatusField = v.picklist(["Active", "Suspended"], "status must be Active or Suspended");
const IdentityProviderField = v.nullable(
  v.pipe(
    v.string("defaultIdentityProviderId must be a string"),
    v.minLength(1, "defaultIdentityProviderId must not be empty"),
    v.maxLength(200, "defaultIdentityProviderId is longer than 200 characters"),
  ),
);

/** The body of `POST /svc-admin/organizations`. */
export const CreateOrganizationSchema = v.strictObject({
  name: KeyField("name"),
  displayName: DisplayNameField,
  status: v.optional(StatusField),
  defaultIdentityProviderId: v.optional(IdentityProviderField),
});

/** The body of `PATCH /svc-admin/organizations/{orgId}`. */
export const UpdateOrganizationSchema = v.strictObject({
  displayName: v.optional(DisplayNameField),
  status: v.optional(StatusField),
  defaultIdentityProviderId: v.optional(IdentityProviderField),
});

/** The query of `GET /svc-admin/organizations`. */
export const OrganizationQuerySchema = v.strictObject({
  search: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(200, "search is longer than 200 characters"),
      v.description("Case-insensitive part of the name or display name."),
    ),
  ),
  ...PAGE_QUERY_ENTRIES,
});

const TAGS = ["Admin: organizations"];
const OrganizationListSchema = v.pipe(listSchema(OrganizationSchema), v.title("OrganizationList"));
const orgParam = { orgId: "The organization id." };
const etag = { ETag: "The organization's version, quoted; send it back in `If-Match`." };

/** The organization routes. */
export function organizationRoutes(deps: AdminRouteDeps): RouteInstaller {
  const { storage, snapshots } = deps;

  const install: RouteInstaller = (app, appDeps) => {
    const now = () => appDeps.clock.now();

    app.post("/svc-admin/organizations", async (c) => {
      const scope = await fence(c, snapshots, GLOBAL_MANAGE);
      const body = await parseBody(c, CreateOrganizationSchema);
      const { value: org } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const created = await tx.organizations.create({ realmId: scope.principal.realmId, ...body })
          .catch(asConflict);
        await emit({
          kind: "organization.created",
          occurredAt: now(),
          realmId: created.realmId,
          orgId: created.id,
          data: { name: created.name },
        });
        return {
          value: created,
          audit: {
            action: "organization.create",
            target: created.id,
            orgId: created.id,
            after: orgView(created),
          },
        };
      });
      setVersionTag(c, org.version);
      return c.json(orgView(org), 201);
    });

    app.get("/svc-admin/organizations", async (c) => {
      const scope = await fence(c, snapshots, GLOBAL_READ);
      const query = parseQuery(c, OrganizationQuerySchema);
      const page = pageOf(query);
      const found = await storage.organizations.search(scope.principal.realmId, {
        ...page,
        search: query.search,
      });
      return c.json(listBody(found.items.map(orgView), page, found.total));
    });

    app.get("/svc-admin/organizations/:orgId", async (c) => {
      const scope = await fence(c, snapshots, ORGS_READ);
      const org = await visibleOrg(storage, scope, pathId(c, "orgId", "organization"));
      setVersionTag(c, org.version);
      return c.json(orgView(org));
    });

    app.patch("/svc-admin/organizations/:orgId", async (c) => {
      const scope = await fence(c, snapshots, ORGS_MANAGE);
      const orgId = pathId(c, "orgId", "organization");
      const body = await parseBody(c, UpdateOrganizationSchema);
      const expected = ifMatchVersion(c);
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const before = await visibleOrg(tx, scope, orgId);
        checkVersion(expected, before.version);
        if (changesNothing(before, body)) return { value: before, audit: null };
        const after = await tx.organizations.update(orgId, body, { expectedVersion: expected })
          .catch((error) => {
            if (error instanceof ConflictError && error.details?.reason === "organization_version_mismatch") {
              throw new PreconditionFailedError();
            }
            throw error;
          });
        if (after.version === before.version) return { value: after, audit: null };
        await emit({
          kind: "organization.updated",
          occurredAt: now(),
          realmId: after.realmId,
          orgId,
          data: { displayName: after.displayName, status: after.status },
        });
        return {
          value: after,
          audit: {
            action: "organization.update",
            target: orgId,
            orgId,
            before: orgView(before),
            after: orgView(after),
          },
        };
      });
      setVersionTag(c, value.version);
      return c.json(orgView(value));
    });

    app.delete("/svc-admin/organizations/:orgId", async (c) => {
      const scope = await fence(c, snapshots, GLOBAL_MANAGE);
      const orgId = pathId(c, "orgId", "organization");
      await adminMutation(deps, scope, async ({ tx, emit }) => {
        const before = await visibleOrg(tx, scope, orgId);
        const members = await tx.organizations.countMembers(orgId);
        if (!await tx.organizations.delete(orgId)) throw hidden("organization");
        await emit({
          kind: "organization.deleted",
          occurredAt: now(),
          realmId: before.realmId,
          orgId,
          data: { name: before.name, members },
        });
        return {
          value: null,
          audit: {
            action: "organization.delete",
            target: orgId,
            orgId,
            before: { ...orgView(before), members },
          },
        };
      });
      // Memberships, team and group memberships, roles and assignments of the organization went:
      // every snapshot that may carry one of them is stale.
      await snapshots.invalidateAll();
      return c.body(null, 204);
    });
  };

  return documented(install, [
    {
      method: "POST",
      path: "/svc-admin/organizations",
      summary: "Create an organization",
      tags: TAGS,
      permissions: GLOBAL_MANAGE.global,
      body: CreateOrganizationSchema,
      responses: {
        201: {
          description: "The organization (`organization_name_taken` on a duplicate name)",
          body: OrganizationSchema,
          headers: etag,
        },
        ...errorResponses(400, 401, 403, 409),
      },
    },
    {
      method: "GET",
      path: "/svc-admin/organizations",
      summary: "List and search organizations",
      description: "By creation time, then id.",
      tags: TAGS,
      permissions: GLOBAL_READ.global,
      query: OrganizationQuerySchema,
      responses: {
        200: { description: "A page of organizations", body: OrganizationListSchema },
        ...errorResponses(400, 401, 403),
      },
    },
    {
      method: "GET",
      path: "/svc-admin/organizations/:orgId",
      summary: "Read an organization",
      tags: TAGS,
      permissions: [...ORGS_READ.global, ...ORGS_READ.org],
      params: orgParam,
      responses: {
        200: { description: "The organization", body: OrganizationSchema, headers: etag },
        ...errorResponses(401, 403, 404),
      },
    },
    {
      method: "PATCH",
      path: "/svc-admin/organizations/:orgId",
      summary: "Change an organization",
      description: "Send `If-Match` with the ETag read before: a stale write is 412 and changes nothing.",
      tags: TAGS,
      permissions: [...ORGS_MANAGE.global, ...ORGS_MANAGE.org],
      params: orgParam,
      body: UpdateOrganizationSchema,
      responses: {
        200: { description: "The organization", body: OrganizationSchema, headers: etag },
        ...errorResponses(400, 401, 403, 404, 412),
      },
    },
    {
      method: "DELETE",
      path: "/svc-admin/organizations/:orgId",
      summary: "Delete an organization",
      description:
        "Removes its domains, memberships, teams, organization-level groups, roles, assignments, " +
        "policies, grants narrowed to it and its webhook endpoints, in one transaction. Users stay.",
      tags: TAGS,
      permissions: GLOBAL_MANAGE.global,
      params: orgParam,
      responses: { 204: { description: "Deleted" }, ...errorResponses(401, 403, 404) },
    },
  ]);
}
