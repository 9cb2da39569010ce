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
 *   `client_id_issued_at`, `registration_access_token` (`sor_…`, shown once, stored as SHA-256)
 *   and `registration_client_uri`, and the metadata as registered.
 *
 * The client configuration endpoint (RFC 7592), `/oidc/register/{client_id}` with the
 * registration access token as bearer token: `GET` reads the metadata as it stands (an
 * administrator's changes included; never the secret), `PUT` replaces it (same rules; `client_id`
 * in the body; a `client_secret` there must be the client's; the authentication method may change
 * only between the two secret methods), `DELETE` deletes the client and ends its sessions. Each
 * change is one audit entry by `oidc-provider:registration:<client row id>` and its
 * `oidc.client_updated` / `oidc.client_deleted` event; an identical `PUT` writes none. A
 * suspended client, a deleted one, or one an administrator made answers 401 `invalid_token`.
 * The registration access token does not rotate.
 *
 * @module
 */
import type { Context } from "hono";
import * as v from "valibot";
import {
  bodyLimit,
  canonicalJson,
  clientJwksProblem,
  clientJwksUriProblem,
  type ClientRecord,
  constantTimeEqual,
  documented,
  endClientSessions,
  NotFoundError,
  OIDC_CLIENT_SECRET_PREFIX,
  type OperationDoc,
  outboundPolicyFromConfig,
  parseBody,
  type PluginSql,
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

/** The prefix of a registration access token (RFC 7592). */
export const REGISTRATION_ACCESS_TOKEN_PREFIX = "sor_";

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

const RegistrationAnswerSchema = v.pipe(
  v.objectWithRest({
    client_id: v.string(),
    client_secret: v.optional(v.string()),
    client_id_issued_at: v.number(),
    client_secret_expires_at: v.optional(v.number()),
    registration_access_token: v.string(),
    registration_client_uri: v.string(),
    redirect_uris: v.array(v.string()),
    token_endpoint_auth_method: v.picklist(AUTH_METHODS),
    grant_types: v.array(v.string()),
    response_types: v.array(v.string()),
    scope: v.string(),
  }, v.unknown()),
  v.title("OidcClientRegistration"),
);

const TAGS = ["OIDC provider"];
const OFF = "Off unless `SVC_OIDC_REGISTRATION=initial-token` (404 otherwise).";
const MANAGED =
  "`Authorization: Bearer sor_…`: the registration access token the registration answered (RFC 7592); 401 `invalid_token` for another token, a deleted or suspended client, or a client an administrator made.";

const operations = (): readonly OperationDoc[] => [
  {
    method: "POST",
    path: PATHS.register,
    summary: "Dynamic client registration (RFC 7591)",
    description:
      `${OFF} \`Authorization: Bearer soi_…\`: an initial access token minted at \`/svc-admin/oidc/initial-access-tokens\`; each registration takes one of its uses. The body is the client's metadata (RFC 7591 2; at most 16 KiB; unknown members ignored): \`redirect_uris\` (https; http on a loopback host for \`application_type: native\`), \`token_endpoint_auth_method\` (\`client_secret_basic\` by default, \`client_secret_post\`, \`private_key_jwt\` with \`jwks\` or \`jwks_uri\`, \`none\` for a public client), \`grant_types\` (\`authorization_code\`, and \`refresh_token\` with \`offline_access\` in \`scope\`), \`response_types\` (\`code\`), \`scope\`, \`client_name\`, \`client_uri\`, \`logo_uri\`, \`tos_uri\`, \`policy_uri\`, \`contacts\`, \`post_logout_redirect_uris\`, \`backchannel_logout_uri\`, \`backchannel_logout_session_required\`, \`require_pushed_authorization_requests\`, \`dpop_bound_access_tokens\`. The client asks its users for consent; administrators see it at \`/svc-admin/oidc/clients\`, marked \`dynamicallyRegistered\`.`,
    tags: TAGS,
    auth: "public",
    responses: {
      201: {
        description:
          "`client_id`, `client_secret` (a client authenticating with a secret; shown once), `client_id_issued_at`, `client_secret_expires_at` (0: never), `registration_access_token` (`sor_…`, shown once) and `registration_client_uri` (RFC 7592), and the metadata as registered",
        body: RegistrationAnswerSchema,
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
  {
    method: "GET",
    path: PATHS.registration,
    summary: "Read a client's registration (RFC 7592)",
    description:
      `${OFF} ${MANAGED} Answers the client's metadata as it stands (an administrator's changes included), without the client secret.`,
    tags: TAGS,
    auth: "public",
    params: { clientId: "The client's `client_id`" },
    responses: {
      200: {
        description: "The registration",
        body: RegistrationAnswerSchema,
        headers: { "Cache-Control": "no-store" },
      },
      401: { description: "`invalid_token`", body: ErrorSchema },
      404: { description: "Registration is off" },
    },
  },
  {
    method: "PUT",
    path: PATHS.registration,
    summary: "Change a client's registration (RFC 7592)",
    description:
      `${OFF} ${MANAGED} The body replaces the metadata (the rules of registration), with \`client_id\`; a \`client_secret\` in it must be the client's. \`token_endpoint_auth_method\` may change between \`client_secret_basic\` and \`client_secret_post\` only. Consent and suspension stay the administrators'. A change is one audit entry (\`oidc.client.registration_update\`) and an \`oidc.client_updated\` event; an identical one neither.`,
    tags: TAGS,
    auth: "public",
    params: { clientId: "The client's `client_id`" },
    responses: {
      200: {
        description: "The registration",
        body: RegistrationAnswerSchema,
        headers: { "Cache-Control": "no-store" },
      },
      400: {
        description: "`invalid_client_metadata` or `invalid_redirect_uri`",
        body: ErrorSchema,
      },
      401: { description: "`invalid_token`", body: ErrorSchema },
      404: { description: "Registration is off" },
      413: { description: "The body is larger than the limit" },
    },
  },
  {
    method: "DELETE",
    path: PATHS.registration,
    summary: "Delete a client's registration (RFC 7592)",
    description:
      `${OFF} ${MANAGED} The client is deleted as an administrator's deletion does: every session issued to it ends. One audit entry (\`oidc.client.registration_delete\`) and an \`oidc.client_deleted\` event. The registration access token stops working.`,
    tags: TAGS,
    auth: "public",
    params: { clientId: "The client's `client_id`" },
    responses: {
      204: { description: "Deleted" },
      401: { description: "`invalid_token`", body: ErrorSchema },
      404: { description: "Registration is off" },
    },
  },
];

const noStoreHeaders = { "Cache-Control": "no-store", Pragma: "no-cache" };

function refuse(c: Context, status: 400 | 401, error: string, description: string): Response {
  if (status === 401 && c.req.header("Authorization") === undefined) {
    // RFC 6750 3.1: a request without authentication gets the challenge and no error information.
    c.header("WWW-Authenticate", 'Bearer realm="oidc"');
    return c.body(null, 401, noStoreHeaders);
  }
  if (status === 401) c.header("WWW-Authenticate", `Bearer error="invalid_token"`);
  return c.json({ error, error_description: description }, status, noStoreHeaders);
}

/** The bearer token of the request, or null. */
function bearerOf(c: Context): string | null {
  const header = c.req.header("Authorization") ?? "";
  const match = /^Bearer ([\x21-\x7e]{1,200})$/i.exec(header);
  return match === null ? null : match[1];
}

/** The registration endpoint and the client configuration endpoint (RFC 7592). */
export function registrationRoutes(p: Provider): RouteInstaller {
  return documented((app) => {
    app.post(PATHS.register, bodyLimit(REGISTRATION_BODY_LIMIT), (c) => register(p, c));
    app.get(PATHS.registration, (c) => readRegistration(p, c));
    app.put(PATHS.registration, bodyLimit(REGISTRATION_BODY_LIMIT), (c) => updateRegistration(p, c));
    app.delete(PATHS.registration, (c) => deleteRegistration(p, c));
  }, operations);
}

function requireOn(p: Provider): void {
  if (p.ctx.config.registration !== "initial-token") {
    throw new NotFoundError("Dynamic client registration is off.");
  }
}

/** Reads the JSON body and checks it as client metadata; a refusal answer, or the metadata. */
async function metadataOf(
  p: Provider,
  c: Context,
): Promise<{ readonly body: Record<string, unknown>; readonly metadata: RegisteredMetadata } | Response> {
  try {
    const body = await parseBody(c, v.unknown());
    const metadata = registeredMetadata(body, outboundPolicyFromConfig(p.ctx.svcConfig).allowPrivate);
    return { body: body as Record<string, unknown>, metadata };
  } catch (error) {
    if (error instanceof RegistrationError) return refuse(c, 400, error.error, error.message);
    // Not JSON, too deep or wide, or a string with U+0000 (parseBody's refusals).
    if (error instanceof SvcError && error.status === 400) {
      return refuse(c, 400, "invalid_client_metadata", error.message);
    }
    throw error;
  }
}

async function register(p: Provider, c: Context): Promise<Response> {
  requireOn(p);
  const { ctx } = p;
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
  const checked = await metadataOf(p, c);
  if (checked instanceof Response) return checked;
  const { metadata } = checked;

  const method = metadata.token_endpoint_auth_method;
  const secret = method === "client_secret_basic" || method === "client_secret_post"
    ? `${OIDC_CLIENT_SECRET_PREFIX}${randomToken(ctx.random, 32)}`
    : null;
  const registrationToken = `${REGISTRATION_ACCESS_TOKEN_PREFIX}${randomToken(ctx.random, 32)}`;
  const clientId = `${REGISTERED_CLIENT_ID_PREFIX}${randomToken(ctx.random, 18)}`;
  const now = ctx.clock.now();
  let registered;
  try {
    registered = await registerClient(p, token, clientId, metadata, secret, registrationToken, now);
  } catch (error) {
    if (error instanceof TokenRefused) {
      return refuse(c, 401, "invalid_token", "the initial access token is expired, spent or revoked");
    }
    throw error;
  }
  return c.json(
    {
      ...answerOf(p, registered, metadata, registrationToken),
      ...(secret === null ? {} : { client_secret: secret, client_secret_expires_at: 0 }),
    },
    201,
    noStoreHeaders,
  );
}

/** The answer of the registration and configuration endpoints (never the client secret). */
function answerOf(
  p: Provider,
  client: ClientRecord,
  metadata: Record<string, unknown>,
  registrationToken: string,
): Record<string, unknown> {
  return {
    ...metadata,
    client_id: client.clientId,
    client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
    registration_access_token: registrationToken,
    registration_client_uri: p.url(
      PATHS.registration.replace(":clientId", encodeURIComponent(client.clientId)),
    ),
  };
}

/**
 * The registered metadata with what svc's client record now says over it (an administrator may
 * have changed the client since).
 */
export function currentMetadata(
  client: ClientRecord,
  stored: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...stored };
  const set = (key: string, value: unknown) => {
    if (value === null || value === undefined) delete out[key];
    else out[key] = value;
  };
  out.redirect_uris = [...client.redirectUris];
  set(
    "post_logout_redirect_uris",
    client.postLogoutRedirectUris.length > 0 ? [...client.postLogoutRedirectUris] : null,
  );
  out.scope = client.allowedScopes.join(" ");
  out.grant_types = client.allowedScopes.includes("offline_access")
    ? ["authorization_code", "refresh_token"]
    : ["authorization_code"];
  set("client_name", client.clientName);
  set("jwks", client.jwks);
  set("jwks_uri", client.jwksUri);
  set("backchannel_logout_uri", client.backchannelLogoutUri);
  set(
    "backchannel_logout_session_required",
    client.backchannelLogoutUri === null ? null : client.backchannelLogoutSessionRequired,
  );
  out.require_pushed_authorization_requests = client.requirePushedAuthorizationRequests;
  out.dpop_bound_access_tokens = client.dpopBoundAccessTokens ?? false;
  return out;
}

/** The client a registration access token manages (dynamically registered, not suspended), or null. */
async function managedClient(
  p: Provider,
  c: Context,
  tx?: { readonly clients: Provider["ctx"]["storage"]["clients"]; readonly pluginSql: PluginSql },
): Promise<{ client: ClientRecord; metadata: Record<string, unknown>; token: string } | null> {
  const presented = bearerOf(c);
  const clientId = c.req.param("clientId") ?? "";
  if (
    presented === null || !presented.startsWith(REGISTRATION_ACCESS_TOKEN_PREFIX) ||
    !/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(clientId)
  ) {
    return null;
  }
  const clients = tx?.clients ?? p.ctx.storage.clients;
  const client = await clients.getByClientId(p.realmId, clientId);
  if (client === null || client.suspended || client.dynamicallyRegistered !== true) return null;
  const found = await initialAccessTokenStore(tx?.pluginSql ?? p.ctx.sql).registrationFor(
    client.id,
    presented,
  );
  return found === null ? null : { client, metadata: found.metadata, token: presented };
}

const INVALID_REGISTRATION_TOKEN =
  "the registration access token is unknown, or its client is gone or suspended";

async function readRegistration(p: Provider, c: Context): Promise<Response> {
  requireOn(p);
  const managed = await managedClient(p, c);
  if (managed === null) return refuse(c, 401, "invalid_token", INVALID_REGISTRATION_TOKEN);
  const { client, metadata, token } = managed;
  return c.json(answerOf(p, client, currentMetadata(client, metadata), token), 200, noStoreHeaders);
}

const secretMethods: readonly string[] = ["client_secret_basic", "client_secret_post"];

async function updateRegistration(p: Provider, c: Context): Promise<Response> {
  requireOn(p);
  const { ctx } = p;
  const found = await managedClient(p, c);
  if (found === null) return refuse(c, 401, "invalid_token", INVALID_REGISTRATION_TOKEN);
  const checked = await metadataOf(p, c);
  if (checked instanceof Response) return checked;
  const { body, metadata } = checked;
  if (body.client_id !== found.client.clientId) {
    return refuse(c, 400, "invalid_client_metadata", "client_id must be the client's");
  }
  if (
    body.client_secret !== undefined &&
    (typeof body.client_secret !== "string" || found.client.secretHash === null ||
      !constantTimeEqual(sha256Hex(body.client_secret), found.client.secretHash))
  ) {
    return refuse(c, 400, "invalid_client_metadata", "client_secret is not the client's");
  }
  const before = found.metadata.token_endpoint_auth_method as string;
  const after = metadata.token_endpoint_auth_method;
  if (before !== after && !(secretMethods.includes(before) && secretMethods.includes(after))) {
    return refuse(
      c,
      400,
      "invalid_client_metadata",
      "token_endpoint_auth_method may change between client_secret_basic and client_secret_post only; register a new client",
    );
  }
  const now = ctx.clock.now();
  const updated = await ctx.admin.mutateAsService(
    p.realmId,
    `registration:${found.client.id}`,
    async ({ tx, emit }) => {
      const managed = await managedClient(p, c, tx);
      if (managed === null) return { value: null, audit: null };
      const beforeView = currentMetadata(managed.client, managed.metadata);
      const fields = {
        ...clientFieldsOf(metadata),
        tokenEndpointAuthMethod: after === "none" ? null : after,
      };
      const afterView = currentMetadata({ ...managed.client, ...fields }, metadata);
      // An identical registration changes nothing: no write, no event, no entry.
      if (canonicalJson(beforeView) === canonicalJson(afterView)) {
        return { value: managed.client, audit: null };
      }
      const client = await tx.clients.update(managed.client.id, fields);
      if (client === null) return { value: null, audit: null };
      await initialAccessTokenStore(tx.pluginSql).updateRegistration(client.id, metadata);
      await emit({
        kind: "oidc.client_updated",
        occurredAt: now,
        realmId: client.realmId,
        data: {
          id: client.id,
          clientId: client.clientId,
          changed: Object.keys(afterView).filter((key) =>
            canonicalJson(afterView[key] ?? null) !== canonicalJson(beforeView[key] ?? null)
          ).concat(Object.keys(beforeView).filter((key) => !(key in afterView))),
          suspended: client.suspended,
        },
      });
      return {
        value: client,
        audit: {
          action: "oidc.client.registration_update",
          target: client.id,
          before: beforeView,
          after: afterView,
        },
      };
    },
  );
  if (updated === null) return refuse(c, 401, "invalid_token", INVALID_REGISTRATION_TOKEN);
  return c.json(answerOf(p, updated, currentMetadata(updated, metadata), found.token), 200, noStoreHeaders);
}

async function deleteRegistration(p: Provider, c: Context): Promise<Response> {
  requireOn(p);
  const { ctx } = p;
  const found = await managedClient(p, c);
  if (found === null) return refuse(c, 401, "invalid_token", INVALID_REGISTRATION_TOKEN);
  const endedAt = ctx.clock.now();
  const ended = await ctx.admin.mutateAsService(
    p.realmId,
    `registration:${found.client.id}`,
    async ({ tx, emit }) => {
      const managed = await managedClient(p, c, tx);
      if (managed === null || !await tx.clients.delete(managed.client.id)) {
        return { value: null, audit: null };
      }
      const { client } = managed;
      // The registration row goes with the client (ON DELETE CASCADE); every session issued to
      // the client ends: its access tokens and refresh tokens with it.
      const sessionIds = await endClientSessions(tx, client.realmId, client.clientId);
      await emit({
        kind: "oidc.client_deleted",
        occurredAt: endedAt,
        realmId: client.realmId,
        data: { id: client.id, clientId: client.clientId, sessionsEnded: sessionIds.length },
      });
      return {
        value: sessionIds,
        audit: {
          action: "oidc.client.registration_delete",
          target: client.id,
          before: currentMetadata(client, managed.metadata),
          after: { sessionsEnded: sessionIds.length },
        },
      };
    },
  );
  if (ended === null) return refuse(c, 401, "invalid_token", INVALID_REGISTRATION_TOKEN);
  await ctx.sessions.announceEnded(ended.map((id) => ({ id, endedAt })));
  return c.body(null, 204);
}

/** The fields of svc's client record the metadata sets (both at registration and at a change). */
function clientFieldsOf(metadata: RegisteredMetadata) {
  return {
    redirectUris: metadata.redirect_uris,
    postLogoutRedirectUris: (metadata.post_logout_redirect_uris as string[] | undefined) ?? [],
    allowedScopes: metadata.scope.split(" "),
    jwks: (metadata.jwks as { keys: Record<string, unknown>[] } | undefined) ?? null,
    jwksUri: (metadata.jwks_uri as string | undefined) ?? null,
    requirePushedAuthorizationRequests: metadata.require_pushed_authorization_requests === true,
    backchannelLogoutUri: (metadata.backchannel_logout_uri as string | undefined) ?? null,
    backchannelLogoutSessionRequired: metadata.backchannel_logout_session_required === true,
    clientName: (metadata.client_name as string | undefined) ?? null,
    dpopBoundAccessTokens: metadata.dpop_bound_access_tokens === true,
  };
}

/** Takes a use of the token and creates the client, in one audited transaction. */
function registerClient(
  p: Provider,
  token: InitialAccessTokenRecord,
  clientId: string,
  metadata: RegisteredMetadata,
  secret: string | null,
  registrationToken: string,
  now: number,
) {
  const { ctx } = p;
  const method = metadata.token_endpoint_auth_method;
  return ctx.admin.mutateAsService(p.realmId, `initial-access-token:${token.id}`, async ({ tx, emit }) => {
    const store = initialAccessTokenStore(tx.pluginSql);
    if (!await store.take(token.id, new Date(now))) throw new TokenRefused();
    const client = await tx.clients.create(p.realmId.toLowerCase(), clientId, {
      ...clientFieldsOf(metadata),
      clientType: method === "none" ? "public" : "confidential",
      // A client nobody here vetted asks its users before it gets their data.
      requireConsent: true,
      suspended: false,
      secretHash: secret === null ? null : sha256Hex(secret),
      secretAlgorithm: secret === null ? null : "sha256",
      secretResetRequired: false,
      // The method registered is the only one the client may use.
      tokenEndpointAuthMethod: method === "none" ? null : method,
      dynamicallyRegistered: true,
    });
    await store.recordRegistration(
      client.id,
      client.realmId,
      token.id,
      metadata,
      registrationToken,
      new Date(now),
    );
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
