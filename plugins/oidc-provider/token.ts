/**
 * Discovery (also as RFC 8414 metadata), the token endpoint, userinfo, revocation (RFC 7009) and
 * introspection (RFC 7662).
 *
 * - Token grants: `authorization_code` (the code is single use: a replay is refused and ends
 *   the session and refresh family issued from it, `oidc.code_reused`), `refresh_token` (svc's
 *   rotation with reuse detection; refresh tokens exist only when `offline_access` was granted),
 *   `client_credentials` (service accounts, with their key and `sas_` secret).
 * - Access tokens of users are svc access tokens (`at+svc`) whose `aud` is the client, or, for a
 *   token request naming a `resource` the authorization granted (RFC 8707), an `at+jwt` (RFC
 *   9068) whose `aud` is that resource (`resources.ts`); those of service accounts are `at+jwt`
 *   with `client_id`. ID tokens are `JWT`.
 *
 * @module
 */
import type { Context } from "hono";
import { decodeJwt, decodeProtectedHeader } from "jose";
import * as v from "valibot";
import {
  bodyLimit,
  CLIENT_ASSERTION_ALGORITHMS,
  type ClientRecord,
  type CreatedSession,
  documented,
  DpopProofError,
  InvalidRefreshTokenError,
  mintServiceAccountToken,
  noStore,
  type OperationDoc,
  randomUuid,
  RefreshGuardError,
  type RouteInstaller,
  sha256Hex,
  SIGNING_ALGORITHM,
  type Storage,
  webhookBody,
} from "../../mod.ts";
import { resourceDpop, tokenEndpointProof } from "./dpop.ts";
import {
  authenticateClient,
  type AuthenticatedClient,
  ClientAuthError,
  findGrant,
  FORM_BODY_LIMIT,
  formFields,
  oauthError,
  OIDC_EVENTS,
  type OidcGrant,
  PATHS,
  pragmaNoCache,
  type Provider,
  recordGrant,
  s256,
  signJwt,
  SUPPORTED_SCOPES,
  userClaims,
  verifyJwt,
} from "./shared.ts";
import {
  bindResourcesToSession,
  codeResources,
  mintResourceToken,
  resourceAccessToken,
  type ResourceRecord,
  sessionResources,
  tokenTarget,
} from "./resources.ts";

const field = v.optional(v.pipe(v.string(), v.maxLength(8192)));

/** The form of the token endpoint (its own grants; extension grants check theirs). */
export const TokenFormSchema = v.looseObject({
  grant_type: field,
  code: field,
  redirect_uri: field,
  code_verifier: field,
  refresh_token: field,
  scope: field,
  resource: field,
  client_id: field,
  client_secret: field,
  client_assertion: field,
  client_assertion_type: field,
});

/** The form of revocation and introspection. */
export const TokenHintFormSchema = v.looseObject({
  token: field,
  token_type_hint: field,
  client_id: field,
  client_secret: field,
  client_assertion: field,
  client_assertion_type: field,
});

/** The optional form of a userinfo POST (RFC 6750 2.2). */
export const UserinfoFormSchema = v.looseObject({ access_token: field });

const OAuthErrorSchema = v.pipe(
  v.object({ error: v.string(), error_description: v.optional(v.string()) }),
  v.title("OidcOAuthError"),
);
const TAGS = ["OIDC provider"];
const FORM_NOTE = "An `application/x-www-form-urlencoded` body (not JSON).";

/** The operations (a function: `PATHS` is read once the modules are loaded). */
const operations = (): readonly OperationDoc[] => [
  {
    method: "GET",
    path: PATHS.discovery,
    summary: "OpenID Provider metadata",
    tags: TAGS,
    auth: "public",
    responses: { 200: { description: "The metadata (OIDC Discovery 1.0)" } },
  },
  {
    method: "GET",
    path: PATHS.oauthMetadata,
    summary: "OAuth authorization server metadata (RFC 8414): the same document",
    description:
      "Under a path base (`SVC_PATH_BASE=/idp`) it also answers at the host's root with the path inserted, `/.well-known/oauth-authorization-server/idp` (RFC 8414 3.1), for a proxy that forwards that path.",
    tags: TAGS,
    auth: "public",
    responses: { 200: { description: "The metadata" } },
  },
  {
    method: "POST",
    path: PATHS.token,
    summary: "OIDC token endpoint",
    description:
      `${FORM_NOTE} Grants: authorization_code, refresh_token, client_credentials, and other plugins' extension grants. Answers carry \`Cache-Control: no-store\` and \`Pragma: no-cache\`. With a \`DPoP\` proof header (RFC 9449) the access token is DPoP-bound (\`token_type: DPoP\`, \`cnf.jkt\`), and a public client's refresh token too; errors \`invalid_dpop_proof\` and \`use_dpop_nonce\` (with \`DPoP-Nonce\`).`,
    tags: TAGS,
    auth: "public",
    responses: {
      200: { description: "Tokens", headers: { "Cache-Control": "no-store", Pragma: "no-cache" } },
      400: { description: "An OAuth error", body: OAuthErrorSchema },
      401: { description: "`invalid_client`", body: OAuthErrorSchema },
      413: { description: "The body is larger than the limit" },
    },
  },
  ...(["GET", "POST"] as const).map((method): OperationDoc => ({
    method,
    path: PATHS.userinfo,
    summary: "OIDC userinfo",
    description:
      "The access token as `Authorization: Bearer`, or (POST) as the form field `access_token` (RFC 6750 2.2); a DPoP-bound token as `Authorization: DPoP` with a `DPoP` proof (RFC 9449 7), never as Bearer. Without a token: 401 with `WWW-Authenticate: Bearer` and `DPoP` challenges and no error code.",
    tags: TAGS,
    auth: "public",
    responses: {
      200: { description: "The user's claims the granted scopes release" },
      400: { description: "`invalid_request`: the token was sent twice", body: OAuthErrorSchema },
      401: { description: "No token, or `invalid_token`", headers: { "WWW-Authenticate": "Bearer" } },
      413: { description: "The body is larger than the limit (POST)" },
    },
  })),
  {
    method: "POST",
    path: PATHS.revoke,
    summary: "Token revocation (RFC 7009)",
    description:
      `${FORM_NOTE} Revokes a user's access or refresh token the caller was issued. A service account's \`at+jwt\` cannot be revoked: \`unsupported_token_type\`.`,
    tags: TAGS,
    auth: "public",
    responses: {
      200: { description: "Revoked, or not a token of the caller" },
      400: { description: "`invalid_request` or `unsupported_token_type`", body: OAuthErrorSchema },
      401: { description: "`invalid_client`", body: OAuthErrorSchema },
      413: { description: "The body is larger than the limit" },
    },
  },
  {
    method: "POST",
    path: PATHS.introspect,
    summary: "Token introspection (RFC 7662)",
    description:
      `${FORM_NOTE} For confidential clients and service accounts; a public client is \`invalid_client\`.`,
    tags: TAGS,
    auth: "public",
    responses: {
      200: { description: "`{active: …}`" },
      400: { description: "`invalid_request`", body: OAuthErrorSchema },
      401: { description: "`invalid_client`", body: OAuthErrorSchema },
      413: { description: "The body is larger than the limit" },
    },
  },
];

