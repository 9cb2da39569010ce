/**
 * The realm's OIDC clients over the admin API (served by the `oidc-provider` plugin), fenced by
 * `svc:global:oidc-clients-read` / `-manage`:
 *
 * | Method | Path | |
 * |---|---|---|
 * | GET | `/svc-admin/oidc/clients` | list by client id (`?offset=&limit=`) |
 * | POST | `/svc-admin/oidc/clients` | create `{clientId, clientType, redirectUris, …}`: 201; a confidential client's `soc_…` secret is shown once (`no-store`) |
 * | GET | `/svc-admin/oidc/clients/{id}` | read |
 * | PATCH | `/svc-admin/oidc/clients/{id}` | change redirect URIs, scopes, consent, suspension |
 *
 * Redirect URIs are matched exactly by the provider. Secrets are stored as SHA-256 hex (256
 * random bits) with the tag `sha256`, never in clear and never in the audit entry.
 *
 * @module
 */
import * as v from "valibot";
import {
  OIDC_CLIENTS_MANAGE_GLOBAL,
  OIDC_CLIENTS_READ_GLOBAL,
} from "../../core/definitions/permissions/oidc.ts";
import { sha256Hex } from "../../core/digest.ts";
import { isUuid } from "../../core/ids.ts";
import { randomToken } from "../../core/random.ts";
import type { ClientRecord } from "../../storage/contract/clients.ts";
import type { Storage } from "../../storage/storage.ts";
import { fence, type FenceScope } from "../auth/fence.ts";
import { documented, errorResponses, IsoTimeSchema, type OperationDoc } from "../openapi/operation.ts";
import { noStore } from "../security-headers.ts";
import { parseBody } from "../validate.ts";
import type { AdminRouteDeps } from "./deps.ts";
import {
  adminMutation,
  asConflict,
  hidden,
  listBodyOf,
  listSchema,
  pageOf,
  PageQuerySchema,
  parseQuery,
} from "./kit.ts";

const READ = { global: [OIDC_CLIENTS_READ_GLOBAL, OIDC_CLIENTS_MANAGE_GLOBAL] };
const MANAGE = { global: [OIDC_CLIENTS_MANAGE_GLOBAL] };
const BASE = "/svc-admin/oidc/clients";
const ITEM = `${BASE}/:clientRowId`;

/** The prefix of an OIDC client secret. */
export const OIDC_CLIENT_SECRET_PREFIX = "soc_";
/** The scopes a client may be allowed. */
export const OIDC_SCOPES = ["openid", "profile", "email", "offline_access"] as const;

const redirectUri = v.pipe(
  v.string("a redirect URI must be a string"),
  v.maxLength(2000, "a redirect URI is longer than 2000 characters"),
  v.check(
    (text) => {
      try {
        const url = new URL(text);
        return (url.protocol === "https:" || url.protocol === "http:") && url.hash === "" &&
          url.href === text;
      } catch {
        return false;
      }
    },
    "a redirect URI is an absolute http(s) URL without fragment, in normalized form (as the client sends it)",
  ),
);
const uriList = (what: string) =>
  v.pipe(v.array(redirectUri, `${what} must be a list`), v.maxLength(20, `${what}: at most 20`));
const scopeList = v.pipe(
  v.array(v.picklist(OIDC_SCOPES, `allowedScopes: each one of ${OIDC_SCOPES.join(", ")}`)),
  v.check((scopes) => scopes.includes("openid"), "allowedScopes must include openid"),
);

/** The body of `POST /svc-admin/oidc/clients`. */
export const CreateOidcClientSchema = v.strictObject({
  clientId: v.pipe(
    v.string("clientId must be a string"),
    v.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'clientId must be 1–100 letters, digits, ".", "_" or "-"'),
  ),
  clientType: v.picklist(
    ["confidential", "public"],
    'clientType must be "confidential" (with a secret) or "public" (PKCE, no secret)',
  ),
  redirectUris: v.pipe(uriList("redirectUris"), v.minLength(1, "redirectUris: at least one")),
  postLogoutRedirectUris: v.optional(uriList("postLogoutRedirectUris"), []),
  allowedScopes: v.optional(scopeList, ["openid"]),
  requireConsent: v.optional(v.boolean("requireConsent must be true or false"), false),
});

/** The body of `PATCH /svc-admin/oidc/clients/{id}`. */
export const UpdateOidcClientSchema = v.strictObject({
  redirectUris: v.optional(v.pipe(uriList("redirectUris"), v.minLength(1, "redirectUris: at least one"))),
  postLogoutRedirectUris: v.optional(uriList("postLogoutRedirectUris")),
  allowedScopes: v.optional(scopeList),
  requireConsent: v.optional(v.boolean("requireConsent must be true or false")),
  suspended: v.optional(v.boolean("suspended must be true or false")),
});

/** A client as the API shows it (never the secret or its hash). */
export const OidcClientSchema = v.pipe(
  v.object({
    id: v.string(),
    realmId: v.string(),
    clientId: v.string(),
    clientType: v.string(),
    redirectUris: v.array(v.string()),
    postLogoutRedirectUris: v.array(v.string()),
    allowedScopes: v.array(v.string()),
    requireConsent: v.boolean(),
    suspended: v.boolean(),
    hasSecret: v.boolean(),
    createdAt: IsoTimeSchema,
  }),
  v.title("OidcClient"),
);

