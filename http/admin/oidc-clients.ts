/**
 * The realm's OIDC clients over the admin API (served by the `oidc-provider` plugin), fenced by
 * `svc:global:oidc-clients-read` / `-manage`:
 *
 * | Method | Path | |
 * |---|---|---|
 * | GET | `/svc-admin/oidc/clients` | list by client id (`?offset=&limit=`) |
 * | POST | `/svc-admin/oidc/clients` | create `{clientId, clientType, redirectUris, …}`: 201; a confidential client's `soc_…` secret is shown once (`no-store`) |
 * | GET | `/svc-admin/oidc/clients/{id}` | read |
 * | PATCH | `/svc-admin/oidc/clients/{id}` | change redirect URIs, scopes, consent, suspension, `private_key_jwt` keys, PAR requirement, back-channel logout, refresh grace window |
 * | DELETE | `/svc-admin/oidc/clients/{id}` | delete; the sessions (access and refresh tokens) issued to it end |
 *
 * Clients that registered themselves (RFC 7591, the provider's registration endpoint) are listed
 * and managed here like the others, marked `dynamicallyRegistered`.
 *
 * A confidential client authenticates with its secret (`client_secret_basic` or
 * `client_secret_post`) or, with `tokenEndpointAuthMethod: "private_key_jwt"`, with JWT
 * assertions signed by one of its public keys: a registered `jwks` (public members only) or a
 * `jwksUri` (https; http only for a private host allowed by `webhooks.allowPrivateReceivers`).
 * Such a client has no secret.
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
import { clientJwksProblem, clientJwksUriProblem } from "../../core/credentials/client-keys.ts";
import { ValidationError } from "../../core/errors.ts";
import { outboundPolicyFromConfig } from "../../core/net/outbound-rules.ts";
import { isUuid } from "../../core/ids.ts";
import { randomToken } from "../../core/random.ts";
import { endClientSessions } from "../../core/sessions/client-sessions.ts";
import type { ClientRecord } from "../../core/storage/clients.ts";
import type { Storage } from "../../core/storage/storage.ts";
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
  sameView,
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

/** How a client authenticates at the token endpoint. */
export const TOKEN_ENDPOINT_AUTH_METHODS = [
  "client_secret_basic",
  "client_secret_post",
  "private_key_jwt",
  "none",
] as const;

const jwksField = v.pipe(
  v.unknown(),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const problem = clientJwksProblem(dataset.value);
    if (problem !== null) addIssue({ message: problem });
  }),
  v.transform((value) => value as { keys: Record<string, unknown>[] }),
);
const jwksUriField = v.pipe(
  v.string("jwksUri must be a string"),
  v.maxLength(2000, "jwksUri is longer than 2000 characters"),
);
const backchannelUriField = v.nullable(v.pipe(
  v.string("backchannelLogoutUri must be a string"),
  v.maxLength(2000, "backchannelLogoutUri is longer than 2000 characters"),
));
const clientNameField = v.nullable(v.pipe(
  v.string("clientName must be a string"),
  v.trim(),
  v.minLength(1, "clientName must not be empty"),
  v.maxLength(100, "clientName is longer than 100 characters"),
  v.check(
    (text) => [...text].every((ch) => ch.charCodeAt(0) >= 0x20 && ch.charCodeAt(0) !== 0x7f),
    "clientName must not hold control characters",
  ),
));
const backchannelSessionField = v.boolean("backchannelLogoutSessionRequired must be true or false");
/** The longest refresh grace window a client may be given (seconds). */
export const MAX_REFRESH_GRACE_SECONDS = 300;
const graceField = v.pipe(
  v.number("refreshTokenGraceSeconds must be a number"),
  v.integer("refreshTokenGraceSeconds must be a whole number"),
  v.minValue(0, "refreshTokenGraceSeconds must be at least 0"),
  v.maxValue(
    MAX_REFRESH_GRACE_SECONDS,
    `refreshTokenGraceSeconds must be at most ${MAX_REFRESH_GRACE_SECONDS}`,
  ),
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
  // Without a list, the standard scopes svc serves; `offline_access` (refresh tokens) is listed explicitly.
  allowedScopes: v.optional(scopeList, ["openid", "profile", "email"]),
  requireConsent: v.optional(v.boolean("requireConsent must be true or false"), false),
  tokenEndpointAuthMethod: v.optional(
    v.picklist(
      TOKEN_ENDPOINT_AUTH_METHODS,
      `tokenEndpointAuthMethod must be one of ${TOKEN_ENDPOINT_AUTH_METHODS.join(", ")}`,
    ),
  ),
  jwks: v.optional(jwksField),
  jwksUri: v.optional(jwksUriField),
  requirePushedAuthorizationRequests: v.optional(
    v.boolean("requirePushedAuthorizationRequests must be true or false"),
    false,
  ),
  backchannelLogoutUri: v.optional(backchannelUriField, null),
  backchannelLogoutSessionRequired: v.optional(backchannelSessionField, false),
  refreshTokenGraceSeconds: v.optional(graceField, 0),
  clientName: v.optional(clientNameField, null),
  dpopBoundAccessTokens: v.optional(v.boolean("dpopBoundAccessTokens must be true or false"), false),
  idTokenOnRefresh: v.optional(v.boolean("idTokenOnRefresh must be true or false"), true),
});

