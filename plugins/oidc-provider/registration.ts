/**
 * `POST /oidc/register`: dynamic client registration (RFC 7591 3), off by default. With
 * `SVC_OIDC_REGISTRATION=initial-token` a client registers itself with an initial access token
 * an administrator minted (`initial-access-tokens.ts`) as its bearer token, and discovery
 * advertises the endpoint (`registration_endpoint`); while off the endpoint answers 404 and
 * discovery does not name it. node-oidc-provider's `features.registration` with
 * `initialAccessToken` is the model.
 *
 * - The request is the client's metadata (RFC 7591 2) as JSON, at most 16 KiB, no U+0000
 *   anywhere; members svc does not know are ignored (RFC 7591 2), values svc cannot honour are
 *   refused with `invalid_client_metadata`, bad redirect URIs with `invalid_redirect_uri`
 *   (RFC 7591 3.2.2), a software statement with `invalid_software_statement` (none accepted).
 * - Redirect URIs are https, absolute, without fragment, in normalized form; a native client
 *   (`application_type: native`) may use http on a loopback host (RFC 8252 7.3).
 * - The metadata maps onto svc's client record: `token_endpoint_auth_method` (default
 *   `client_secret_basic`; `none` makes a public client), `grant_types` `authorization_code`
 *   (required) and `refresh_token` (exactly when `scope` holds `offline_access`), `response_types`
 *   `code`, `scope` (of `openid profile email offline_access`, with `openid`; default
 *   `openid profile email`, plus `offline_access` with the refresh grant), `jwks` or `jwks_uri`
 *   (only with `private_key_jwt`; the URI is checked like an administrator's and fetched, later,
 *   only through svc's outbound guard), `post_logout_redirect_uris`, `backchannel_logout_uri`
 *   and `backchannel_logout_session_required`, `require_pushed_authorization_requests`,
 *   `dpop_bound_access_tokens`, `client_name`. `client_uri`, `logo_uri`, `tos_uri`,
 *   `policy_uri` (https) and `contacts` are kept in the plugin's registrations table.
 * - A registered client asks its users for consent (`requireConsent`); it is an ordinary client
 *   otherwise, listed and managed at `/svc-admin/oidc/clients` (marked `dynamicallyRegistered`).
 * - The registration takes one use of the token, creates the client, emits `oidc.client_created`
 *   and appends one entry (`oidc.client.register`, actor `oidc-provider:initial-access-token:<id>`)
 *   to the realm's audit chain, in one transaction: a limited token registers at most its number
 *   of clients, however many requests race.
 * - The answer (201, `Cache-Control: no-store`): `client_id`, `client_secret` for a client that
 *   authenticates with one (with `client_secret_expires_at: 0`: it does not expire),
 *   `client_id_issued_at`, and the metadata as registered.
 *
 * Not served: RFC 7592 (reading, changing or deleting a registration with a registration access
 * token); administrators manage registered clients.
 *
 * @module
 */
import type { Context } from "hono";
import * as v from "valibot";
import {
  bodyLimit,
  clientJwksProblem,
  clientJwksUriProblem,
  documented,
  NotFoundError,
  OIDC_CLIENT_SECRET_PREFIX,
  type OperationDoc,
  outboundPolicyFromConfig,
  parseBody,
  randomToken,
  type RouteInstaller,
  sha256Hex,
  SIGNING_ALGORITHM,
  SvcError,
} from "../../mod.ts";
import {
  type InitialAccessTokenRecord,
  initialAccessTokenStore,
  tokenStatus,
} from "./initial-access-tokens.ts";
import { PATHS, type Provider, SUPPORTED_SCOPES } from "./shared.ts";

/** The body limit of a registration request (bytes). */
export const REGISTRATION_BODY_LIMIT = 16 * 1024;

/** The prefix of a dynamically registered client's `client_id`. */
export const REGISTERED_CLIENT_ID_PREFIX = "dyn-";