/** The discovery, token, userinfo, revocation and introspection routes. */
export function tokenRoutes(p: Provider): RouteInstaller {
  return documented((app) => {
    app.get(PATHS.discovery, (c) => c.json(discovery(p)));
    app.get(PATHS.oauthMetadata, (c) => c.json(discovery(p)));
    app.post(PATHS.token, noStore, pragmaNoCache, bodyLimit(FORM_BODY_LIMIT), (c) => token(p, c));
    app.get(PATHS.userinfo, noStore, (c) => userinfo(p, c));
    app.post(PATHS.userinfo, noStore, bodyLimit(FORM_BODY_LIMIT), (c) => userinfo(p, c));
    app.post(PATHS.revoke, noStore, bodyLimit(FORM_BODY_LIMIT), (c) => revoke(p, c));
    app.post(PATHS.introspect, noStore, bodyLimit(FORM_BODY_LIMIT), (c) => introspect(p, c));
  }, operations);
}

/** The OpenID Provider metadata. */
export function discovery(p: Provider): Record<string, unknown> {
  const auth = ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"];
  const assertionAlgorithms = [...CLIENT_ASSERTION_ALGORITHMS];
  return {
    issuer: p.issuer,
    authorization_endpoint: p.url(PATHS.authorize),
    token_endpoint: p.url(PATHS.token),
    userinfo_endpoint: p.url(PATHS.userinfo),
    jwks_uri: p.url(PATHS.jwks),
    revocation_endpoint: p.url(PATHS.revoke),
    introspection_endpoint: p.url(PATHS.introspect),
    end_session_endpoint: p.url(PATHS.logout),
    // RFC 9126; a client may be required to push (its `requirePushedAuthorizationRequests`).
    pushed_authorization_request_endpoint: p.url(PATHS.par),
    require_pushed_authorization_requests: false,
    scopes_supported: [...SUPPORTED_SCOPES],
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: [...GRANT_TYPES, ...p.ctx.tokenGrants().map((grant) => grant.grantType)],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: [SIGNING_ALGORITHM],
    token_endpoint_auth_methods_supported: auth,
    token_endpoint_auth_signing_alg_values_supported: assertionAlgorithms,
    revocation_endpoint_auth_methods_supported: auth,
    revocation_endpoint_auth_signing_alg_values_supported: assertionAlgorithms,
    // Introspection is for confidential clients (and service accounts) only.
    introspection_endpoint_auth_methods_supported: auth.filter((method) => method !== "none"),
    introspection_endpoint_auth_signing_alg_values_supported: assertionAlgorithms,
    code_challenge_methods_supported: ["S256"],
    dpop_signing_alg_values_supported: [...p.dpopAlgorithms],
    claims_supported: [
      "sub",
      "iss",
      "aud",
      "azp",
      "exp",
      "iat",
      "auth_time",
      "nonce",
      "sid",
      "email",
      "email_verified",
      "name",
    ],
    prompt_values_supported: ["none", "login", "consent"],
    authorization_response_iss_parameter_supported: true,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    // OIDC Core 5.5: individual claims are not requestable; the parameter is ignored (the scopes
    // alone say what is released). Said explicitly, though false is also the default.
    claims_parameter_supported: false,
    // OIDC Back-Channel Logout 1.0: logout tokens always carry sid (see backchannel.ts).
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    // RFC 7591, only when enabled (SVC_OIDC_REGISTRATION=initial-token).
    ...(p.ctx.config.registration === "initial-token"
      ? { registration_endpoint: p.url(PATHS.register) }
      : {}),
  };
}

