/**
 * SAML connections over the admin API, fenced by the plugin's permissions
 * (`saml:global:connections-read|manage` realm-wide, `saml:org:connections-read|manage` for the
 * caller's own organization):
 *
 * | Method | Path | |
 * |---|---|---|
 * | GET | `/svc-admin/saml/connections` | list (`?orgId=&offset=&limit=`) |
 * | POST | `/svc-admin/saml/connections` | create from `idpMetadataXml` or `idpMetadataUrl` |
 * | GET | `/svc-admin/saml/connections/{id}` | read |
 * | PATCH | `/svc-admin/saml/connections/{id}` | change (new metadata, or `refreshMetadata` from its URL) |
 * | DELETE | `/svc-admin/saml/connections/{id}` | delete |
 *
 * Answers carry what the IdP is given (`spEntityId`, `acsUrl`, `metadataUrl`) and the IdP's
 * signing certificates with their expiry (`expiresSoon` within 30 days). Metadata by URL is
 * fetched through the outbound guard (one neutral refusal whatever failed). Each mutation writes
 * the plugin's table and appends one audit chain entry in one transaction; a change that changes
 * nothing writes none. A certificate expiring within 30 days raises `saml.certificate_expiring`
 * when it is stored, once per certificate and connection (the maintenance job announces those
 * that enter the window later, and fetches metadata URLs again: `metadataRefresh`).
 *
 * @module
 */
import * as v from "valibot";
import {
  bodyLimit,
  covers,
  documented,
  errorResponses,
  type FenceScope,
  hidden,
  IsoTimeSchema,
  listBodyOf,
  listSchema,
  type OperationDoc,
  PAGE_QUERY_ENTRIES,
  pageOf,
  parseBody,
  parseQuery,
  type RouteInstaller,
  ValidationError,
} from "../../mod.ts";
import type { AttributeMapping, ConnectionChanges, ConnectionStore, SamlConnection } from "./connections.ts";
import { fetchIdpMetadataOrThrow } from "./fetch.ts";
import { announceExpiring, recordRefresh } from "./maintenance.ts";
import { certificateInfo, type IdpMetadata, parseIdpMetadata } from "./metadata.ts";
import { CERTIFICATE_WARNING_MS, PERMISSIONS, type Saml } from "./shared.ts";
import { MAX_XML_CHARS } from "./limits.ts";

const READ = {
  global: [PERMISSIONS.readGlobal, PERMISSIONS.manageGlobal],
  org: [PERMISSIONS.readOrg, PERMISSIONS.manageOrg],
};
const MANAGE = { global: [PERMISSIONS.manageGlobal], org: [PERMISSIONS.manageOrg] };
const BASE = "/svc-admin/saml/connections";
const ITEM = `${BASE}/:connectionId`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The largest admin body: metadata documents run to tens of kilobytes. */
const MAX_BODY_BYTES = MAX_XML_CHARS + 16 * 1024;

const noNul = (what: string) =>
  v.check((text: string) => !text.includes("\u0000"), `${what} must not contain U+0000`);
const attributeName = (what: string) =>
  v.pipe(
    v.string(`${what} must be a string`),
    v.minLength(1, `${what} must not be empty`),
    v.maxLength(256, `${what} is longer than 256 characters`),
    noNul(what),
  );
const displayName = v.pipe(
  v.string("displayName must be a string"),
  v.trim(),
  v.minLength(1, "displayName must not be empty"),
  v.maxLength(100, "displayName is longer than 100 characters"),
  noNul("displayName"),
);
const metadataXml = v.pipe(
  v.string("idpMetadataXml must be a string"),
  v.minLength(1, "idpMetadataXml must not be empty"),
  v.maxLength(MAX_XML_CHARS, `idpMetadataXml is longer than ${MAX_XML_CHARS} characters`),
  noNul("idpMetadataXml"),
);
const metadataUrl = v.pipe(
  v.string("idpMetadataUrl must be a string"),
  v.maxLength(2000, "idpMetadataUrl is longer than 2000 characters"),
  noNul("idpMetadataUrl"),
  v.check((text) => {
    try {
      const url = new URL(text);
      return (url.protocol === "https:" || url.protocol === "http:") && url.username === "" &&
        url.password === "";
    } catch {
      return false;
    }
  }, "idpMetadataUrl must be an http(s) URL without credentials"),
);
const attributeMapping = v.strictObject({
  email: v.optional(v.nullable(attributeName("attributeMapping.email")), null),
  name: v.optional(v.nullable(attributeName("attributeMapping.name")), null),
  attributes: v.optional(
    v.pipe(
      v.record(
        attributeName("attributeMapping.attributes key"),
        attributeName("attributeMapping.attributes value"),
      ),
      v.check((record) => Object.keys(record).length <= 20, "attributeMapping.attributes: at most 20"),
    ),
    {},
  ),
});