/** The registration settings (`SVC_OIDC_REGISTRATION`). */
export const REGISTRATION_MODES = ["off", "initial-token"] as const;

const AUTH_METHODS = ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"] as const;
const GRANT_TYPES = ["authorization_code", "refresh_token"] as const;
const DEFAULT_SCOPES = ["openid", "profile", "email"];

const text = (field: string, max: number) =>
  v.pipe(
    v.string(`${field} must be a string`),
    v.maxLength(max, `${field} is longer than ${max} characters`),
  );
const list = <T extends v.GenericSchema<unknown, string>>(field: string, item: T, max: number) =>
  v.pipe(v.array(item, `${field} must be a list`), v.maxLength(max, `${field}: at most ${max}`));

/** The client metadata svc reads (RFC 7591 2, OIDC Dynamic Client Registration 2); other members are ignored. */
export const RegistrationRequestSchema = v.object({
  redirect_uris: v.optional(list("redirect_uris", text("a redirect URI", 2000), 20)),
  post_logout_redirect_uris: v.optional(list("post_logout_redirect_uris", text("a redirect URI", 2000), 20)),
  token_endpoint_auth_method: v.optional(
    v.picklist(AUTH_METHODS, `token_endpoint_auth_method must be one of ${AUTH_METHODS.join(", ")}`),
    "client_secret_basic",
  ),
  grant_types: v.optional(list("grant_types", text("a grant type", 200), 10), ["authorization_code"]),
  response_types: v.optional(list("response_types", text("a response type", 200), 10), ["code"]),
  application_type: v.optional(
    v.picklist(["web", "native"], "application_type must be web or native"),
    "web",
  ),
  client_name: v.optional(v.pipe(
    v.string("client_name must be a string"),
    v.trim(),
    v.minLength(1, "client_name must not be empty"),
    v.maxLength(100, "client_name is longer than 100 characters"),
    v.check(
      (name) => [...name].every((ch) => ch.charCodeAt(0) >= 0x20 && ch.charCodeAt(0) !== 0x7f),
      "client_name must not hold control characters",
    ),
  )),
  client_uri: v.optional(text("client_uri", 2000)),
  logo_uri: v.optional(text("logo_uri", 2000)),
  tos_uri: v.optional(text("tos_uri", 2000)),
  policy_uri: v.optional(text("policy_uri", 2000)),
  scope: v.optional(text("scope", 1000)),
  contacts: v.optional(list("contacts", text("a contact", 320), 10)),
  jwks: v.optional(v.unknown()),
  jwks_uri: v.optional(text("jwks_uri", 2000)),
  backchannel_logout_uri: v.optional(text("backchannel_logout_uri", 2000)),
  backchannel_logout_session_required: v.optional(
    v.boolean("backchannel_logout_session_required must be true or false"),
    false,
  ),
  require_pushed_authorization_requests: v.optional(
    v.boolean("require_pushed_authorization_requests must be true or false"),
    false,
  ),
  dpop_bound_access_tokens: v.optional(v.boolean("dpop_bound_access_tokens must be true or false"), false),
  id_token_signed_response_alg: v.optional(
    v.literal(SIGNING_ALGORITHM, `id_token_signed_response_alg: only ${SIGNING_ALGORITHM}`),
  ),
  subject_type: v.optional(v.literal("public", "subject_type: only public")),
  software_statement: v.optional(v.unknown()),
});

/** A refusal of RFC 7591 3.2.2. */
export class RegistrationError extends SvcError {
  /** `error` is the RFC 7591 error code. */
  constructor(
    readonly error: "invalid_client_metadata" | "invalid_redirect_uri" | "invalid_software_statement",
    description: string,
  ) {
    super(error, description, 400);
    this.name = "RegistrationError";
  }
}

/** The metadata of a registration as svc honours it (RFC 7591 names; what the answer echoes). */
export type RegisteredMetadata = Record<string, unknown> & {
  readonly redirect_uris: readonly string[];
  readonly token_endpoint_auth_method: (typeof AUTH_METHODS)[number];
  readonly scope: string;
};

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

