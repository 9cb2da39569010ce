/**
 * What the OIDC provider's endpoints share: its settings and realm, OAuth error answers,
 * client authentication, ID-token signing and the grants table. Built only on `mod.ts`.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { decodeProtectedHeader, jwtVerify, type JWTVerifyGetKey } from "jose";
import {
  constantTimeEqual,
  type PluginContext,
  type ServiceAccountRecord,
  setAnswerHeader,
  sha256Hex,
  SIGNING_ALGORITHM,
  TtlLruCache,
} from "../../mod.ts";
import type { ClientRecord, DpopVerifier, PluginSql } from "../../mod.ts";
import { assertionClientId, ClientAssertionError, verifyClientAssertion } from "./client-assertion.ts";

/** The provider's config section. */
export interface OidcProviderConfig {
  /** The realm whose users and clients it serves (id or name; default: the default realm). */
  readonly realm: string | null;
  /** Where sign-in happens (it gets `returnTo`); default: the hosted sign-in page (`{account mount}/sign-in`). */
  readonly signInUrl: string | null;
  /** Authorization code lifetime. */
  readonly codeTtlSeconds: number;
  /** ID token lifetime. */
  readonly idTokenTtlSeconds: number;
  /** Whether DPoP proofs at the provider's endpoints must carry a server nonce. */
  readonly dpopNonceRequired: boolean;
  /** Dynamic client registration (RFC 7591): `off`, or `initial-token` (with an initial access token). */
  readonly registration: "off" | "initial-token";
}

/** The context the endpoints run in, once the realm is known. */
export interface Provider {
  readonly ctx: PluginContext<OidcProviderConfig>;
  readonly realmId: string;
  /** The issuer: svc's base URL with the path base once (`issuer.ts`). */
  readonly issuer: string;
  /** Absolute URL of a provider path (`/oidc/token`). */
  url(path: string): string;
  /** The path (under the path base) of a provider path, for redirects within svc. */
  path(path: string): string;
  /** The cached key set published at a client's `jwksUri`. */
  remoteJwks(uri: string): JWTVerifyGetKey;
  /** DPoP proofs (RFC 9449): single-use jtis in svc's storage, nonces when required. */
  readonly dpop: DpopVerifier;
  /** The algorithms a DPoP proof may use (`dpop_signing_alg_values_supported`). */
  readonly dpopAlgorithms: readonly string[];
}

/** The scopes the provider knows. */
export const SUPPORTED_SCOPES = ["openid", "profile", "email", "offline_access"] as const;

export { PATHS } from "./paths.ts";

/** Kinds of the events the provider emits. */
export const OIDC_EVENTS = {
  authorized: "oidc.authorized",
  authorizationRefused: "oidc.authorization_refused",
  consentGranted: "oidc.consent_granted",
  tokensIssued: "oidc.tokens_issued",
  tokenRefused: "oidc.token_refused",
  codeReused: "oidc.code_reused",
  clientCredentialsIssued: "oidc.client_credentials_issued",
  tokenRevoked: "oidc.token_revoked",
  loggedOut: "oidc.logged_out",
} as const;

/** An OAuth error answer (`{error, error_description}`) with `Cache-Control: no-store`. */
export function oauthError(
  c: Context,
  status: 400 | 401 | 403,
  error: string,
  description: string,
): Response {
  c.header("Cache-Control", "no-store");
  if (status === 401) c.header("WWW-Authenticate", 'Basic realm="oidc", error="invalid_client"');
  return c.json({ error, error_description: description }, status);
}

/** The body limit of the provider's form endpoints (bytes). */
export const FORM_BODY_LIMIT = 64 * 1024;

/**
 * `Pragma: no-cache` beside `Cache-Control: no-store` (RFC 6749 5.1, for HTTP/1.0 caches), set in
 * place on the answer (`setAnswerHeader`: no copy of the response per header).
 */