/** The body of `PATCH /svc-admin/oidc/clients/{id}`. */
export const UpdateOidcClientSchema = v.strictObject({
  redirectUris: v.optional(v.pipe(uriList("redirectUris"), v.minLength(1, "redirectUris: at least one"))),
  postLogoutRedirectUris: v.optional(uriList("postLogoutRedirectUris")),
  allowedScopes: v.optional(scopeList),
  requireConsent: v.optional(v.boolean("requireConsent must be true or false")),
  suspended: v.optional(v.boolean("suspended must be true or false")),
  jwks: v.optional(jwksField),
  jwksUri: v.optional(jwksUriField),
  requirePushedAuthorizationRequests: v.optional(
    v.boolean("requirePushedAuthorizationRequests must be true or false"),
  ),
  backchannelLogoutUri: v.optional(backchannelUriField),
  backchannelLogoutSessionRequired: v.optional(backchannelSessionField),
  refreshTokenGraceSeconds: v.optional(graceField),
  clientName: v.optional(clientNameField),
  dpopBoundAccessTokens: v.optional(v.boolean("dpopBoundAccessTokens must be true or false")),
  idTokenOnRefresh: v.optional(v.boolean("idTokenOnRefresh must be true or false")),
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
    tokenEndpointAuthMethod: v.picklist(TOKEN_ENDPOINT_AUTH_METHODS),
    jwks: v.nullable(v.object({ keys: v.array(v.record(v.string(), v.unknown())) })),
    jwksUri: v.nullable(v.string()),
    requirePushedAuthorizationRequests: v.boolean(),
    backchannelLogoutUri: v.nullable(v.string()),
    backchannelLogoutSessionRequired: v.boolean(),
    refreshTokenGraceSeconds: v.number(),
    clientName: v.nullable(v.string()),
    dpopBoundAccessTokens: v.boolean(),
    idTokenOnRefresh: v.boolean(),
    dynamicallyRegistered: v.pipe(
      v.boolean(),
      v.description(
        "Whether the client registered itself at the provider's registration endpoint (RFC 7591).",
      ),
    ),
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
    tokenEndpointAuthMethod: authMethodOf(client),
    jwks: client.jwks === null ? null : { keys: client.jwks.keys.map((key) => ({ ...key })) },
    jwksUri: client.jwksUri,
    requirePushedAuthorizationRequests: client.requirePushedAuthorizationRequests,
    backchannelLogoutUri: client.backchannelLogoutUri,
    backchannelLogoutSessionRequired: client.backchannelLogoutSessionRequired,
    refreshTokenGraceSeconds: client.refreshTokenGraceSeconds,
    clientName: client.clientName,
    dpopBoundAccessTokens: client.dpopBoundAccessTokens ?? false,
    idTokenOnRefresh: client.idTokenOnRefresh ?? true,
    dynamicallyRegistered: client.dynamicallyRegistered ?? false,
    createdAt: client.createdAt.toISOString(),
  };
}