/** Why `uri` cannot be a redirect URI of a client of `applicationType`, or null. */
function redirectUriProblem(uri: string, applicationType: "web" | "native", field: string): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `${field}: ${JSON.stringify(uri)} is not an absolute URL`;
  }
  if (url.hash !== "" || uri.includes("#")) return `${field}: a redirect URI has no fragment`;
  if (url.href !== uri) return `${field}: ${JSON.stringify(uri)} is not in normalized form (${url.href})`;
  if (url.username !== "" || url.password !== "") return `${field}: a redirect URI has no credentials`;
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:" && applicationType === "native" && LOOPBACK_HOSTS.has(url.hostname)) {
    return null;
  }
  return applicationType === "native"
    ? `${field}: a native client's redirect URI is https, or http on a loopback host (127.0.0.1, [::1], localhost)`
    : `${field}: a web client's redirect URI is https`;
}

/** Whether `uri` is an https URL (for client_uri, logo_uri, tos_uri, policy_uri). */
function isHttpsUrl(uri: string): boolean {
  try {
    const url = new URL(uri);
    return url.protocol === "https:" && url.username === "" && url.password === "";
  } catch {
    return false;
  }
}

const unique = <T>(items: readonly T[]): T[] => [...new Set(items)];

/**
 * Checks a registration request's metadata and answers it as svc registers it; throws
 * {@link RegistrationError}. `allowPrivate` is the outbound guard's list of allowed private
 * hosts (for `jwks_uri` and `backchannel_logout_uri`).
 */