export const pragmaNoCache: MiddlewareHandler = async (c, next) => {
  await next();
  setAnswerHeader(c, "Pragma", "no-cache");
};

/** The forms {@link formFields} read, per request: the token endpoint asks twice. */
const forms = new WeakMap<Context, Record<string, string> | null>();

/**
 * The form fields of a POST, as strings (repeated fields, and `name[]` fields, refused, as Hono's
 * `parseBody({ all: true })` made them arrays). Null: not a form. The body is read as text and
 * split by `URLSearchParams`, the same decoding as `Request.formData()` for this type, without
 * building a `FormData` (and, on Node, a `Response` to parse it).
 */
export async function formFields(c: Context): Promise<Record<string, string> | null> {
  const type = c.req.header("Content-Type") ?? "";
  if (!type.toLowerCase().startsWith("application/x-www-form-urlencoded")) return null;
  const known = forms.get(c);
  if (known !== undefined) return known;
  const form = formOf(new URLSearchParams(await c.req.text()));
  forms.set(c, form);
  return form;
}

function formOf(params: URLSearchParams): Record<string, string> | null {
  const out: Record<string, string> = {};
  const seen = new Set<string>();
  for (const [name, value] of params) {
    if (seen.has(name) || name.endsWith("[]")) return null;
    seen.add(name);
    if (value.includes("\u0000") || value.length > 8192) return null;
    out[name] = value;
  }
  return out;
}

/** A client authenticated at the token, revocation or introspection endpoint. */
export type AuthenticatedClient =
  | { readonly kind: "client"; readonly client: ClientRecord; readonly method: string }
  | {
    readonly kind: "service_account";
    readonly account: ServiceAccountRecord;
    readonly method: string;
    /**
     * Set when the account was authenticated on its cached copy (`cachedAccount`): the SHA-256 of
     * the presented secret, which the grant's statement checks against the stored account
     * (`ServiceAccountStore.recordGrant`) before the grant is answered.
     */
    readonly cachedSecretHash?: string;
  };

/** Why client authentication failed (always answered as `invalid_client`). */
export class ClientAuthError extends Error {}

/**
 * Authenticates the caller at the endpoint `endpointPath`: `client_secret_basic` (Authorization:
 * Basic), `client_secret_post` (`client_id` + `client_secret` in the form), `private_key_jwt`
 * (`client_assertion`, see `client-assertion.ts`), or none for public clients (`client_id`
 * only). A client registered with `client_secret_basic` or `client_secret_post` may use only
 * that one. A service account authenticates with its key and `sas_` secret the same ways. A client
 * secret is checked against its SHA-256 (secrets svc generated) or, for imported clients, the
 * password hasher's hash.
 */
