/**
 * Resources (APIs) of the OIDC provider over the admin API (RFC 8707 resource indicators, RFC
 * 9068 access tokens), fenced by the plugin's own permissions (`oidc-provider:global:resources-read` /
 * `oidc-provider:global:resources-manage`), each change one entry in the realm's admin audit chain:
 *
 * | Method | Path | |
 * |---|---|---|
 * | GET | `/svc-admin/oidc/resources` | list by identifier (`?offset=&limit=`) |
 * | POST | `/svc-admin/oidc/resources` | create `{identifier, name, scopes, accessTokenTtlSeconds}` |
 * | GET | `/svc-admin/oidc/resources/{resourceId}` | read |
 * | PATCH | `/svc-admin/oidc/resources/{resourceId}` | change any field |
 * | DELETE | `/svc-admin/oidc/resources/{resourceId}` | delete (no new tokens for it; issued ones run out) |
 *
 * @module
 */
import type { Context } from "hono";
import * as v from "valibot";
import {
  bodyLimit,
  documented,
  errorResponses,
  globalPermissions,
  IsoTimeSchema,
  listBodyOf,
  NotFoundError,
  type OperationDoc,
  pageOf,
  parseBody,
  type PermissionDefinition,
  type PluginContext,
  randomUuid,
  type RouteInstaller,
  SvcError,
  unchangedView,
  ValidationError,
} from "../../mod.ts";
import {
  isResourceIdentifier,
  isUniqueViolation,
  type ResourceFields,
  type ResourceRecord,
  resourceStore,
} from "./resources.ts";
import { SUPPORTED_SCOPES } from "./shared.ts";

/** Read the provider's resources. */
export const RESOURCES_READ = "oidc-provider:global:resources-read";
/** Create, change and delete the provider's resources. */
export const RESOURCES_MANAGE = "oidc-provider:global:resources-manage";

/** The plugin's permissions. */
export const PERMISSIONS: readonly PermissionDefinition[] = [
  { id: RESOURCES_READ, description: "Read the OIDC provider's resources (APIs)" },
  { id: RESOURCES_MANAGE, description: "Create, change and delete the OIDC provider's resources (APIs)" },
];

const BASE = "/svc-admin/oidc/resources";
const ITEM = `${BASE}/:resourceId`;
const { read: READ, manage: MANAGE } = globalPermissions(RESOURCES_READ, RESOURCES_MANAGE);
const MAX_BODY_BYTES = 32 * 1024;

const scopeName = v.pipe(
  v.string("a scope must be a string"),
  v.regex(
    /^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/,
    'a scope is 1–100 visible ASCII characters other than " and \\',
  ),
  v.check(
    (scope) => !(SUPPORTED_SCOPES as readonly string[]).includes(scope),
    `a resource's scope cannot be one of the OpenID scopes (${SUPPORTED_SCOPES.join(", ")})`,
  ),
);

const FIELDS = {
  identifier: v.pipe(
    v.string("identifier must be a string"),
    v.check(isResourceIdentifier, "identifier is an absolute URI without fragment, at most 500 characters"),
  ),
  name: v.nullable(
    v.pipe(
      v.string("name must be a string"),
      v.minLength(1),
      v.maxLength(200, "name: at most 200 characters"),
    ),
  ),
  scopes: v.pipe(
    v.array(scopeName, "scopes must be a list"),
    v.maxLength(50, "scopes: at most 50"),
    v.check((scopes) => new Set(scopes).size === scopes.length, "scopes: each once"),
  ),
  accessTokenTtlSeconds: v.pipe(
    v.number("accessTokenTtlSeconds must be a number"),
    v.integer("accessTokenTtlSeconds is whole seconds"),
    v.minValue(60, "accessTokenTtlSeconds: from 60"),
    v.maxValue(86_400, "accessTokenTtlSeconds: at most 86400"),
  ),
};

/** The body of `POST /svc-admin/oidc/resources`. */
export const CreateResourceSchema = v.strictObject({
  identifier: FIELDS.identifier,
  name: v.optional(FIELDS.name, null),
  scopes: v.optional(FIELDS.scopes, []),
  accessTokenTtlSeconds: v.optional(FIELDS.accessTokenTtlSeconds, 600),
});