export function registeredMetadata(body: unknown, allowPrivate: readonly string[]): RegisteredMetadata {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new RegistrationError("invalid_client_metadata", "the body is a JSON object of client metadata");
  }
  const parsed = v.safeParse(RegistrationRequestSchema, body);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const key = issue.path?.[0]?.key;
    throw new RegistrationError(
      key === "redirect_uris" ? "invalid_redirect_uri" : "invalid_client_metadata",
      issue.message,
    );
  }
  const m = parsed.output;
  if (m.software_statement !== undefined) {
    throw new RegistrationError("invalid_software_statement", "software statements are not accepted");
  }
  const bad = (description: string) => new RegistrationError("invalid_client_metadata", description);

  const responseTypes = unique(m.response_types);
  if (responseTypes.length !== 1 || responseTypes[0] !== "code") {
    throw bad('response_types: only "code" (the authorization code flow)');
  }
  const grantTypes = unique(m.grant_types);
  for (const grant of grantTypes) {
    if (!(GRANT_TYPES as readonly string[]).includes(grant)) {
      throw bad(
        grant === "client_credentials"
          ? "grant_types: client_credentials is for service accounts, not registered clients"
          : `grant_types: ${JSON.stringify(grant)} is not supported (authorization_code, refresh_token)`,
      );
    }
  }
  if (!grantTypes.includes("authorization_code")) {
    throw bad('grant_types must include "authorization_code" (response type "code")');
  }

  if (m.redirect_uris === undefined || m.redirect_uris.length === 0) {
    throw new RegistrationError(
      "invalid_redirect_uri",
      "redirect_uris is required (the authorization code flow)",
    );
  }
  for (const uri of m.redirect_uris) {
    const problem = redirectUriProblem(uri, m.application_type, "redirect_uris");
    if (problem !== null) throw new RegistrationError("invalid_redirect_uri", problem);
  }
  for (const uri of m.post_logout_redirect_uris ?? []) {
    const problem = redirectUriProblem(uri, m.application_type, "post_logout_redirect_uris");
    if (problem !== null) throw bad(problem);
  }

  const refresh = grantTypes.includes("refresh_token");
  let scopes: string[];
  if (m.scope === undefined) {
    scopes = refresh ? [...DEFAULT_SCOPES, "offline_access"] : [...DEFAULT_SCOPES];
  } else {
    scopes = unique(m.scope.split(" ").filter((scope) => scope !== ""));
    for (const scope of scopes) {
      if (!(SUPPORTED_SCOPES as readonly string[]).includes(scope)) {
        throw bad(`scope: ${JSON.stringify(scope)} is not one of ${SUPPORTED_SCOPES.join(", ")}`);
      }
    }
    if (!scopes.includes("openid")) throw bad("scope must include openid");
    if (scopes.includes("offline_access") !== refresh) {
      throw bad('scope holds "offline_access" exactly when grant_types holds "refresh_token"');
    }
  }

  const method = m.token_endpoint_auth_method;
  const hasJwks = m.jwks !== undefined;
  const hasJwksUri = m.jwks_uri !== undefined;
  if (method === "private_key_jwt") {
    if (hasJwks === hasJwksUri) throw bad("a private_key_jwt client registers either jwks or jwks_uri");
  } else if (hasJwks || hasJwksUri) {
    throw bad('jwks and jwks_uri are for token_endpoint_auth_method "private_key_jwt"');
  }
  if (hasJwks) {
    const problem = clientJwksProblem(m.jwks);
    if (problem !== null) throw bad(problem);
  }
  if (hasJwksUri) {
    const problem = clientJwksUriProblem(m.jwks_uri!, { allowPrivate });
    if (problem !== null) throw bad(problem.replace("jwksUri", "jwks_uri"));
  }
  if (m.backchannel_logout_uri !== undefined) {
    const problem = clientJwksUriProblem(m.backchannel_logout_uri, { allowPrivate });
    if (problem !== null) throw bad(problem.replace("jwksUri", "backchannel_logout_uri"));
  }
  for (const field of ["client_uri", "logo_uri", "tos_uri", "policy_uri"] as const) {
    const value = m[field];
    if (value !== undefined && !isHttpsUrl(value)) throw bad(`${field} must be an https URL`);
  }

  const out: Record<string, unknown> = {
    redirect_uris: [...m.redirect_uris],
    token_endpoint_auth_method: method,
    grant_types: GRANT_TYPES.filter((grant) => grantTypes.includes(grant)),
    response_types: ["code"],
    application_type: m.application_type,
    scope: scopes.join(" "),
    id_token_signed_response_alg: SIGNING_ALGORITHM,
    subject_type: "public",
    require_pushed_authorization_requests: m.require_pushed_authorization_requests,
    dpop_bound_access_tokens: m.dpop_bound_access_tokens,
  };
  if (m.post_logout_redirect_uris !== undefined) {
    out.post_logout_redirect_uris = [...m.post_logout_redirect_uris];
  }
  if (m.client_name !== undefined) out.client_name = m.client_name;
  for (const field of ["client_uri", "logo_uri", "tos_uri", "policy_uri"] as const) {
    if (m[field] !== undefined) out[field] = m[field];
  }
  if (m.contacts !== undefined) out.contacts = [...m.contacts];
  if (hasJwks) out.jwks = m.jwks;
  if (hasJwksUri) out.jwks_uri = m.jwks_uri;
  if (m.backchannel_logout_uri !== undefined) {
    out.backchannel_logout_uri = m.backchannel_logout_uri;
    out.backchannel_logout_session_required = m.backchannel_logout_session_required;
  }
  return out as RegisteredMetadata;
}

/** The initial access token was unknown, or is expired, spent or revoked. */
class TokenRefused extends Error {}

const ErrorSchema = v.pipe(
  v.object({ error: v.string(), error_description: v.optional(v.string()) }),
  v.title("OidcRegistrationError"),
);