export async function authenticateClient(
  p: Provider,
  c: Context,
  form: Record<string, string>,
  endpointPath: string,
  options: { readonly cached?: boolean; readonly cachedAccount?: boolean } = {},
): Promise<AuthenticatedClient> {
  if (form.client_assertion !== undefined || form.client_assertion_type !== undefined) {
    return await assertedClient(p, c, form, endpointPath);
  }
  let clientId = form.client_id;
  let secret: string | undefined = form.client_secret;
  let method = secret !== undefined ? "client_secret_post" : "none";
  const header = c.req.header("Authorization");
  if (header !== undefined && /^basic /i.test(header)) {
    if (secret !== undefined) throw new ClientAuthError("two authentication methods");
    let decoded: string;
    try {
      decoded = atob(header.slice(6).trim());
    } catch {
      throw new ClientAuthError("malformed Basic credentials");
    }
    const colon = decoded.indexOf(":");
    if (colon < 0) throw new ClientAuthError("malformed Basic credentials");
    const basicId = decodeURIComponent(decoded.slice(0, colon).replaceAll("+", " "));
    if (clientId !== undefined && clientId !== basicId) throw new ClientAuthError("client_id mismatch");
    clientId = basicId;
    secret = decodeURIComponent(decoded.slice(colon + 1).replaceAll("+", " "));
    method = "client_secret_basic";
  }
  if (clientId === undefined || clientId === "") throw new ClientAuthError("no client_id");
  const { clock } = p.ctx;
  if (secret !== undefined && secret.startsWith("sas_")) {
    // A service account's secret (`sas_…`): its account is read first, so `client_credentials`
    // costs one read, not a client miss and then the account. A secret that is not the account's
    // goes on to the clients as before.
    const found = await serviceAccount(p, clientId, secret, clock.now(), options.cachedAccount === true);
    if (found !== null) return { kind: "service_account", ...found, method };
  }
  const client = options.cached === true ? await cachedClient(p, clientId) : await freshClient(p, clientId);
  if (client !== null) {
    if (client.suspended) throw new ClientAuthError("suspended");
    if (client.clientType === "public") {
      if (secret !== undefined) throw new ClientAuthError("public clients have no secret");
      return { kind: "client", client, method: "none" };
    }
    if (
      secret === undefined || client.secretHash === null || client.secretAlgorithm === null ||
      client.tokenEndpointAuthMethod === "private_key_jwt"
    ) {
      throw new ClientAuthError("no usable secret");
    }
    // A client registered for one secret method is refused with the other.
    const registered = client.tokenEndpointAuthMethod;
    if (
      (registered === "client_secret_basic" || registered === "client_secret_post") && registered !== method
    ) {
      throw new ClientAuthError(`registered for ${registered}`);
    }
    const valid = client.secretAlgorithm === "sha256"
      ? constantTimeEqual(sha256Hex(secret), client.secretHash)
      : await verifiedSecret(p, client, secret);
    if (!valid) throw new ClientAuthError("wrong secret");
    return { kind: "client", client, method };
  }
  if (secret === undefined || secret.startsWith("sas_")) throw new ClientAuthError("unknown client");
  const found = await serviceAccount(p, clientId, secret, clock.now());
  if (found === null) throw new ClientAuthError("unknown client or wrong secret");
  return { kind: "service_account", ...found, method };
}

/**
 * The enabled service account `key` whose current (or overlapping previous) secret is `secret`,
 * or null. With `cached`, its cached copy when that accepts the secret (then `cachedSecretHash`
 * is set: the caller must have the grant's statement check it, see `accountCaches`); a refusal
 * is only ever given on the account read now.
 */
async function serviceAccount(
  p: Provider,
  key: string,
  secret: string,
  now: number,
  cached = false,
): Promise<{ account: ServiceAccountRecord; cachedSecretHash?: string } | null> {
  const presented = sha256Hex(secret);
  const cache = cacheOf(accountCaches, p);
  const cacheKey = `${p.realmId}:${key}`;
  if (cached) {
    const copy = cache.get(cacheKey);
    if (copy !== undefined && acceptsSecret(copy, presented, now)) {
      return { account: copy, cachedSecretHash: presented };
    }
  }
  const account = await p.ctx.storage.serviceAccounts.getByKey(p.realmId, key);
  if (account === null) cache.delete(cacheKey);
  else cache.set(cacheKey, account);
  return account !== null && acceptsSecret(account, presented, now) ? { account } : null;
}

/** Whether the account is enabled and `presented` (a SHA-256) is its current or overlapping previous secret's. */
function acceptsSecret(account: ServiceAccountRecord, presented: string, now: number): boolean {
  if (account.disabled) return false;
  let match = constantTimeEqual(presented, account.secretHash);
  if (
    account.previousSecretHash !== null && account.previousSecretExpiresAt !== null &&
    account.previousSecretExpiresAt.getTime() > now
  ) {
    match = constantTimeEqual(presented, account.previousSecretHash) || match;
  }
  return match;
}