async function authenticated(
  p: Provider,
  c: Context,
  endpointPath: string,
  schema: v.GenericSchema<Record<string, unknown>>,
): Promise<{ form: Record<string, string>; caller: AuthenticatedClient } | Response> {
  const form = await formFields(c);
  if (form === null) {
    return oauthError(c, 400, "invalid_request", "send application/x-www-form-urlencoded fields");
  }
  if (!v.safeParse(schema, form).success) return oauthError(c, 400, "invalid_request", "a field is too long");
  // The refresh grant's one-statement path may take a cached client: its statement checks the
  // client's version before the token is spent (`refreshGrant`).
  const cached = form.grant_type === "refresh_token" && form.refresh_token !== undefined &&
    form.scope === undefined && form.resource === undefined;
  // So may `client_credentials` a cached service account: its statement checks the secret on the
  // stored account before the grant is answered (`clientCredentialsGrant`).
  const cachedAccount = endpointPath === PATHS.token && form.grant_type === "client_credentials" &&
    p.ctx.events.recorded !== undefined;
  let caller = await authenticatedCaller(p, c, form, endpointPath, cached, cachedAccount);
  if (
    cached && !(caller instanceof Response) && caller.kind === "client" &&
    caller.client.dpopBoundAccessTokens === true && c.req.header("DPoP") === undefined
  ) {
    // About to be refused for want of a proof: only on what the client is now.
    caller = await authenticatedCaller(p, c, form, endpointPath, false);
  }
  return caller instanceof Response ? caller : { form, caller };
}

/** The authenticated caller, or the `invalid_client` answer (and its `oidc.token_refused`). */
async function authenticatedCaller(
  p: Provider,
  c: Context,
  form: Record<string, string>,
  endpointPath: string,
  cached: boolean,
  cachedAccount = false,
): Promise<AuthenticatedClient | Response> {
  try {
    try {
      return await authenticateClient(p, c, form, endpointPath, { cached, cachedAccount });
    } catch (error) {
      // A refusal is only ever given on what the client is now: a cached copy may be stale.
      if (!cached || !(error instanceof ClientAuthError) || form.client_assertion !== undefined) throw error;
      return await authenticateClient(p, c, form, endpointPath);
    }
  } catch (error) {
    if (!(error instanceof ClientAuthError)) throw error;
    p.ctx.events.emit({
      kind: OIDC_EVENTS.tokenRefused,
      occurredAt: p.ctx.clock.now(),
      realmId: p.realmId,
      // The detail says which check failed (never a secret or the assertion).
      data: { clientId: form.client_id ?? null, reason: "invalid_client", detail: error.message },
    });
    return oauthError(c, 401, "invalid_client", "client authentication failed");
  }
}

/** The grant types the token endpoint serves itself. */
const GRANT_TYPES = ["authorization_code", "refresh_token", "client_credentials"];

async function token(p: Provider, c: Context): Promise<Response> {
  // An extension grant of another plugin (RFC 8693 token exchange…) carries its own credential.
  const fields = await formFields(c);
  if (fields !== null && fields.grant_type !== undefined && !GRANT_TYPES.includes(fields.grant_type)) {
    const extension = p.ctx.tokenGrants().find((grant) => grant.grantType === fields.grant_type);
    if (extension !== undefined) return await extension.handle(c, fields);
  }
  const auth = await authenticated(p, c, PATHS.token, TokenFormSchema);
  if (auth instanceof Response) return auth;
  const { form, caller } = auth;
  // DPoP (RFC 9449): with a proof the tokens are bound to its key (see dpop.ts).
  const dpop = await tokenEndpointProof(
    p,
    c,
    caller.kind === "client" && caller.client.dpopBoundAccessTokens === true,
  );
  if (dpop instanceof Response) return dpop;
  switch (form.grant_type) {
    case "authorization_code":
      if (caller.kind !== "client") return oauthError(c, 400, "unauthorized_client", "not an OIDC client");
      return await codeGrant(p, c, caller.client, form, dpop.jkt);
    case "refresh_token":
      if (caller.kind !== "client") return oauthError(c, 400, "unauthorized_client", "not an OIDC client");
      // A client authenticated by assertion was read afresh (and its assertion is spent).
      return await refreshGrant(p, c, caller.client, form, dpop.jkt, caller.method === "private_key_jwt");
    case "client_credentials":
      if (caller.kind !== "service_account") {
        return oauthError(c, 400, "unauthorized_client", "client_credentials is for service accounts");
      }
      return await clientCredentialsGrant(p, c, caller, form, dpop.jkt);
    default:
      return oauthError(c, 400, "unsupported_grant_type", "grant_type is not supported");
  }
}

function refused(p: Provider, c: Context, clientId: string, reason: string, description: string): Response {
  p.ctx.events.emit({
    kind: OIDC_EVENTS.tokenRefused,
    occurredAt: p.ctx.clock.now(),
    realmId: p.realmId,
    data: { clientId, reason },
  });
  return oauthError(c, 400, "invalid_grant", description);
}

/** An authorization code as its exchange answers it. */
type AuthorizationCode = Extract<
  Awaited<ReturnType<Storage["authorizationCodes"]["exchange"]>>,
  { outcome: "Reused" }
>["code"];

/** What the transaction of a code exchange decided. */
type CodeExchange =
  | { outcome: "Reused"; code: AuthorizationCode }
  | { outcome: "Refused"; reason: string; description: string }
  | { outcome: "Issued"; code: AuthorizationCode; created: CreatedSession; browserSessionId: string };