const operations = (): readonly OperationDoc[] => [
  {
    method: "POST",
    path: PATHS.register,
    summary: "Dynamic client registration (RFC 7591)",
    description:
      "Off unless `SVC_OIDC_REGISTRATION=initial-token` (404 otherwise). `Authorization: Bearer soi_…`: an initial access token minted at `/svc-admin/oidc/initial-access-tokens`; each registration takes one of its uses. The body is the client's metadata (RFC 7591 2; at most 16 KiB; unknown members ignored): `redirect_uris` (https; http on a loopback host for `application_type: native`), `token_endpoint_auth_method` (`client_secret_basic` by default, `client_secret_post`, `private_key_jwt` with `jwks` or `jwks_uri`, `none` for a public client), `grant_types` (`authorization_code`, and `refresh_token` with `offline_access` in `scope`), `response_types` (`code`), `scope`, `client_name`, `client_uri`, `logo_uri`, `tos_uri`, `policy_uri`, `contacts`, `post_logout_redirect_uris`, `backchannel_logout_uri`, `backchannel_logout_session_required`, `require_pushed_authorization_requests`, `dpop_bound_access_tokens`. The client asks its users for consent; administrators see it at `/svc-admin/oidc/clients`, marked `dynamicallyRegistered`.",
    tags: ["OIDC provider"],
    auth: "public",
    responses: {
      201: {
        description:
          "`client_id`, `client_secret` (a client authenticating with a secret; shown once), `client_id_issued_at`, `client_secret_expires_at` (0: never), and the metadata as registered",
        body: v.pipe(
          v.objectWithRest({
            client_id: v.string(),
            client_secret: v.optional(v.string()),
            client_id_issued_at: v.number(),
            client_secret_expires_at: v.optional(v.number()),
            redirect_uris: v.array(v.string()),
            token_endpoint_auth_method: v.picklist(AUTH_METHODS),
            grant_types: v.array(v.string()),
            response_types: v.array(v.string()),
            scope: v.string(),
          }, v.unknown()),
          v.title("OidcClientRegistration"),
        ),
        headers: { "Cache-Control": "no-store" },
      },
      400: {
        description: "`invalid_client_metadata`, `invalid_redirect_uri` or `invalid_software_statement`",
        body: ErrorSchema,
      },
      401: {
        description: "`invalid_token`: no initial access token, or an unknown, expired, spent or revoked one",
        body: ErrorSchema,
      },
      404: { description: "Registration is off" },
      413: { description: "The body is larger than the limit" },
    },
  },
];

const noStoreHeaders = { "Cache-Control": "no-store", Pragma: "no-cache" };

function refuse(c: Context, status: 400 | 401, error: string, description: string): Response {
  if (status === 401) c.header("WWW-Authenticate", `Bearer error="invalid_token"`);
  return c.json({ error, error_description: description }, status, noStoreHeaders);
}

/** The bearer token of the request, or null. */
function bearerOf(c: Context): string | null {
  const header = c.req.header("Authorization") ?? "";
  const match = /^Bearer ([\x21-\x7e]{1,200})$/i.exec(header);
  return match === null ? null : match[1];
}

/** The registration endpoint. */
export function registrationRoutes(p: Provider): RouteInstaller {
  return documented((app) => {
    app.post(PATHS.register, bodyLimit(REGISTRATION_BODY_LIMIT), (c) => register(p, c));
  }, operations);
}