/** The body of `PATCH /svc-admin/oidc/resources/{resourceId}`. */
export const UpdateResourceSchema = v.strictObject({
  identifier: v.optional(FIELDS.identifier),
  name: v.optional(FIELDS.name),
  scopes: v.optional(FIELDS.scopes),
  accessTokenTtlSeconds: v.optional(FIELDS.accessTokenTtlSeconds),
});

/** A resource as the API shows it. */
export const ResourceSchema = v.pipe(
  v.object({
    id: v.string(),
    realmId: v.string(),
    identifier: v.string(),
    name: v.nullable(v.string()),
    scopes: v.array(v.string()),
    accessTokenTtlSeconds: v.number(),
    createdAt: IsoTimeSchema,
    updatedAt: IsoTimeSchema,
  }),
  v.title("OidcResource"),
);

const PageQuerySchema = v.strictObject({
  offset: v.optional(
    v.pipe(v.string(), v.regex(/^\d{1,9}$/, "offset is a whole number"), v.transform(Number)),
  ),
  limit: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,3}$/, "limit is a whole number from 1 to 200"),
      v.transform(Number),
      v.minValue(1, "limit is a whole number from 1 to 200"),
      v.maxValue(200, "limit is a whole number from 1 to 200"),
    ),
  ),
});

const ListSchema = v.pipe(
  v.object({ items: v.array(ResourceSchema), offset: v.number(), limit: v.number(), total: v.number() }),
  v.title("OidcResourceList"),
);

/** The API view of a resource. */
export function resourceView(resource: ResourceRecord): v.InferOutput<typeof ResourceSchema> {
  return {
    id: resource.id,
    realmId: resource.realmId,
    identifier: resource.identifier,
    name: resource.name,
    scopes: [...resource.scopes],
    accessTokenTtlSeconds: resource.accessTokenTtlSeconds,
    createdAt: resource.createdAt.toISOString(),
    updatedAt: resource.updatedAt.toISOString(),
  };
}

const TAGS = ["Admin: OIDC resources"];
const PARAMS = { resourceId: "The resource's id" };

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "GET",
    path: BASE,
    summary: "List the OIDC provider's resources (APIs)",
    tags: TAGS,
    permissions: READ,
    query: PageQuerySchema,
    responses: {
      200: { description: "One page, by identifier", body: ListSchema },
      ...errorResponses(400, 401, 403),
    },
  },
  {
    method: "POST",
    path: BASE,
    summary: "Register a resource (API)",
    description:
      "`identifier` is the absolute URI clients name in `resource` (RFC 8707) and the `aud` of its `at+jwt` access tokens (RFC 9068); `scopes` are the scopes it defines (requestable with it), `accessTokenTtlSeconds` its tokens' lifetime (default 600).",
    tags: TAGS,
    permissions: MANAGE,
    body: CreateResourceSchema,
    responses: {
      201: { description: "Created", body: ResourceSchema },
      ...errorResponses(400, 401, 403, 409, 413),
    },
  },
  {
    method: "GET",
    path: ITEM,
    summary: "Read a resource",
    tags: TAGS,
    permissions: READ,
    params: PARAMS,
    responses: {
      200: { description: "The resource", body: ResourceSchema },
      ...errorResponses(401, 403, 404),
    },
  },
  {
    method: "PATCH",
    path: ITEM,
    summary: "Change a resource",
    description: "Any field. Tokens issued before keep their audience, scope and lifetime.",
    tags: TAGS,
    permissions: MANAGE,
    params: PARAMS,
    body: UpdateResourceSchema,
    responses: {
      200: { description: "The resource", body: ResourceSchema },
      ...errorResponses(400, 401, 403, 404, 409, 413),
    },
  },
  {
    method: "DELETE",
    path: ITEM,
    summary: "Delete a resource",
    description: "No token is issued for it any more; issued ones run until they expire.",
    tags: TAGS,
    permissions: MANAGE,
    params: PARAMS,
    responses: { 204: { description: "Deleted" }, ...errorResponses(401, 403, 404) },
  },
];

