/**
 * The upstream providers over the admin API, fenced by the plugin's permissions
 * (`federation:global:providers-read|manage` realm-wide, `federation:org:providers-read|manage`
 * for the caller's own organization):
 *
 * | Method | Path | |
 * |---|---|---|
 * | GET | `/svc-admin/federation/providers` | list (`?orgId=&offset=&limit=`) |
 * | POST | `/svc-admin/federation/providers` | create (`makeDefault` sets the organization's default identity provider) |
 * | GET | `/svc-admin/federation/providers/{id}` | read |
 * | PATCH | `/svc-admin/federation/providers/{id}` | change (a new `clientSecret` replaces the old one) |
 * | DELETE | `/svc-admin/federation/providers/{id}` | delete (its secret's key is destroyed) |
 *
 * The client secret is written, never read back: answers say `hasClientSecret`. What the caller
 * may not see is 404. Each mutation writes the plugin's table and appends one audit chain entry
 * (never the secret) in one transaction.
 *
 * @module
 */
import * as v from "valibot";
import {
  checkOutboundUrl,
  documented,
  errorResponses,
  type FenceScope,
  hidden,
  IsoTimeSchema,
  listBodyOf,
  listedOrg,
  listSchema,
  type OperationDoc,
  outboundPolicyFromConfig,
  PAGE_QUERY_ENTRIES,
  pageOf,
  parseBody,
  parseQuery,
  reachable,
  reaches,
  type RouteInstaller,
  scopedPermissions,
  unchangedView,
  ValidationError,
} from "../../mod.ts";
import type { ClaimMapping, FederationProvider, ProviderStore } from "./providers.ts";
import { type Federation, PERMISSIONS } from "./shared.ts";

const { read: READ, manage: MANAGE } = scopedPermissions(PERMISSIONS);
const BASE = "/svc-admin/federation/providers";
const ITEM = `${BASE}/:providerId`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const noNul = (what: string) =>
  v.check((text: string) => !text.includes("\u0000"), `${what} must not contain U+0000`);
const claimName = (what: string) =>
  v.pipe(
    v.string(`${what} must be a string`),
    v.minLength(1, `${what} must not be empty`),
    v.maxLength(100, `${what} is longer than 100 characters`),
    noNul(what),
  );
const issuer = v.pipe(
  v.string("issuer must be a string"),
  v.maxLength(500, "issuer is longer than 500 characters"),
  v.check(
    (text) => {
      try {
        const url = new URL(text);
        return (url.protocol === "https:" || url.protocol === "http:") && url.href.replace(/\/$/, "") ===
            text.replace(/\/$/, "") &&
          url.search === "" && url.hash === "";
      } catch {
        return false;
      }
    },
    "issuer must be the upstream's issuer URL (https, no query or fragment), exactly as its tokens carry it",
  ),
);
const clientId = v.pipe(
  v.string("clientId must be a string"),
  v.minLength(1, "clientId must not be empty"),
  v.maxLength(255, "clientId is longer than 255 characters"),
  noNul("clientId"),
);
const clientSecret = v.pipe(
  v.string("clientSecret must be a string"),
  v.minLength(1, "clientSecret must not be empty"),
  v.maxLength(1000, "clientSecret is longer than 1000 characters"),
  noNul("clientSecret"),
);
const scopes = v.pipe(
  v.array(
    v.pipe(
      v.string(),
      v.regex(/^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/, "each scope is 1–100 visible characters"),
    ),
    "scopes must be a list",
  ),
  v.maxLength(20, "scopes: at most 20"),
  v.check((list) => list.includes("openid"), "scopes must include openid"),
);
const claimMapping = v.strictObject({
  email: v.optional(claimName("claimMapping.email"), "email"),
  name: v.optional(claimName("claimMapping.name"), "name"),
  attributes: v.optional(
    v.pipe(
      v.record(claimName("claimMapping.attributes key"), claimName("claimMapping.attributes value")),
      v.check((record) => Object.keys(record).length <= 20, "claimMapping.attributes: at most 20"),
    ),
    {},
  ),
});

/** The body of `POST /svc-admin/federation/providers`. */
export const CreateProviderSchema = v.strictObject({
  orgId: v.pipe(v.string("orgId must be a string"), v.regex(UUID, "orgId must be an organization id")),
  issuer,
  clientId,
  clientSecret,
  scopes: v.optional(scopes, ["openid", "email", "profile"]),
  claimMapping: v.optional(claimMapping, { email: "email", name: "name", attributes: {} }),
  allowJitProvisioning: v.optional(v.boolean("allowJitProvisioning must be true or false"), false),
  enabled: v.optional(v.boolean("enabled must be true or false"), true),
  makeDefault: v.optional(v.boolean("makeDefault must be true or false"), false),
});