async function register(p: Provider, c: Context): Promise<Response> {
  const { ctx } = p;
  if (ctx.config.registration !== "initial-token") {
    throw new NotFoundError("Dynamic client registration is off.");
  }
  const presented = bearerOf(c);
  const store = initialAccessTokenStore(ctx.sql);
  const token = presented === null ? null : await store.find(p.realmId, presented);
  if (token === null || tokenStatus(token, ctx.clock.now()) !== "active") {
    return refuse(
      c,
      401,
      "invalid_token",
      "an initial access token is required (unknown, expired, spent or revoked)",
    );
  }

  let metadata: RegisteredMetadata;
  try {
    const body = await parseBody(c, v.unknown());
    metadata = registeredMetadata(body, outboundPolicyFromConfig(ctx.svcConfig).allowPrivate);
  } catch (error) {
    if (error instanceof RegistrationError) return refuse(c, 400, error.error, error.message);
    // Not JSON, too deep or wide, or a string with U+0000 (parseBody's refusals).
    if (error instanceof SvcError && error.status === 400) {
      return refuse(c, 400, "invalid_client_metadata", error.message);
    }
    throw error;
  }

  const method = metadata.token_endpoint_auth_method;
  const secret = method === "client_secret_basic" || method === "client_secret_post"
    ? `${OIDC_CLIENT_SECRET_PREFIX}${randomToken(ctx.random, 32)}`
    : null;
  const clientId = `${REGISTERED_CLIENT_ID_PREFIX}${randomToken(ctx.random, 18)}`;
  const now = ctx.clock.now();
  let registered;
  try {
    registered = await registerClient(p, token, clientId, metadata, secret, now);
  } catch (error) {
    if (error instanceof TokenRefused) {
      return refuse(c, 401, "invalid_token", "the initial access token is expired, spent or revoked");
    }
    throw error;
  }
  return c.json(
    {
      client_id: registered.clientId,
      ...(secret === null ? {} : { client_secret: secret, client_secret_expires_at: 0 }),
      client_id_issued_at: Math.floor(registered.createdAt.getTime() / 1000),
      ...metadata,
    },
    201,
    noStoreHeaders,
  );
}

/** Takes a use of the token and creates the client, in one audited transaction. */
function registerClient(
  p: Provider,
  token: InitialAccessTokenRecord,
  clientId: string,
  metadata: RegisteredMetadata,
  secret: string | null,
  now: number,
) {
  const { ctx } = p;
  const scopes = metadata.scope.split(" ");
  const method = metadata.token_endpoint_auth_method;
  return ctx.admin.mutateAsService(p.realmId, `initial-access-token:${token.id}`, async ({ tx, emit }) => {
    const store = initialAccessTokenStore(tx.pluginSql);
    if (!await store.take(token.id, new Date(now))) throw new TokenRefused();
    const client = await tx.clients.create(p.realmId.toLowerCase(), clientId, {
      clientType: method === "none" ? "public" : "confidential",
      redirectUris: metadata.redirect_uris,
      postLogoutRedirectUris: (metadata.post_logout_redirect_uris as string[] | undefined) ?? [],
      allowedScopes: scopes,
      // A client nobody here vetted asks its users before it gets their data.
      requireConsent: true,
      suspended: false,
      secretHash: secret === null ? null : sha256Hex(secret),
      secretAlgorithm: secret === null ? null : "sha256",
      secretResetRequired: false,
      // The method registered is the only one the client may use.
      tokenEndpointAuthMethod: method === "none" ? null : method,
      jwks: (metadata.jwks as { keys: Record<string, unknown>[] } | undefined) ?? null,
      jwksUri: (metadata.jwks_uri as string | undefined) ?? null,
      requirePushedAuthorizationRequests: metadata.require_pushed_authorization_requests === true,
      backchannelLogoutUri: (metadata.backchannel_logout_uri as string | undefined) ?? null,
      backchannelLogoutSessionRequired: metadata.backchannel_logout_session_required === true,
      clientName: (metadata.client_name as string | undefined) ?? null,
      dpopBoundAccessTokens: metadata.dpop_bound_access_tokens === true,
      dynamicallyRegistered: true,
    });
    await store.recordRegistration(client.id, client.realmId, token.id, metadata, new Date(now));
    await emit({
      kind: "oidc.client_created",
      occurredAt: now,
      realmId: client.realmId,
      data: {
        id: client.id,
        clientId: client.clientId,
        clientType: client.clientType,
        dynamicallyRegistered: true,
      },
    });
    return {
      value: client,
      audit: {
        action: "oidc.client.register",
        target: client.id,
        after: { clientId: client.clientId, initialAccessTokenId: token.id, metadata },
      },
    };
  });
}