/**
 * Clients read for a refresh grant, by realm and client id, for a minute at most. Only the refresh
 * grant takes a client from here, because its one statement checks the client's row version
 * (`RefreshGrantGuard.clientVersion`: not suspended, not deleted, not changed, its secret not
 * rotated) before the token is spent; when that check fails the grant reads the client again
 * (`freshClient`, which also refreshes this cache) and authenticates anew. Every other use reads
 * the client afresh. Absences are not kept.
 */
const clientCaches = new WeakMap<object, TtlLruCache<string, ClientRecord>>();
/**
 * Service accounts read for authentication, by realm and key, for a minute at most. Only the
 * `client_credentials` grant authenticates on a copy from here, and only because its one
 * statement checks the presented secret against the stored account (enabled, the secret its
 * current one or its previous one inside the overlap: `ServiceAccountStore.recordGrant`) before
 * the grant is answered; when that check fails the grant authenticates again on a fresh read
 * (which also refreshes this cache). A secret the cached copy does not accept is checked against
 * a fresh read. Every read of an account here refreshes it; absences are not kept.
 */
const accountCaches = new WeakMap<object, TtlLruCache<string, ServiceAccountRecord>>();
/**
 * Secrets verified against a client's password-hasher hash (an imported client's argon2id or
 * bcrypt), by client id, row version and the presented secret's SHA-256: the slow hash runs once
 * per secret and version, not per request. A new version (a rotated secret) misses.
 */
const verifiedSecrets = new WeakMap<object, TtlLruCache<string, true>>();

function cacheOf<V>(
  caches: WeakMap<object, TtlLruCache<string, V>>,
  p: Provider,
): TtlLruCache<string, V> {
  let cache = caches.get(p.ctx);
  if (cache === undefined) {
    cache = new TtlLruCache(p.ctx.clock, { ttlMs: 60_000, maxEntries: 10_000 });
    caches.set(p.ctx, cache);
  }
  return cache;
}

/** The client read now (and kept for the refresh grant's cached reads). */
export async function freshClient(p: Provider, clientId: string): Promise<ClientRecord | null> {
  const client = await p.ctx.storage.clients.getByClientId(p.realmId, clientId);
  const cache = cacheOf(clientCaches, p);
  if (client === null || client.version === undefined) cache.delete(`${p.realmId}:${clientId}`);
  else cache.set(`${p.realmId}:${clientId}`, client);
  return client;
}

async function cachedClient(p: Provider, clientId: string): Promise<ClientRecord | null> {
  return cacheOf(clientCaches, p).get(`${p.realmId}:${clientId}`) ?? await freshClient(p, clientId);
}

async function verifiedSecret(p: Provider, client: ClientRecord, secret: string): Promise<boolean> {
  const cache = cacheOf(verifiedSecrets, p);
  const key = client.version === undefined
    ? null
    : `${client.id}:${client.version}:${client.secretHash}:${sha256Hex(secret)}`;
  if (key !== null && cache.get(key) === true) return true;
  const valid = await p.ctx.verifySecret(
    { algorithm: client.secretAlgorithm!, hash: client.secretHash! },
    secret,
  );
  if (valid && key !== null) cache.set(key, true);
  return valid;
}

async function assertedClient(
  p: Provider,
  c: Context,
  form: Record<string, string>,
  endpointPath: string,
): Promise<AuthenticatedClient> {
  if (
    form.client_secret !== undefined || c.req.header("Authorization") !== undefined ||
    form.client_assertion === undefined
  ) {
    throw new ClientAuthError("one authentication method, with its assertion");
  }
  const clientId = assertionClientId(form.client_assertion);
  if (clientId === null || (form.client_id !== undefined && form.client_id !== clientId)) {
    throw new ClientAuthError("client_id mismatch");
  }
  const client = await p.ctx.storage.clients.getByClientId(p.realmId, clientId);
  if (client === null || client.suspended) throw new ClientAuthError("unknown or suspended client");
  try {
    await verifyClientAssertion(p, endpointPath, client, form);
  } catch (error) {
    if (error instanceof ClientAssertionError) throw new ClientAuthError(error.message);
    throw error;
  }
  return { kind: "client", client, method: "private_key_jwt" };
}