async function codeGrant(
  p: Provider,
  c: Context,
  client: ClientRecord,
  form: Record<string, string>,
  jkt: string | null,
): Promise<Response> {
  const { storage, sessions, clock } = p.ctx;
  if (form.code === undefined || form.redirect_uri === undefined) {
    return oauthError(c, 400, "invalid_request", "code and redirect_uri are required");
  }
  const codeHash = sha256Hex(form.code);
  const redirectUri = form.redirect_uri;
  const verifier = form.code_verifier;
  // The caller is authenticated; a code of another client, or presented with another redirect
  // URI, is refused before it is consumed (or its replay detected), so that a failed exchange by
  // anyone but its client cannot burn it or revoke what it issued. The client and redirect URI of
  // a stored code never change, so this read needs no lock. A wrong PKCE verifier from the right
  // client does consume the code (below): one guess per code.
  const stored = await storage.authorizationCodes.get(codeHash);
  if (stored !== null) {
    if (stored.clientId !== client.clientId || stored.realmId !== p.realmId) {
      return refused(p, c, client.clientId, "client_mismatch", "unknown or expired code");
    }
    if (stored.redirectUri !== redirectUri) {
      return refused(p, c, client.clientId, "redirect_uri_mismatch", "redirect_uri does not match");
    }
    // A code bound to a DPoP key (dpop_jkt, RFC 9449 10) is useless, and not burnt, without that key.
    if ((stored.dpopJkt ?? null) !== null && stored.dpopJkt !== jkt) {
      return refused(p, c, client.clientId, "dpop_jkt_mismatch", "the code is bound to another DPoP key");
    }
  }
  // RFC 8707: a `resource` must be one the authorization named (checked before the code is used).
  const target = await tokenTarget(p, form.resource, await codeResources(p, codeHash));
  if ("error" in target) return oauthError(c, 400, "invalid_target", target.error);
  // One transaction consumes the code and records what it grants: the code's row stays locked
  // until the grant is stored, so a concurrent replay (which queues on that lock) always finds
  // the grant it must revoke. The transaction uses its own connection only.
  const exchanged = await storage.transaction(async (tx): Promise<CodeExchange> => {
    const exchange = await tx.authorizationCodes.exchange(codeHash);
    if (exchange.outcome === "Reused") return { outcome: "Reused", code: exchange.code };
    const refuse = (reason: string, description: string): CodeExchange => ({
      outcome: "Refused",
      reason,
      description,
    });
    if (exchange.outcome !== "Consumed") return refuse("unknown_code", "unknown or expired code");
    const code = exchange.code;
    if (code.clientId !== client.clientId || code.realmId !== p.realmId) {
      return refuse("client_mismatch", "unknown or expired code");
    }
    if (code.redirectUri !== redirectUri) {
      return refuse("redirect_uri_mismatch", "redirect_uri does not match");
    }
    if ((code.dpopJkt ?? null) !== null && code.dpopJkt !== jkt) {
      return refuse("dpop_jkt_mismatch", "the code is bound to another DPoP key");
    }
    if (code.codeChallenge !== null) {
      if (verifier === undefined || !/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) {
        return refuse("pkce_missing", "code_verifier is missing or malformed");
      }
      if (await s256(verifier) !== code.codeChallenge) {
        return refuse("pkce_mismatch", "code_verifier does not match");
      }
    } else if (verifier !== undefined) {
      return refuse("pkce_unexpected", "no code_challenge was sent");
    }
    const browser = await tx.sessions.getActive(code.sessionId);
    const user = await tx.users.get(code.userId);
    if (browser === null || user === null || user.status !== "Active") {
      return refuse("session_ended", "the sign-in session has ended");
    }
    const created = await sessions.createSession(tx, {
      realmId: p.realmId,
      userId: user.id,
      mfa: browser.mfa,
      audience: client.clientId,
      ipAddress: browser.ipAddress,
      deviceDescription: browser.deviceDescription,
      // A public client's refresh tokens are bound to its DPoP key too; a confidential client's
      // are bound by its authentication already (RFC 9449 5).
      ...(jkt !== null ? { dpop: { jkt, bindRefresh: client.clientType === "public" } } : {}),
    }, { refresh: code.scopes.includes("offline_access") });
    await tx.tokenGrants.store({
      codeHash,
      clientId: client.clientId,
      realmId: p.realmId,
      userId: user.id,
      sessionId: created.session.id,
      scopes: code.scopes,
      issuedAt: new Date(clock.now()),
      refreshFamilyId: created.familyId,
    });
    await recordGrant(p, {
      sessionId: created.session.id,
      clientId: client.clientId,
      userId: user.id,
      scopes: code.scopes,
      authTime: code.authTime.getTime(),
      browserSessionId: browser.id,
    }, tx.pluginSql);
    await bindResourcesToSession(tx.pluginSql, codeHash, created.session.id);
    return { outcome: "Issued", code, created, browserSessionId: browser.id };
  });
  if (exchanged.outcome === "Reused") {
    // A replayed code: whatever was issued from it stops now.
    const grant = await storage.tokenGrants.findByCodeHash(codeHash);
    if (grant !== null) {
      await sessions.logout(grant.sessionId);
      if (grant.refreshFamilyId !== null) {
        await storage.tokenGrants.deleteByRefreshFamily(grant.refreshFamilyId);
      }
    }
    p.ctx.events.emit({
      kind: OIDC_EVENTS.codeReused,
      occurredAt: clock.now(),
      realmId: p.realmId,
      userId: exchanged.code.userId,
      data: { clientId: exchanged.code.clientId, revokedSessionId: grant?.sessionId ?? null },
    });
    return refused(p, c, client.clientId, "code_reused", "the authorization code was already used");
  }
  if (exchanged.outcome === "Refused") {
    return refused(p, c, client.clientId, exchanged.reason, exchanged.description);
  }
  const { code, created, browserSessionId } = exchanged;
  const opened = await sessions.issueAccess(created);
  // A break-glass browser session's grant is a use of the account (LastUseAt, breakglass.login).
  await sessions.recordBreakGlassUse(opened.session, "token");
  const now = clock.now();
  const idToken = await idTokenFor(p, client.clientId, created.session.userId, code.scopes, {
    authTime: code.authTime.getTime(),
    nonce: code.nonce,
    sid: browserSessionId,
  });
  p.ctx.events.emit({
    kind: OIDC_EVENTS.tokensIssued,
    occurredAt: now,
    realmId: p.realmId,
    userId: created.session.userId,
    data: {
      clientId: client.clientId,
      grantType: "authorization_code",
      scopes: code.scopes,
      refresh: opened.refreshToken !== null,
    },
  });
  const access = target.resource === null
    ? {
      accessToken: opened.response.accessToken,
      tokenType: opened.response.tokenType,
      expiresIn: opened.response.expiresIn,
      scope: code.scopes.join(" "),
    }
    : await mintResourceToken(p, {
      resource: target.resource,
      userId: created.session.userId,
      clientId: client.clientId,
      scopes: code.scopes,
      authTime: code.authTime.getTime(),
      sessionId: created.session.id,
      jkt,
    });
  return c.json({
    access_token: access.accessToken,
    token_type: access.tokenType,
    expires_in: access.expiresIn,
    scope: access.scope,
    id_token: idToken,
    ...(opened.refreshToken !== null ? { refresh_token: opened.refreshToken } : {}),
  });
}