/** The admin routes of resources. */
export function resourceAdminRoutes(ctx: PluginContext): RouteInstaller {
  const hidden = () => new NotFoundError("No such resource.");
  const taken = (error: unknown): never => {
    if (isUniqueViolation(error)) {
      throw new SvcError("oidc_resource_taken", "A resource of this realm has this identifier.", 409, {
        reason: "oidc_resource_taken",
      });
    }
    throw error;
  };
  const realmOf = (realmId: string) => realmId.toLowerCase();

  return documented((app) => {
    app.get(BASE, async (c: Context) => {
      const caller = await ctx.admin.fence(c, READ);
      const parsed = v.safeParse(PageQuerySchema, c.req.query());
      if (!parsed.success) throw new ValidationError(parsed.issues[0].message);
      const all = await resourceStore(ctx.sql).list(realmOf(caller.realmId));
      return c.json(listBodyOf(all, pageOf(parsed.output), resourceView));
    });

    app.post(BASE, bodyLimit(MAX_BODY_BYTES), async (c: Context) => {
      const caller = await ctx.admin.fence(c, MANAGE);
      const body = await parseBody(c, CreateResourceSchema);
      const realmId = realmOf(caller.realmId);
      const created = await ctx.admin.mutate(caller, async ({ tx }) => {
        const resource = await resourceStore(tx.pluginSql)
          .create(randomUuid(ctx.random), realmId, body, new Date(ctx.clock.now()))
          .catch(taken);
        return {
          value: resource,
          audit: { action: "oidc.resource.create", target: resource.id, after: resourceView(resource) },
        };
      });
      return c.json(resourceView(created), 201);
    });

    app.get(ITEM, async (c: Context) => {
      const caller = await ctx.admin.fence(c, READ);
      const resource = await resourceStore(ctx.sql).get(realmOf(caller.realmId), c.req.param("resourceId")!);
      if (resource === null) throw hidden();
      return c.json(resourceView(resource));
    });

    app.patch(ITEM, bodyLimit(MAX_BODY_BYTES), async (c: Context) => {
      const caller = await ctx.admin.fence(c, MANAGE);
      const body = await parseBody(c, UpdateResourceSchema);
      const realmId = realmOf(caller.realmId);
      const id = c.req.param("resourceId")!;
      const updated = await ctx.admin.mutate(caller, async ({ tx }) => {
        const store = resourceStore(tx.pluginSql);
        const before = await store.get(realmId, id);
        if (before === null) throw hidden();
        const fields: ResourceFields = {
          identifier: body.identifier ?? before.identifier,
          name: body.name === undefined ? before.name : body.name,
          scopes: body.scopes ?? before.scopes,
          accessTokenTtlSeconds: body.accessTokenTtlSeconds ?? before.accessTokenTtlSeconds,
        };
        const after = await store.update(realmId, id, fields, new Date(ctx.clock.now())).catch(taken);
        if (after === null) throw hidden();
        // An identical update changes nothing: no entry.
        if (unchangedView(resourceView, before, after)) return { value: after, audit: null };
        return {
          value: after,
          audit: {
            action: "oidc.resource.update",
            target: id,
            before: resourceView(before),
            after: resourceView(after),
          },
        };
      });
      return c.json(resourceView(updated));
    });

    app.delete(ITEM, async (c: Context) => {
      const caller = await ctx.admin.fence(c, MANAGE);
      const realmId = realmOf(caller.realmId);
      const id = c.req.param("resourceId")!;
      await ctx.admin.mutate(caller, async ({ tx }) => {
        const store = resourceStore(tx.pluginSql);
        const before = await store.get(realmId, id);
        if (before === null || !await store.delete(realmId, id)) throw hidden();
        return {
          value: null,
          audit: { action: "oidc.resource.delete", target: id, before: resourceView(before) },
        };
      });
      return c.body(null, 204);
    });
  }, OPERATIONS);
}