/** Signs a JWT of the realm (RS256, the primary key) with the given `typ`. */
export async function signJwt(p: Provider, typ: string, claims: Record<string, unknown>): Promise<string> {
  const key = await p.ctx.keys.signingKey(p.realmId);
  return await p.ctx.keys.signJwt(key, typ, claims);
}

/**
 * Verifies a JWT the provider signed (any `typ` in `types`); `acceptExpired` for `id_token_hint`.
 * Null when it is not valid.
 */
export async function verifyJwt(
  p: Provider,
  token: string,
  types: readonly string[],
  acceptExpired = false,
): Promise<Record<string, unknown> | null> {
  try {
    const header = decodeProtectedHeader(token);
    if (typeof header.kid !== "string" || !types.includes(String(header.typ))) return null;
    const key = await p.ctx.keys.verificationKey(p.realmId, header.kid);
    if (key === null) return null;
    const { payload } = await jwtVerify(token, key.publicKey, {
      // The provider's issuer, or svc's own (service accounts' `at+jwt`, when a path base differs).
      issuer: [p.issuer, p.ctx.tokens.issuer],
      algorithms: [SIGNING_ALGORITHM],
      currentDate: acceptExpired ? new Date(0) : new Date(p.ctx.clock.now()),
      clockTolerance: acceptExpired ? Number.MAX_SAFE_INTEGER : 0,
    });
    return payload as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** A grant the provider recorded: which client and scopes a session's tokens were issued for. */
export interface OidcGrant {
  readonly sessionId: string;
  readonly clientId: string;
  readonly userId: string;
  readonly scopes: readonly string[];
  readonly authTime: number;
  readonly browserSessionId: string;
}

/** The plugin's tables. */
export const TABLES = [
  `CREATE TABLE IF NOT EXISTS oidc_provider_grants (
    session_id uuid PRIMARY KEY,
    realm_id uuid NOT NULL,
    client_id text NOT NULL,
    user_id uuid NOT NULL,
    scopes text[] NOT NULL,
    auth_time timestamptz NOT NULL,
    browser_session_id uuid NOT NULL,
    created_at timestamptz NOT NULL
  )`,
  "CREATE INDEX IF NOT EXISTS oidc_provider_grants_browser ON oidc_provider_grants (browser_session_id)",
  `CREATE TABLE IF NOT EXISTS oidc_provider_consents (
    realm_id uuid NOT NULL,
    user_id uuid NOT NULL,
    client_id text NOT NULL,
    scopes text[] NOT NULL,
    granted_at timestamptz NOT NULL,
    PRIMARY KEY (realm_id, user_id, client_id)
  )`,
];

/** Records the grant of a session opened for a client. */
export async function recordGrant(p: Provider, grant: OidcGrant, sql: PluginSql = p.ctx.sql): Promise<void> {
  await sql.query(
    `INSERT INTO oidc_provider_grants (session_id, realm_id, client_id, user_id, scopes, auth_time, browser_session_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      grant.sessionId,
      p.realmId,
      grant.clientId,
      grant.userId,
      [...grant.scopes],
      new Date(grant.authTime),
      grant.browserSessionId,
      new Date(p.ctx.clock.now()),
    ],
  );
}

/**
 * Found grants by provider context: a grant row is written once and never changed or deleted, so
 * a found one may be kept (the refresh grant reads it on every call). Absences are not kept.
 */
const grantCaches = new WeakMap<object, TtlLruCache<string, OidcGrant>>();

/** The grant of a session, or null. */
export async function findGrant(p: Provider, sessionId: string): Promise<OidcGrant | null> {
  if (!/^[0-9a-f-]{36}$/i.test(sessionId)) return null;
  let cache = grantCaches.get(p.ctx);
  if (cache === undefined) {
    cache = new TtlLruCache(p.ctx.clock, { ttlMs: 600_000, maxEntries: 10_000 });
    grantCaches.set(p.ctx, cache);
  }
  const key = `${p.realmId}:${sessionId.toLowerCase()}`;
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  const found = await readGrant(p, sessionId);
  if (found !== null) cache.set(key, found);
  return found;
}

async function readGrant(p: Provider, sessionId: string): Promise<OidcGrant | null> {
  const [row] = await p.ctx.sql.query<
    {
      session_id: string;
      client_id: string;
      user_id: string;
      scopes: string[];
      auth_time: Date | string;
      browser_session_id: string;
    }
  >("SELECT * FROM oidc_provider_grants WHERE session_id = $1 AND realm_id = $2", [sessionId, p.realmId]);
  if (row === undefined) return null;
  return {
    sessionId: row.session_id,
    clientId: row.client_id,
    userId: row.user_id,
    scopes: row.scopes,
    authTime: new Date(row.auth_time).getTime(),
    browserSessionId: row.browser_session_id,
  };
}

/** The client sessions opened from a browser session (RP-initiated logout ends them too). */
export async function grantsOfBrowserSession(p: Provider, browserSessionId: string): Promise<string[]> {
  const rows = await p.ctx.sql.query<{ session_id: string }>(
    "SELECT session_id FROM oidc_provider_grants WHERE browser_session_id = $1 AND realm_id = $2",
    [browserSessionId, p.realmId],
  );
  return rows.map((row) => row.session_id);
}

/**
 * Whether the user consented to at least these scopes for the client. Consent given before
 * `since` (the client's creation: a deleted client's consents do not carry over to a new client
 * with its client id) does not count.
 */
export async function hasConsent(
  p: Provider,
  userId: string,
  clientId: string,
  scopes: readonly string[],
  since: Date = new Date(0),
): Promise<boolean> {
  const [row] = await p.ctx.sql.query<{ scopes: string[] }>(
    "SELECT scopes FROM oidc_provider_consents WHERE realm_id = $1 AND user_id = $2 AND client_id = $3 AND granted_at >= $4",
    [p.realmId, userId, clientId, since],
  );
  return row !== undefined && scopes.every((scope) => row.scopes.includes(scope));
}

/** Records consent to these scopes (added to earlier ones given since `since`, the client's creation). */
export async function grantConsent(
  p: Provider,
  userId: string,
  clientId: string,
  scopes: readonly string[],
  since: Date = new Date(0),
): Promise<void> {
  await p.ctx.sql.query(
    `INSERT INTO oidc_provider_consents (realm_id, user_id, client_id, scopes, granted_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (realm_id, user_id, client_id) DO UPDATE
     SET scopes = CASE WHEN oidc_provider_consents.granted_at < $6 THEN EXCLUDED.scopes
       ELSE ARRAY(SELECT DISTINCT unnest(oidc_provider_consents.scopes || EXCLUDED.scopes)) END,
     granted_at = EXCLUDED.granted_at`,
    [p.realmId, userId, clientId, [...scopes], new Date(p.ctx.clock.now()), since],
  );
}

/** The S256 PKCE challenge of a verifier. */
export async function s256(verifier: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  return btoa(String.fromCharCode(...digest)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** The claims of the user the scopes release (ID token and userinfo). */
export async function userClaims(
  p: Provider,
  userId: string,
  scopes: readonly string[],
): Promise<Record<string, unknown> | null> {
  const user = await p.ctx.storage.users.get(userId);
  if (user === null || user.status !== "Active") return null;
  const claims: Record<string, unknown> = {};
  if (scopes.includes("email")) {
    claims.email = user.email;
    claims.email_verified = user.emailVerified;
  }
  if (scopes.includes("profile") && user.displayName !== null) claims.name = user.displayName;
  return claims;
}