async function idTokenFor(
  p: Provider,
  clientId: string,
  userId: string,
  scopes: readonly string[],
  extra: { authTime: number; nonce: string | null; sid: string },
): Promise<string> {
  const now = Math.floor(p.ctx.clock.now() / 1000);
  const contributed = await p.ctx.contributeClaims({
    token: "id",
    realmId: p.realmId,
    subject: userId,
    clientId,
    scopes,
  });
  return await signJwt(p, "JWT", {
    ...contributed,
    // Only email and profile release user claims: without them the user is not read (the grant
    // that calls this has checked that the user is active).
    ...(scopes.includes("email") || scopes.includes("profile")
      ? await userClaims(p, userId, scopes) ?? {}
      : {}),
    iss: p.issuer,
    sub: userId,
    aud: clientId,
    azp: clientId,
    iat: now,
    exp: now + p.ctx.config.idTokenTtlSeconds,
    auth_time: Math.floor(extra.authTime / 1000),
    sid: extra.sid,
    ...(extra.nonce !== null ? { nonce: extra.nonce } : {}),
  });
}

/** The grant row a refresh grant's statement answers (`row_to_json` of `oidc_provider_grants`). */
function grantOfRow(row: Readonly<Record<string, unknown>>): OidcGrant {
  return {
    sessionId: String(row.session_id),
    clientId: String(row.client_id),
    userId: String(row.user_id),
    scopes: (row.scopes as string[]) ?? [],
    authTime: new Date(row.auth_time as string).getTime(),
    browserSessionId: String(row.browser_session_id),
  };
}

/**
 * The refresh grant. Without `scope` and `resource` it is one statement: the token's realm,
 * client (`audience`) and grant row, the client's row version (the client may come from the
 * cache: suspended, deleted, changed or secret-rotated clients fail here), the rotation, the
 * session's touch, the user's status and membership and the `oidc.tokens_issued` webhook
 * deliveries (`RefreshGrantGuard`). With `scope` or `resource` the grant is read first, to refuse
 * a widening or an ungranted resource before the token is spent.
 */