/** The body of `POST /svc-admin/saml/connections`. */
export const CreateConnectionSchema = v.pipe(
  v.strictObject({
    orgId: v.pipe(v.string("orgId must be a string"), v.regex(UUID, "orgId must be an organization id")),
    displayName,
    idpMetadataXml: v.optional(metadataXml),
    idpMetadataUrl: v.optional(metadataUrl),
    attributeMapping: v.optional(attributeMapping, { email: null, name: null, attributes: {} }),
    jitProvisioning: v.optional(v.boolean("jitProvisioning must be true or false"), false),
    allowIdpInitiated: v.optional(v.boolean("allowIdpInitiated must be true or false"), false),
    requireEncryptedAssertions: v.optional(
      v.boolean("requireEncryptedAssertions must be true or false"),
      false,
    ),
    enabled: v.optional(v.boolean("enabled must be true or false"), true),
    makeDefault: v.optional(v.boolean("makeDefault must be true or false"), false),
  }),
  v.check(
    (body) => (body.idpMetadataXml === undefined) !== (body.idpMetadataUrl === undefined),
    "give exactly one of idpMetadataXml and idpMetadataUrl",
  ),
);

/** The body of `PATCH /svc-admin/saml/connections/{id}`. */
export const UpdateConnectionSchema = v.pipe(
  v.strictObject({
    displayName: v.optional(displayName),
    idpMetadataXml: v.optional(metadataXml),
    idpMetadataUrl: v.optional(metadataUrl),
    refreshMetadata: v.optional(v.literal(true, "refreshMetadata must be true")),
    attributeMapping: v.optional(attributeMapping),
    jitProvisioning: v.optional(v.boolean("jitProvisioning must be true or false")),
    allowIdpInitiated: v.optional(v.boolean("allowIdpInitiated must be true or false")),
    requireEncryptedAssertions: v.optional(v.boolean("requireEncryptedAssertions must be true or false")),
    enabled: v.optional(v.boolean("enabled must be true or false")),
  }),
  v.check(
    (body) =>
      [body.idpMetadataXml, body.idpMetadataUrl, body.refreshMetadata].filter((x) => x !== undefined)
        .length <= 1,
    "give at most one of idpMetadataXml, idpMetadataUrl and refreshMetadata",
  ),
);

/** The query of the list. */
export const ListConnectionsQuerySchema = v.strictObject({
  ...PAGE_QUERY_ENTRIES,
  orgId: v.optional(v.pipe(v.string(), v.regex(UUID, "orgId must be an organization id"))),
});

const CertificateSchema = v.object({
  sha256: v.string(),
  subject: v.string(),
  notBefore: IsoTimeSchema,
  notAfter: IsoTimeSchema,
  expiresSoon: v.boolean(),
  expiryAnnouncedAt: v.pipe(
    v.nullable(IsoTimeSchema),
    v.description("When `saml.certificate_expiring` was raised for this certificate, or null"),
  ),
});

const MetadataRefreshSchema = v.pipe(
  v.object({
    attemptedAt: IsoTimeSchema,
    succeededAt: v.nullable(IsoTimeSchema),
    outcome: v.picklist(["updated", "unchanged", "failed"]),
    error: v.nullable(v.string()),
  }),
  v.description(
    "The last fetch of idpMetadataUrl (periodic, every SVC_SAML_METADATA_REFRESH_SECONDS, or refreshMetadata); a failure keeps the stored metadata",
  ),
);