/** The token endpoint authentication method of a client (its secret by default). */
export function authMethodOf(client: ClientRecord): (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number] {
  if (client.tokenEndpointAuthMethod === "private_key_jwt") return "private_key_jwt";
  if (client.clientType === "public") return "none";
  return client.tokenEndpointAuthMethod === "client_secret_post"
    ? "client_secret_post"
    : "client_secret_basic";
}

/** Checks the key material of a `private_key_jwt` client: exactly one of `jwks` and `jwksUri`. */
function checkKeys(
  method: string,
  keys: { jwks?: unknown; jwksUri?: string | null },
  allowPrivate: readonly string[],
): void {
  const hasJwks = keys.jwks !== undefined && keys.jwks !== null;
  const hasUri = keys.jwksUri !== undefined && keys.jwksUri !== null;
  if (method !== "private_key_jwt") {
    if (hasJwks || hasUri) {
      throw new ValidationError('jwks and jwksUri are for tokenEndpointAuthMethod "private_key_jwt"');
    }
    return;
  }
  if (hasJwks === hasUri) throw new ValidationError("a private_key_jwt client has either jwks or jwksUri");
  if (hasUri) {
    const problem = clientJwksUriProblem(keys.jwksUri!, { allowPrivate });
    if (problem !== null) throw new ValidationError(problem);
  }
}