async function refreshGrant(
  p: Provider,
  c: Context,
  client: ClientRecord,
  form: Record<string, string>,
  jkt: string | null,
  fresh = false,
): Promise<Response> {
  const { sessions } = p.ctx;
  if (form.refresh_token === undefined) {
    return oauthError(c, 400, "invalid_request", "refresh_token is required");
  }
  // Only the one-statement path authenticates on a cached client (see `authenticated`).
  if (form.scope !== undefined || form.resource !== undefined) fresh = true;
  let asked: string[] | null = null;
  let target: { resource: ResourceRecord | null } = { resource: null };
  if (form.scope !== undefined || form.resource !== undefined) {
    const record = await sessions.refreshRecord(form.refresh_token);
    if (record === null || record.audience !== client.clientId || record.realmId !== p.realmId) {
      return refused(p, c, client.clientId, "unknown_refresh_token", "unknown refresh token");
    }
    const grant = await findGrant(p, record.sessionId);
    if (grant === null || grant.clientId !== client.clientId) {
      return refused(p, c, client.clientId, "unknown_refresh_token", "unknown refresh token");
    }
    asked = [...grant.scopes];
    if (form.scope !== undefined) {
      asked = form.scope.split(" ").filter((s) => s !== "");
      if (asked.some((s) => !grant.scopes.includes(s))) {
        return oauthError(c, 400, "invalid_scope", "a refresh cannot widen the scopes");
      }
    }
    const found = await tokenTarget(p, form.resource, await sessionResources(p, record.sessionId));
    if ("error" in found) return oauthError(c, 400, "invalid_target", found.error);
    target = found;
  }
  const occurredAt = p.ctx.clock.now();
  const eventData = { clientId: client.clientId, grantType: "refresh_token", refresh: true };
  let issued;
  try {
    // The client's grace window (0: off); the guard checks the token's audience is this client.
    issued = await sessions.refresh(form.refresh_token, {
      graceSeconds: client.refreshTokenGraceSeconds,
      dpopJkt: jkt,
      guard: {
        realmId: p.realmId,
        audience: client.clientId,
        ...(client.version !== undefined ? { clientVersion: client.version } : {}),
        companionTable: "oidc_provider_grants",
        companionAudienceColumn: "client_id",
        event: {
          id: randomUuid(p.ctx.random),
          kind: OIDC_EVENTS.tokensIssued,
          occurredAt,
          data: eventData,
          companionData: { scopes: "scopes" },
        },
      },
    });
  } catch (error) {
    if (error instanceof RefreshGuardError) {
      if (error.failed !== "client") {
        if (!fresh) {
          const caller = await authenticatedCaller(p, c, form, PATHS.token, false);
          if (caller instanceof Response) return caller;
        }
        return refused(p, c, client.clientId, "unknown_refresh_token", "unknown refresh token");
      }
      // The client changed since it was read (or cached): authenticate again on a fresh read.
      if (fresh) return oauthError(c, 401, "invalid_client", "client authentication failed");
      const caller = await authenticatedCaller(p, c, form, PATHS.token, false);
      if (caller instanceof Response) return caller;
      if (caller.kind !== "client") return oauthError(c, 400, "unauthorized_client", "not an OIDC client");
      if (caller.client.dpopBoundAccessTokens === true && jkt === null) {
        return oauthError(c, 400, "invalid_dpop_proof", "this client's access tokens must be DPoP-bound");
      }
      return await refreshGrant(p, c, caller.client, form, jkt, true);
    }
    if (!(error instanceof DpopProofError) && !(error instanceof InvalidRefreshTokenError)) throw error;
    if (!fresh) {
      // The client may have come from the cache and the statement may not have reached its
      // check (an unknown token): a suspended, deleted or re-keyed client is answered as such.
      const caller = await authenticatedCaller(p, c, form, PATHS.token, false);
      if (caller instanceof Response) return caller;
    }
    if (error instanceof DpopProofError) {
      return refused(
        p,
        c,
        client.clientId,
        "dpop_key_mismatch",
        "the refresh token is bound to another DPoP key",
      );
    }
    return refused(p, c, client.clientId, "refresh_refused", "the refresh token is not valid");
  }
  const companion = issued.guarded?.companion ?? null;
  const grant = companion !== null ? grantOfRow(companion) : await findGrant(p, issued.session.id);
  if (grant === null) {
    // The grace window answered a successor whose grant is gone: cannot happen (grants stay).
    return refused(p, c, client.clientId, "unknown_refresh_token", "unknown refresh token");
  }
  const event = {
    kind: OIDC_EVENTS.tokensIssued,
    occurredAt,
    realmId: p.realmId,
    userId: grant.userId,
    data: { ...eventData, scopes: grant.scopes },
  };
  const recorded = issued.guarded?.event ?? null;
  if (recorded === null) p.ctx.events.emit(event);
  else if (p.ctx.events.recorded !== undefined) {
    p.ctx.events.recorded([{ ...event, data: recorded.data }], recorded.queued > 0);
  } else p.ctx.events.emit(event);
  const idToken = client.idTokenOnRefresh === false ? null : await idTokenFor(
    p,
    client.clientId,
    grant.userId,
    grant.scopes,
    { authTime: grant.authTime, nonce: null, sid: grant.browserSessionId },
  );
  const access = target.resource === null
    ? {
      accessToken: issued.tokens.accessToken,
      tokenType: issued.tokens.tokenType,
      expiresIn: issued.tokens.expiresIn,
      scope: grant.scopes.join(" "),
    }
    : await mintResourceToken(p, {
      resource: target.resource,
      userId: grant.userId,
      clientId: client.clientId,
      scopes: asked ?? grant.scopes,
      authTime: grant.authTime,
      sessionId: grant.sessionId,
      jkt,
    });
  return c.json({
    access_token: access.accessToken,
    token_type: access.tokenType,
    expires_in: access.expiresIn,
    refresh_token: issued.tokens.refreshToken,
    scope: access.scope,
    ...(idToken !== null ? { id_token: idToken } : {}),
  });
}