/** The body of `PATCH /svc-admin/federation/providers/{id}`. */
export const UpdateProviderSchema = v.strictObject({
  issuer: v.optional(issuer),
  clientId: v.optional(clientId),
  clientSecret: v.optional(clientSecret),
  scopes: v.optional(scopes),
  claimMapping: v.optional(claimMapping),
  allowJitProvisioning: v.optional(v.boolean("allowJitProvisioning must be true or false")),
  enabled: v.optional(v.boolean("enabled must be true or false")),
});

/** The query of the list. */
export const ListProvidersQuerySchema = v.strictObject({
  ...PAGE_QUERY_ENTRIES,
  orgId: v.optional(v.pipe(v.string(), v.regex(UUID, "orgId must be an organization id"))),
});

/** A provider as the API shows it (never the secret). */
export const ProviderSchema = v.pipe(
  v.object({
    id: v.string(),
    realmId: v.string(),
    orgId: v.string(),
    issuer: v.string(),
    clientId: v.string(),
    hasClientSecret: v.boolean(),
    scopes: v.array(v.string()),
    claimMapping: v.object({
      email: v.string(),
      name: v.string(),
      attributes: v.record(v.string(), v.string()),
    }),
    allowJitProvisioning: v.boolean(),
    enabled: v.boolean(),
    createdAt: IsoTimeSchema,
    updatedAt: IsoTimeSchema,
  }),
  v.title("FederationProvider"),
);

/** The API view of a provider. */
export function providerView(p: FederationProvider): v.InferOutput<typeof ProviderSchema> {
  return {
    id: p.id,
    realmId: p.realmId,
    orgId: p.orgId,
    issuer: p.issuer,
    clientId: p.clientId,
    hasClientSecret: true,
    scopes: [...p.scopes],
    claimMapping: {
      email: p.claimMapping.email,
      name: p.claimMapping.name,
      attributes: { ...p.claimMapping.attributes },
    },
    allowJitProvisioning: p.allowJitProvisioning,
    enabled: p.enabled,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
  };
}

const TAGS = ["Admin: federation"];
const PARAMS = { providerId: "The provider's id" };

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "GET",
    path: BASE,
    summary: "List upstream identity providers",
    tags: TAGS,
    permissions: [...READ.global, ...READ.org],
    query: ListProvidersQuerySchema,
    responses: {
      200: { description: "One page, by creation time", body: listSchema(ProviderSchema) },
      ...errorResponses(400, 401, 403),
    },
  },
  {
    method: "POST",
    path: BASE,
    summary: "Add an organization's upstream identity provider",
    description:
      "The client secret is stored encrypted and never shown again. `makeDefault` makes it the organization's default identity provider (where verified email domains route sign-in).",
    tags: TAGS,
    permissions: [...MANAGE.global, ...MANAGE.org],
    body: CreateProviderSchema,
    responses: {
      201: { description: "Created", body: ProviderSchema },
      ...errorResponses(400, 401, 403, 404),
    },
  },
  {
    method: "GET",
    path: ITEM,
    summary: "Read an upstream identity provider",
    tags: TAGS,
    permissions: [...READ.global, ...READ.org],
    params: PARAMS,
    responses: {
      200: { description: "The provider", body: ProviderSchema },
      ...errorResponses(401, 403, 404),
    },
  },
  {
    method: "PATCH",
    path: ITEM,
    summary: "Change an upstream identity provider",
    tags: TAGS,
    permissions: [...MANAGE.global, ...MANAGE.org],
    params: PARAMS,
    body: UpdateProviderSchema,
    responses: {
      200: { description: "The provider", body: ProviderSchema },
      ...errorResponses(400, 401, 403, 404),
    },
  },
  {
    method: "DELETE",
    path: ITEM,
    summary: "Delete an upstream identity provider",
    description: "Its secret's key is destroyed; an organization whose default it was has none afterwards.",
    tags: TAGS,
    permissions: [...MANAGE.global, ...MANAGE.org],
    params: PARAMS,
    responses: { 204: { description: "Deleted" }, ...errorResponses(401, 403, 404) },
  },
];