/** A client with its new secret (creation of a confidential client). */
export const OidcClientWithSecretSchema = v.pipe(
  v.object({
    ...OidcClientSchema.entries,
    clientSecret: v.pipe(
      v.nullable(v.string()),
      v.description("The `soc_…` secret, shown this once; null for a public client."),
    ),
  }),
  v.title("OidcClientWithSecret"),
);

/** The API view of a client. */
export function oidcClientView(client: ClientRecord): v.InferOutput<typeof OidcClientSchema> {
  return {
    id: client.id,
    realmId: client.realmId,
    clientId: client.clientId,
    clientType: client.clientType,
    redirectUris: [...client.redirectUris],
    postLogoutRedirectUris: [...client.postLogoutRedirectUris],
    allowedScopes: [...client.allowedScopes],
    requireConsent: client.requireConsent,
    suspended: client.suspended,
    hasSecret: client.secretHash !== null,
    createdAt: client.createdAt.toISOString(),
  };
}

const TAGS = ["Admin: OIDC clients"];
const PARAMS = { clientRowId: "The client's id (not its client_id)" };

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "GET",
    path: BASE,
    summary: "List the realm's OIDC clients",
    tags: TAGS,
    permissions: READ.global,
    query: PageQuerySchema,
    responses: {
      200: { description: "One page, by client id", body: listSchema(OidcClientSchema) },
      ...errorResponses(400, 401, 403),
    },
  },
  {
    method: "POST",
    path: BASE,
    summary: "Create an OIDC client",
    description:
      "A confidential client's `soc_…` secret is in the answer this once (`Cache-Control: no-store`). Redirect URIs are matched exactly.",
    tags: TAGS,
    permissions: MANAGE.global,
    body: CreateOidcClientSchema,
    responses: {
      201: { description: "Created", body: OidcClientWithSecretSchema },
      ...errorResponses(400, 401, 403, 409),
    },
  },
  {
    method: "GET",
    path: ITEM,
    summary: "Read an OIDC client",
    tags: TAGS,
    permissions: READ.global,
    params: PARAMS,
    responses: {
      200: { description: "The client", body: OidcClientSchema },
      ...errorResponses(401, 403, 404),
    },
  },
  {
    method: "PATCH",
    path: ITEM,
    summary: "Change an OIDC client",
    description: "Redirect URIs, scopes, consent, suspension (a suspended client is refused everywhere).",
    tags: TAGS,
    permissions: MANAGE.global,
    params: PARAMS,
    body: UpdateOidcClientSchema,
    responses: {
      200: { description: "The client", body: OidcClientSchema },
      ...errorResponses(400, 401, 403, 404),
    },
  },
];

/** The OIDC client routes. */
export function oidcClientRoutes(deps: AdminRouteDeps) {
  const { storage, snapshots } = deps;

  const visible = async (scope: FenceScope, id: string, tx: Storage = storage) => {
    const client = isUuid(id) ? await tx.clients.get(id) : null;
    if (client === null || client.realmId !== scope.principal.realmId.toLowerCase()) throw hidden("client");
    return client;
  };

  return documented((app, appDeps) => {
    app.get(BASE, async (c) => {
      const scope = await fence(c, snapshots, READ);
      const page = pageOf(parseQuery(c, PageQuerySchema));
      return c.json(listBodyOf(await storage.clients.list(scope.principal.realmId), page, oidcClientView));
    });

    app.post(BASE, noStore, async (c) => {
      const scope = await fence(c, snapshots, MANAGE);
      const body = await parseBody(c, CreateOidcClientSchema);
      const secret = body.clientType === "confidential"
        ? `${OIDC_CLIENT_SECRET_PREFIX}${randomToken(appDeps.random, 32)}`
        : null;
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const client = await tx.clients.create(scope.principal.realmId.toLowerCase(), body.clientId, {
          clientType: body.clientType,
          redirectUris: body.redirectUris,
          postLogoutRedirectUris: body.postLogoutRedirectUris,
          allowedScopes: body.allowedScopes,
          requireConsent: body.requireConsent,
          suspended: false,
          secretHash: secret === null ? null : sha256Hex(secret),
          secretAlgorithm: secret === null ? null : "sha256",
          secretResetRequired: false,
        }).catch(asConflict);
        await emit({
          kind: "oidc.client_created",
          occurredAt: appDeps.clock.now(),
          realmId: client.realmId,
          data: { id: client.id, clientId: client.clientId, clientType: client.clientType },
        });
        return {
          value: client,
          audit: { action: "oidc.client.create", target: client.id, after: oidcClientView(client) },
        };
      });
      return c.json({ ...oidcClientView(value), clientSecret: secret }, 201);
    });

    app.get(ITEM, async (c) => {
      const scope = await fence(c, snapshots, READ);
      return c.json(oidcClientView(await visible(scope, c.req.param("clientRowId"))));
    });

    app.patch(ITEM, async (c) => {
      const scope = await fence(c, snapshots, MANAGE);
      const body = await parseBody(c, UpdateOidcClientSchema);
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const before = await visible(scope, c.req.param("clientRowId"), tx);
        const after = await tx.clients.update(before.id, body);
        if (after === null) throw hidden("client");
        await emit({
          kind: "oidc.client_updated",
          occurredAt: appDeps.clock.now(),
          realmId: after.realmId,
          data: {
            id: after.id,
            clientId: after.clientId,
            changed: Object.keys(body),
            suspended: after.suspended,
          },
        });
        return {
          value: after,
          audit: {
            action: "oidc.client.update",
            target: after.id,
            before: oidcClientView(before),
            after: oidcClientView(after),
          },
        };
      });
      return c.json(oidcClientView(value));
    });
  }, OPERATIONS);
}