async function clientCredentialsGrant(
  p: Provider,
  c: Context,
  caller: Extract<AuthenticatedClient, { kind: "service_account" }>,
  form: Record<string, string>,
  jkt: string | null,
): Promise<Response> {
  const scopes = (form.scope ?? "").split(" ").filter((s) => s !== "");
  if (scopes.some((s) => s === "openid" || s === "offline_access" || !/^[\x21-\x7e]{1,100}$/.test(s))) {
    return oauthError(c, 400, "invalid_scope", "openid and offline_access need a user");
  }
  const account = caller.account;
  const ttl = p.ctx.svcConfig.tokens.accessTokenTtlSeconds;
  const contributed = await p.ctx.contributeClaims({
    token: "access",
    realmId: p.realmId,
    subject: account.id,
    clientId: account.key,
    scopes,
  });
  const { accessToken } = await mintServiceAccountToken(p.ctx, {
    realmId: p.realmId,
    // svc's own issuer: the token is for svc's API (its audience), whatever the path base.
    issuer: p.ctx.tokens.issuer,
    account,
    scopes,
    ttlSeconds: ttl,
    claims: jkt !== null ? { ...contributed, cnf: { jkt } } : contributed,
  });
  const occurredAt = p.ctx.clock.now();
  const event = {
    kind: OIDC_EVENTS.clientCredentialsIssued,
    occurredAt,
    realmId: p.realmId,
    data: { serviceAccountId: account.id, key: account.key, scopes },
  };
  const recorded = p.ctx.events.recorded;
  if (caller.cachedSecretHash !== undefined && recorded !== undefined) {
    // Authenticated on a cached copy of the account: the event is recorded by one statement that
    // checks the secret against the stored account; when that no longer holds (disabled,
    // deleted, the secret rotated out), the token is dropped and the caller authenticated anew.
    const queued = await p.ctx.storage.serviceAccounts.recordGrant(
      {
        accountId: account.id,
        realmId: p.realmId,
        key: account.key,
        secretHash: caller.cachedSecretHash,
        at: occurredAt,
      },
      {
        realmId: p.realmId,
        orgId: null,
        eventKind: event.kind,
        payload: webhookBody(randomUuid(p.ctx.random), event),
        idSeed: randomUuid(p.ctx.random),
      },
    );
    if (queued === null) {
      const fresh = await authenticatedCaller(p, c, form, PATHS.token, false);
      if (fresh instanceof Response) return fresh;
      if (fresh.kind !== "service_account") {
        return oauthError(c, 400, "unauthorized_client", "client_credentials is for service accounts");
      }
      return await clientCredentialsGrant(p, c, fresh, form, jkt);
    }
    recorded.call(p.ctx.events, [event], queued > 0);
  } else p.ctx.events.emit(event);
  return c.json({
    access_token: accessToken,
    token_type: jkt !== null ? "DPoP" : "Bearer",
    expires_in: ttl,
    ...(scopes.length > 0 ? { scope: scopes.join(" ") } : {}),
  });
}

/** A user access token the provider issued, valid now, on a live session; or null. */
async function userAccessToken(p: Provider, token: string) {
  let aud: unknown;
  try {
    aud = decodeJwt(token).aud;
  } catch {
    return null;
  }
  if (typeof aud !== "string") return null;
  let claims;
  try {
    claims = await p.ctx.tokens.verify("at+svc", token, { audience: aud });
  } catch {
    return null;
  }
  if (claims.realm !== p.realmId) return null;
  const grant = await findGrant(p, claims.sid);
  if (grant === null || grant.clientId !== aud) return null;
  const session = await p.ctx.storage.sessions.getActive(claims.sid);
  if (session === null) return null;
  return { claims, grant };
}

/** Whether a token is an `at+jwt` of a service account the provider signed (valid or expired). */
async function isServiceAccountToken(p: Provider, token: string): Promise<boolean> {
  try {
    if (decodeProtectedHeader(token).typ !== "at+jwt") return false;
  } catch {
    return false;
  }
  // A user's at+jwt for a resource carries its session (`sid`); a service account's does not.
  const claims = await verifyJwt(p, token, ["at+jwt"], true);
  return claims !== null && claims.sid === undefined;
}

async function userinfo(p: Provider, c: Context): Promise<Response> {
  const header = c.req.header("Authorization");
  let presented: string | null = null;
  let scheme: "bearer" | "dpop" | "form" = "bearer";
  if (header !== undefined) {
    const match = /^(Bearer|DPoP) ([A-Za-z0-9._~+/-]+=*)$/i.exec(header);
    presented = match === null ? "" : match[2];
    if (match !== null && match[1].toLowerCase() === "dpop") scheme = "dpop";
  }
  if (
    c.req.method === "POST" && (c.req.header("Content-Type") ?? "").toLowerCase().startsWith(
      "application/x-www-form-urlencoded",
    )
  ) {
    // RFC 6750 2.2: the token as the form field access_token (one method only, 3.1).
    const form = await formFields(c);
    if (form === null || !v.safeParse(UserinfoFormSchema, form).success) {
      return oauthError(c, 400, "invalid_request", "the form could not be read");
    }
    if (form.access_token !== undefined) {
      if (presented !== null) return oauthError(c, 400, "invalid_request", "send the access token once");
      presented = form.access_token;
      scheme = "form";
    }
  }
  if (presented === null) {
    // RFC 6750 3.1: a request without authentication gets no error code (both schemes offered).
    c.header("WWW-Authenticate", 'Bearer realm="oidc"');
    c.header("WWW-Authenticate", `DPoP algs="${p.dpopAlgorithms.join(" ")}"`, { append: true });
    return c.body(null, 401);
  }
  const invalid = () => {
    c.header(
      "WWW-Authenticate",
      scheme === "dpop"
        ? `DPoP error="invalid_token", algs="${p.dpopAlgorithms.join(" ")}"`
        : 'Bearer error="invalid_token"',
    );
    return c.json({ error: "invalid_token", error_description: "the access token is not valid" }, 401);
  };
  if (presented === "") return invalid();
  const found = await userAccessToken(p, presented);
  if (found === null) return invalid();
  const refusal = await resourceDpop(p, c, scheme, presented, found.claims.cnf?.jkt, p.url(PATHS.userinfo));
  if (refusal !== null) return refusal;
  const claims = await userClaims(p, found.claims.sub, found.grant.scopes);
  if (claims === null) return invalid();
  const contributed = await p.ctx.contributeClaims({
    token: "id",
    realmId: p.realmId,
    subject: found.claims.sub,
    clientId: found.grant.clientId,
    scopes: found.grant.scopes,
  });
  return c.json({ ...contributed, ...claims, sub: found.claims.sub });
}