/** A connection as the API shows it. */
export const ConnectionSchema = v.pipe(
  v.object({
    id: v.string(),
    realmId: v.string(),
    orgId: v.string(),
    displayName: v.string(),
    spEntityId: v.string(),
    acsUrl: v.string(),
    metadataUrl: v.string(),
    startUrl: v.string(),
    idpEntityId: v.string(),
    idpSsoUrl: v.nullable(v.string()),
    idpMetadataUrl: v.nullable(v.string()),
    metadataFetchedAt: v.nullable(IsoTimeSchema),
    metadataRefresh: v.nullable(MetadataRefreshSchema),
    certificates: v.array(CertificateSchema),
    attributeMapping: v.object({
      email: v.nullable(v.string()),
      name: v.nullable(v.string()),
      attributes: v.record(v.string(), v.string()),
    }),
    jitProvisioning: v.boolean(),
    allowIdpInitiated: v.boolean(),
    requireEncryptedAssertions: v.boolean(),
    enabled: v.boolean(),
    createdAt: IsoTimeSchema,
    updatedAt: IsoTimeSchema,
  }),
  v.title("SamlConnection"),
);

const TAGS = ["Admin: SAML"];
const PARAMS = { connectionId: "The connection's id" };

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "GET",
    path: BASE,
    summary: "List SAML connections",
    tags: TAGS,
    permissions: [...READ.global, ...READ.org],
    query: ListConnectionsQuerySchema,
    responses: {
      200: { description: "One page, by creation time", body: listSchema(ConnectionSchema) },
      ...errorResponses(400, 401, 403),
    },
  },
  {
    method: "POST",
    path: BASE,
    summary: "Add an organization's SAML identity provider",
    description:
      "From the IdP's metadata, pasted (`idpMetadataXml`) or by URL (`idpMetadataUrl`, fetched through the outbound guard). The answer holds what to give the IdP: `spEntityId`, `acsUrl`, `metadataUrl`. `makeDefault` makes it the organization's default identity provider (where verified email domains route sign-in). `requireEncryptedAssertions` refuses plain assertions and creates the connection's first encryption key.",
    tags: TAGS,
    permissions: [...MANAGE.global, ...MANAGE.org],
    body: CreateConnectionSchema,
    responses: {
      201: { description: "Created", body: ConnectionSchema },
      ...errorResponses(400, 401, 403, 404, 413),
    },
  },
  {
    method: "GET",
    path: ITEM,
    summary: "Read a SAML connection",
    tags: TAGS,
    permissions: [...READ.global, ...READ.org],
    params: PARAMS,
    responses: {
      200: { description: "The connection", body: ConnectionSchema },
      ...errorResponses(401, 403, 404),
    },
  },
  {
    method: "PATCH",
    path: ITEM,
    summary: "Change a SAML connection",
    description:
      "New metadata (`idpMetadataXml` or `idpMetadataUrl`) replaces the IdP's entity id, SSO URL and certificates; `refreshMetadata` fetches the stored URL again.",
    tags: TAGS,
    permissions: [...MANAGE.global, ...MANAGE.org],
    params: PARAMS,
    body: UpdateConnectionSchema,
    responses: {
      200: { description: "The connection", body: ConnectionSchema },
      ...errorResponses(400, 401, 403, 404, 413),
    },
  },
  {
    method: "DELETE",
    path: ITEM,
    summary: "Delete a SAML connection",
    description: "An organization whose default identity provider it was has none afterwards.",
    tags: TAGS,
    permissions: [...MANAGE.global, ...MANAGE.org],
    params: PARAMS,
    responses: { 204: { description: "Deleted" }, ...errorResponses(401, 403, 404) },
  },
];

/** The connection `id` when the caller's scope reaches it; 404 otherwise (never telling which). */
export async function visibleConnection(
  scope: FenceScope,
  id: string,
  connections: ConnectionStore,
): Promise<SamlConnection> {
  const connection = await connections.get(id);
  if (connection === null || connection.realmId !== scope.principal.realmId.toLowerCase()) {
    throw hidden("connection");
  }
  if (!covers(scope, connection.orgId)) throw hidden("connection");
  return connection;
}