/** Checks a back-channel logout URI as a receiver the outbound guard would call. */
function checkBackchannelUri(uri: string | null | undefined, allowPrivate: readonly string[]): void {
  if (uri === undefined || uri === null) return;
  const problem = clientJwksUriProblem(uri, { allowPrivate });
  if (problem !== null) throw new ValidationError(problem.replace("jwksUri", "backchannelLogoutUri"));
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
      "A confidential client's `soc_…` secret is in the answer this once (`Cache-Control: no-store`). Redirect URIs are matched exactly. Without `allowedScopes` the client gets `openid profile email` (`offline_access` only when listed). A client registered with `tokenEndpointAuthMethod` `client_secret_basic` or `client_secret_post` may use only that method; without one, its secret works either way. With `tokenEndpointAuthMethod: private_key_jwt` the client has no secret and signs RFC 7523 assertions with one of its keys: `jwks` (public keys only) or `jwksUri` (https; http only for a private host allowed by `webhooks.allowPrivateReceivers`). `backchannelLogoutUri` (same URL rules) receives OIDC Back-Channel Logout tokens, with `sid` when `backchannelLogoutSessionRequired`; `refreshTokenGraceSeconds` (0–300, default 0: off) lets a rotated refresh token presented again by the same client within that many seconds get the same successor instead of revoking the family. `dpopBoundAccessTokens: true` (RFC 9449 `dpop_bound_access_tokens`): the token endpoint refuses the client's requests without a DPoP proof. `idTokenOnRefresh` (default true): whether a refresh grant answers a new ID token (OIDC Core 12.2 makes it optional; false saves one RS256 signature per refresh).",
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
    description:
      "Redirect URIs, scopes, consent, suspension (a suspended client is refused everywhere), the keys of a `private_key_jwt` client (`jwks` or `jwksUri` replace the registered ones), the back-channel logout registration and the refresh grace window.",
    tags: TAGS,
    permissions: MANAGE.global,
    params: PARAMS,
    body: UpdateOidcClientSchema,
    responses: {
      200: { description: "The client", body: OidcClientSchema },
      ...errorResponses(400, 401, 403, 404),
    },
  },
  {
    method: "DELETE",
    path: ITEM,
    summary: "Delete an OIDC client",
    description:
      "The client is removed and every session issued to it ends (its access tokens stop on every instance, its refresh tokens are revoked). Consents given to it do not carry over to a later client with the same client id.",
    tags: TAGS,
    permissions: MANAGE.global,
    params: PARAMS,
    responses: {
      204: { description: "Deleted" },
      ...errorResponses(401, 403, 404),
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
      const method = body.tokenEndpointAuthMethod ??
        (body.clientType === "public" ? "none" : "client_secret_basic");
      if ((method === "none") !== (body.clientType === "public")) {
        throw new ValidationError('tokenEndpointAuthMethod "none" is for public clients, and only it');
      }
      checkKeys(method, body, outboundPolicyFromConfig(appDeps.config).allowPrivate);
      checkBackchannelUri(body.backchannelLogoutUri, outboundPolicyFromConfig(appDeps.config).allowPrivate);
      const secret = body.clientType === "confidential" && method !== "private_key_jwt"
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
          // A method named at registration is the only one the client may use; without one, a
          // confidential client's secret works by Basic or in the form.
          tokenEndpointAuthMethod: method === "none" ? null : body.tokenEndpointAuthMethod ?? null,
          jwks: body.jwks ?? null,
          jwksUri: body.jwksUri ?? null,
          requirePushedAuthorizationRequests: body.requirePushedAuthorizationRequests,
          backchannelLogoutUri: body.backchannelLogoutUri,
          backchannelLogoutSessionRequired: body.backchannelLogoutSessionRequired,
          refreshTokenGraceSeconds: body.refreshTokenGraceSeconds,
          clientName: body.clientName,
          dpopBoundAccessTokens: body.dpopBoundAccessTokens,
          idTokenOnRefresh: body.idTokenOnRefresh,
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
      checkBackchannelUri(body.backchannelLogoutUri, outboundPolicyFromConfig(appDeps.config).allowPrivate);
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const before = await visible(scope, c.req.param("clientRowId"), tx);
        const { jwks, jwksUri, ...rest } = body;
        let keys = {};
        if (jwks !== undefined || jwksUri !== undefined) {
          // New keys replace the old ones (one of jwks and jwksUri).
          keys = { jwks: jwks ?? null, jwksUri: jwksUri ?? null };
          checkKeys(authMethodOf(before), keys, outboundPolicyFromConfig(appDeps.config).allowPrivate);
        }
        const after = await tx.clients.update(before.id, { ...rest, ...keys });
        if (after === null) throw hidden("client");
        // An identical update changes nothing: no event, no entry.
        if (sameView(oidcClientView(before), oidcClientView(after))) return { value: after, audit: null };
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

    app.delete(ITEM, async (c) => {
      const scope = await fence(c, snapshots, MANAGE);
      const endedAt = appDeps.clock.now();
      const { value: ended } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const before = await visible(scope, c.req.param("clientRowId"), tx);
        if (!await tx.clients.delete(before.id)) throw hidden("client");
        // Every session issued to the client ends: its access tokens and refresh tokens with it.
        const sessionIds = await endClientSessions(tx, before.realmId, before.clientId);
        await emit({
          kind: "oidc.client_deleted",
          occurredAt: endedAt,
          realmId: before.realmId,
          data: { id: before.id, clientId: before.clientId, sessionsEnded: sessionIds.length },
        });
        return {
          value: sessionIds,
          audit: {
            action: "oidc.client.delete",
            target: before.id,
            before: oidcClientView(before),
            after: { sessionsEnded: sessionIds.length },
          },
        };
      });
      await deps.sessions?.announce(ended.map((id) => ({ id, endedAt })));
      return c.body(null, 204);
    });
  }, OPERATIONS);
}