async function revoke(p: Provider, c: Context): Promise<Response> {
  const auth = await authenticated(p, c, PATHS.revoke, TokenHintFormSchema);
  if (auth instanceof Response) return auth;
  const { form, caller } = auth;
  if (form.token === undefined) return oauthError(c, 400, "invalid_request", "token is required");
  // A user's at+jwt for a resource ends its session (and so its refresh family and svc tokens).
  const resourceToken = await resourceAccessToken(p, form.token);
  if (resourceToken !== null) {
    if (caller.kind === "client" && resourceToken.client_id === caller.client.clientId) {
      await p.ctx.sessions.logout(resourceToken.sid);
      p.ctx.events.emit({
        kind: OIDC_EVENTS.tokenRevoked,
        occurredAt: p.ctx.clock.now(),
        realmId: p.realmId,
        data: { clientId: caller.client.clientId, sessionId: resourceToken.sid },
      });
    }
    return c.body(null, 200);
  }
  // A service account's at+jwt is self-contained: svc cannot revoke it (RFC 7009 2.2.1).
  if (await isServiceAccountToken(p, form.token)) {
    return oauthError(c, 400, "unsupported_token_type", "service account access tokens cannot be revoked");
  }
  if (caller.kind !== "client") return c.body(null, 200);
  const clientId = caller.client.clientId;
  let sessionId: string | null = null;
  if (form.token.startsWith("srt_")) {
    const record = await p.ctx.sessions.refreshRecord(form.token);
    if (record !== null && record.audience === clientId) sessionId = record.sessionId;
  } else {
    const found = await userAccessToken(p, form.token);
    if (found !== null && found.grant.clientId === clientId) sessionId = found.claims.sid;
  }
  if (sessionId !== null) {
    // The session's refresh family and access tokens stop together.
    await p.ctx.sessions.logout(sessionId);
    p.ctx.events.emit({
      kind: OIDC_EVENTS.tokenRevoked,
      occurredAt: p.ctx.clock.now(),
      realmId: p.realmId,
      data: { clientId, sessionId },
    });
  }
  return c.body(null, 200);
}

async function introspect(p: Provider, c: Context): Promise<Response> {
  const auth = await authenticated(p, c, PATHS.introspect, TokenHintFormSchema);
  if (auth instanceof Response) return auth;
  const { form, caller } = auth;
  if (caller.kind === "client" && caller.client.clientType === "public") {
    p.ctx.events.emit({
      kind: OIDC_EVENTS.tokenRefused,
      occurredAt: p.ctx.clock.now(),
      realmId: p.realmId,
      data: {
        clientId: caller.client.clientId,
        reason: "invalid_client",
        detail: "public client at introspection",
      },
    });
    return oauthError(c, 401, "invalid_client", "introspection is for confidential clients");
  }
  if (form.token === undefined) return oauthError(c, 400, "invalid_request", "token is required");
  const inactive = () => c.json({ active: false });
  if (caller.kind !== "client") return inactive();
  const clientId = caller.client.clientId;
  if (form.token.startsWith("srt_")) {
    const record = await p.ctx.sessions.refreshRecord(form.token);
    const now = p.ctx.clock.now();
    if (
      record === null || record.audience !== clientId || record.usedAt !== null ||
      record.revokedAt !== null ||
      record.expiresAt.getTime() <= now
    ) return inactive();
    const grant = await findGrant(p, record.sessionId);
    return c.json({
      active: true,
      token_type: "refresh_token",
      client_id: clientId,
      sub: record.userId,
      scope: grant?.scopes.join(" ") ?? "",
      exp: Math.floor(record.expiresAt.getTime() / 1000),
      iss: p.issuer,
    });
  }
  const found = await userAccessToken(p, form.token);
  if (found !== null) {
    if (found.grant.clientId !== clientId) return inactive();
    return c.json({
      active: true,
      token_type: found.claims.cnf !== undefined ? "DPoP" : "Bearer",
      ...(found.claims.cnf !== undefined ? { cnf: { jkt: found.claims.cnf.jkt } } : {}),
      client_id: clientId,
      sub: found.claims.sub,
      aud: found.claims.aud,
      scope: found.grant.scopes.join(" "),
      exp: found.claims.exp,
      iat: found.claims.iat,
      iss: p.issuer,
      sid: found.claims.sid,
    });
  }
  const resourceToken = await resourceAccessToken(p, form.token);
  if (resourceToken !== null) {
    // A user's at+jwt: active while its session is, for the client it was issued to.
    if (resourceToken.client_id !== clientId) return inactive();
    if (await p.ctx.storage.sessions.getActive(resourceToken.sid) === null) return inactive();
    return c.json({
      active: true,
      token_type: "Bearer",
      client_id: clientId,
      sub: resourceToken.sub,
      aud: resourceToken.aud,
      scope: resourceToken.scope ?? "",
      exp: resourceToken.exp,
      iat: resourceToken.iat,
      iss: p.issuer,
      sid: resourceToken.sid,
    });
  }
  const machine = await verifyJwt(p, form.token, ["at+jwt"]);
  if (machine !== null) {
    const cnf = machine.cnf as { jkt?: unknown } | undefined;
    return c.json({
      active: true,
      token_type: typeof cnf?.jkt === "string" ? "DPoP" : "Bearer",
      ...(typeof cnf?.jkt === "string" ? { cnf: { jkt: cnf.jkt } } : {}),
      client_id: machine.client_id,
      sub: machine.sub,
      scope: machine.scope ?? "",
      exp: machine.exp,
      iat: machine.iat,
      iss: p.issuer,
    });
  }
  return inactive();
}