/** The admin routes of the connections. */
export function adminRoutes(s: Saml): RouteInstaller {
  const { ctx } = s;

  const view = (c: SamlConnection) => {
    const urls = s.urls(c.id);
    const now = ctx.clock.now();
    return {
      id: c.id,
      realmId: c.realmId,
      orgId: c.orgId,
      displayName: c.displayName,
      spEntityId: urls.spEntityId,
      acsUrl: urls.acsUrl,
      metadataUrl: urls.metadataUrl,
      startUrl: urls.startUrl,
      idpEntityId: c.idpEntityId,
      idpSsoUrl: c.idpSsoUrl,
      idpMetadataUrl: c.idpMetadataUrl,
      metadataFetchedAt: c.metadataFetchedAt?.toISOString() ?? null,
      certificates: c.idpCertificates.map((der) => {
        const info = certificateInfo(der);
        return {
          sha256: info.sha256,
          subject: info.subject,
          notBefore: info.notBefore.toISOString(),
          notAfter: info.notAfter.toISOString(),
          expiresSoon: info.notAfter.getTime() - now < CERTIFICATE_WARNING_MS,
          expiryAnnouncedAt: c.expiryAnnounced[info.sha256]?.toISOString() ?? null,
        };
      }),
      metadataRefresh: c.idpMetadataUrl === null || c.metadataRefresh === null ? null : {
        attemptedAt: c.metadataRefresh.attemptedAt.toISOString(),
        succeededAt: c.metadataRefresh.succeededAt?.toISOString() ?? null,
        outcome: c.metadataRefresh.outcome,
        error: c.metadataRefresh.error,
      },
      attributeMapping: {
        email: c.attributeMapping.email,
        name: c.attributeMapping.name,
        attributes: { ...c.attributeMapping.attributes },
      },
      jitProvisioning: c.jitProvisioning,
      allowIdpInitiated: c.allowIdpInitiated,
      requireEncryptedAssertions: c.requireEncryptedAssertions,
      enabled: c.enabled,
      createdAt: c.createdAt.toISOString(),
      updatedAt: c.updatedAt.toISOString(),
    };
  };

  const visible = (scope: FenceScope, id: string, connections: ConnectionStore = s.connections) =>
    visibleConnection(scope, id, connections);

  const mapping = (m: v.InferOutput<typeof attributeMapping>): AttributeMapping => ({
    email: m.email,
    name: m.name,
    attributes: m.attributes,
  });

  return documented((app) => {
    app.get(BASE, async (c) => {
      const scope = await ctx.admin.scope(c, READ);
      const query = parseQuery(c, ListConnectionsQuerySchema);
      const orgId = scope.global ? query.orgId ?? null : scope.orgId;
      if (query.orgId !== undefined && !covers(scope, query.orgId)) throw hidden("organization");
      const all = await s.connections.list(scope.principal.realmId.toLowerCase(), orgId);
      return c.json(listBodyOf(all, pageOf(query), view));
    });

    app.post(BASE, bodyLimit(MAX_BODY_BYTES), async (c) => {
      const scope = await ctx.admin.scope(c, MANAGE);
      const body = await parseBody(c, CreateConnectionSchema);
      const org = await ctx.storage.organizations.get(body.orgId);
      if (org === null || org.realmId !== scope.principal.realmId.toLowerCase() || !covers(scope, org.id)) {
        throw hidden("organization");
      }
      const metadata = body.idpMetadataXml !== undefined
        ? parseIdpMetadata(body.idpMetadataXml)
        : await fetchIdpMetadataOrThrow(ctx, body.idpMetadataUrl!);
      const created = await ctx.admin.mutate(scope.principal, async ({ tx, emit }) => {
        const connection = await s.connections.in(tx).create({
          realmId: org.realmId,
          orgId: org.id,
          displayName: body.displayName,
          idpEntityId: metadata.entityId,
          idpSsoUrl: metadata.ssoUrl,
          idpCertificates: metadata.certificates,
          idpMetadataUrl: body.idpMetadataUrl ?? null,
          metadataFetchedAt: body.idpMetadataUrl === undefined ? null : new Date(ctx.clock.now()),
          attributeMapping: mapping(body.attributeMapping),
          jitProvisioning: body.jitProvisioning,
          allowIdpInitiated: body.allowIdpInitiated,
          requireEncryptedAssertions: body.requireEncryptedAssertions,
          enabled: body.enabled,
        });
        // A connection that requires encryption starts with its first SP key.
        if (body.requireEncryptedAssertions) await s.spKeys.in(tx).create(connection.id);
        if (body.makeDefault) {
          await tx.organizations.update(org.id, { defaultIdentityProviderId: connection.id });
        }
        await announceExpiring(tx.pluginSql, emit, connection, ctx.clock.now());
        return {
          value: connection,
          audit: {
            action: "saml.connection.create",
            target: connection.id,
            after: { ...view(connection), makeDefault: body.makeDefault },
          },
        };
      });
      c.header("Cache-Control", "no-store");
      return c.json(view(created), 201);
    });

    app.get(ITEM, async (c) => {
      const scope = await ctx.admin.scope(c, READ);
      return c.json(view(await visible(scope, c.req.param("connectionId"))));
    });

    app.patch(ITEM, bodyLimit(MAX_BODY_BYTES), async (c) => {
      const scope = await ctx.admin.scope(c, MANAGE);
      const body = await parseBody(c, UpdateConnectionSchema);
      const current = await visible(scope, c.req.param("connectionId"));
      let metadata: IdpMetadata | null = null;
      if (body.idpMetadataXml !== undefined) metadata = parseIdpMetadata(body.idpMetadataXml);
      else if (body.idpMetadataUrl !== undefined) {
        metadata = await fetchIdpMetadataOrThrow(ctx, body.idpMetadataUrl);
      } else if (body.refreshMetadata) {
        if (current.idpMetadataUrl === null) {
          throw new ValidationError(
            "Invalid request: refreshMetadata needs a connection made from a metadata URL.",
          );
        }
        metadata = await fetchIdpMetadataOrThrow(ctx, current.idpMetadataUrl);
      }
      const after = await ctx.admin.mutate(scope.principal, async ({ tx, emit }) => {
        // Read again in the transaction, which runs after any other admin change of the realm.
        const connections = s.connections.in(tx);
        const before = await visible(scope, c.req.param("connectionId"), connections);
        const changes: ConnectionChanges = {
          displayName: body.displayName,
          attributeMapping: body.attributeMapping === undefined ? undefined : mapping(body.attributeMapping),
          jitProvisioning: body.jitProvisioning,
          allowIdpInitiated: body.allowIdpInitiated,
          requireEncryptedAssertions: body.requireEncryptedAssertions,
          enabled: body.enabled,
          ...(metadata === null ? {} : {
            idpEntityId: metadata.entityId,
            idpSsoUrl: metadata.ssoUrl,
            idpCertificates: metadata.certificates,
            // Pasted metadata ends the link to a URL; a URL (new or refreshed) is remembered.
            idpMetadataUrl: body.idpMetadataXml !== undefined
              ? null
              : body.idpMetadataUrl ?? before.idpMetadataUrl,
          }),
        };
        // An identical update changes nothing: no write, no entry (a refresh that finds the same
        // metadata included).
        const same = Object.entries(changes).every(([key, value]) =>
          value === undefined || JSON.stringify(value) === JSON.stringify(before[key as keyof SamlConnection])
        );
        // A fetch of the URL (a new one, or refreshMetadata) is recorded like the periodic refresh's.
        if (metadata !== null && body.idpMetadataXml === undefined) {
          await recordRefresh(tx.pluginSql, before.id, ctx.clock.now(), same ? "unchanged" : "updated", null);
        }
        if (same) return { value: (await connections.get(before.id)) ?? before, audit: null };
        if (
          changes.requireEncryptedAssertions === true && (await s.spKeys.in(tx).list(before.id)).length === 0
        ) {
          throw new ValidationError(
            "Invalid request: requireEncryptedAssertions needs an encryption key (POST …/encryption-keys) first.",
          );
        }
        const fresh = await connections.update(before.id, {
          ...changes,
          ...(metadata === null ? {} : {
            metadataFetchedAt: changes.idpMetadataUrl === null ? null : new Date(ctx.clock.now()),
          }),
        });
        if (fresh === null) throw hidden("connection");
        await announceExpiring(tx.pluginSql, emit, fresh, ctx.clock.now());
        return {
          value: fresh,
          audit: {
            action: "saml.connection.update",
            target: fresh.id,
            before: view(before),
            after: view(fresh),
          },
        };
      });
      return c.json(view(after));
    });

    app.delete(ITEM, async (c) => {
      const scope = await ctx.admin.scope(c, MANAGE);
      await visible(scope, c.req.param("connectionId"));
      await ctx.admin.mutate(scope.principal, async ({ tx }) => {
        // Read again in the transaction: a concurrent duplicate finds the connection gone (404).
        const connections = s.connections.in(tx);
        const connection = await visible(scope, c.req.param("connectionId"), connections);
        const org = await tx.organizations.get(connection.orgId);
        if (org !== null && org.defaultIdentityProviderId === connection.id) {
          await tx.organizations.update(org.id, { defaultIdentityProviderId: null });
        }
        if (!await connections.delete(connection.id)) throw hidden("connection");
        await s.spKeys.in(tx).retireAll(connection.id);
        return {
          value: null,
          audit: { action: "saml.connection.delete", target: connection.id, before: view(connection) },
        };
      });
      return c.body(null, 204);
    });
  }, OPERATIONS);
}