/** The admin routes of the providers. */
export function adminRoutes(f: Federation): RouteInstaller {
  const { ctx } = f;

  const visible = async (scope: FenceScope, id: string, providers: ProviderStore = f.providers) =>
    reachable(scope, await providers.get(id), "provider");

  const mapping = (m: { email: string; name: string; attributes: Record<string, string> }): ClaimMapping => ({
    email: m.email,
    name: m.name,
    attributes: m.attributes,
  });

  const checkIssuer = (value: string | undefined) => {
    if (value !== undefined && !f.upstreams.issuerAllowed(value)) {
      throw new ValidationError(
        "Invalid request: issuer must be https (http only with SVC_FEDERATION_ALLOW_HTTP_ISSUERS=true).",
      );
    }
    // The outbound guard refuses it at every fetch anyway (names resolving inward included); an
    // address that is plainly inward is refused here already.
    if (value !== undefined && checkOutboundUrl(value, outboundPolicyFromConfig(ctx.svcConfig)) !== null) {
      throw new ValidationError(
        "Invalid request: issuer is on a private, loopback or metadata address (SVC_OUTBOUND_ALLOW_PRIVATE allows one, for development).",
      );
    }
  };

  return documented((app) => {
    app.get(BASE, async (c) => {
      const scope = await ctx.admin.scope(c, READ);
      const query = parseQuery(c, ListProvidersQuerySchema);
      const orgId = listedOrg(scope, query.orgId);
      const all = await f.providers.list(scope.principal.realmId.toLowerCase(), orgId);
      return c.json(listBodyOf(all, pageOf(query), providerView));
    });

    app.post(BASE, async (c) => {
      const scope = await ctx.admin.scope(c, MANAGE);
      const body = await parseBody(c, CreateProviderSchema);
      checkIssuer(body.issuer);
      const org = await ctx.storage.organizations.get(body.orgId);
      if (org === null || !reaches(scope, org.realmId, org.id)) throw hidden("organization");
      const created = await ctx.admin.mutate(scope.principal, async ({ tx }) => {
        const provider = await f.providers.in(tx).create({
          realmId: org.realmId,
          orgId: org.id,
          issuer: body.issuer,
          clientId: body.clientId,
          clientSecret: body.clientSecret,
          scopes: body.scopes,
          claimMapping: mapping(body.claimMapping),
          allowJitProvisioning: body.allowJitProvisioning,
          enabled: body.enabled,
        });
        if (body.makeDefault) {
          await tx.organizations.update(org.id, { defaultIdentityProviderId: provider.id });
        }
        return {
          value: provider,
          audit: {
            action: "federation.provider.create",
            target: provider.id,
            after: { ...providerView(provider), makeDefault: body.makeDefault },
          },
        };
      });
      c.header("Cache-Control", "no-store");
      return c.json(providerView(created), 201);
    });

    app.get(ITEM, async (c) => {
      const scope = await ctx.admin.scope(c, READ);
      return c.json(providerView(await visible(scope, c.req.param("providerId"))));
    });

    app.patch(ITEM, async (c) => {
      const scope = await ctx.admin.scope(c, MANAGE);
      const body = await parseBody(c, UpdateProviderSchema);
      checkIssuer(body.issuer);
      await visible(scope, c.req.param("providerId"));
      const after = await ctx.admin.mutate(scope.principal, async ({ tx }) => {
        // Read again in the transaction, which runs after any other admin change of the realm.
        const providers = f.providers.in(tx);
        const before = await visible(scope, c.req.param("providerId"), providers);
        const secretChanged = body.clientSecret !== undefined &&
          body.clientSecret !== await providers.clientSecret(before.id);
        const changed = await providers.update(before.id, {
          ...body,
          claimMapping: body.claimMapping === undefined ? undefined : mapping(body.claimMapping),
        });
        if (changed === null) throw hidden("provider");
        // An identical update changes nothing: no entry.
        if (!secretChanged && unchangedView(providerView, before, changed)) {
          return { value: changed, audit: null };
        }
        return {
          value: changed,
          audit: {
            action: "federation.provider.update",
            target: changed.id,
            before: providerView(before),
            after: { ...providerView(changed), clientSecretChanged: secretChanged },
          },
        };
      });
      return c.json(providerView(after));
    });

    app.delete(ITEM, async (c) => {
      const scope = await ctx.admin.scope(c, MANAGE);
      await visible(scope, c.req.param("providerId"));
      await ctx.admin.mutate(scope.principal, async ({ tx }) => {
        // Read again in the transaction: a concurrent duplicate finds the provider gone (404).
        const providers = f.providers.in(tx);
        const provider = await visible(scope, c.req.param("providerId"), providers);
        const org = await tx.organizations.get(provider.orgId);
        if (org !== null && org.defaultIdentityProviderId === provider.id) {
          await tx.organizations.update(org.id, { defaultIdentityProviderId: null });
        }
        if (!await providers.delete(provider.id)) throw hidden("provider");
        return {
          value: null,
          audit: {
            action: "federation.provider.delete",
            target: provider.id,
            before: providerView(provider),
          },
        };
      });
      return c.body(null, 204);
    });
  }, OPERATIONS);
}
