/**
 * The authorization endpoint (code flow) and the consent step; sign-in happens on the hosted
 * sign-in page.
 *
 * - `GET|POST /oidc/authorize` (OIDC Core 3.1.2.1: the query, or a form-encoded body):
 *   `response_type=code`, `client_id`, `redirect_uri` (exactly one of the
 *   client's), `scope` (with `openid`, within the client's allowed scopes), `state`, `nonce`,
 *   `code_challenge` + `code_challenge_method=S256` (required for public clients), `prompt`
 *   (`none` | `login` | `consent`), `max_age`, `login_hint`. Scopes svc does not know are ignored;
 *   a known scope the client is not allowed is `invalid_scope`. The `claims` parameter (OIDC Core
 *   5.5) is not supported and ignored, as discovery's `claims_parameter_supported: false` says:
 *   the scopes alone decide the claims. An unknown client or a redirect URI that does not match is
 *   answered here (400), never redirected to.
 * - Freshness (`prompt=login`, `max_age`): when the browser must sign in, the request goes back
 *   to the sign-in page with `svc_req`, a JWT the provider signs holding the request's time and a
 *   digest of its parameters. On return, a session created at or after that time satisfies
 *   `prompt=login` and any `max_age` (`max_age=0` too); nothing else in the request can say so.
 * - Sign-in: a browser without a fresh svc session is sent to the hosted sign-in page
 *   (`{pathBase}{SVC_ACCOUNT_MOUNT_PATH}/sign-in`, or `signInUrl` when set) with `returnTo` = the
 *   absolute URL of this authorization request and `login_hint`; the hosted page runs every
 *   factor (passkey, password, the second factor) and goes back to `returnTo`.
 * - Pushed requests (RFC 9126, `par.ts`): `client_id` + a `request_uri` of the PAR endpoint
 *   stand for the pushed parameters; the `request_uri` is consumed when the code is issued. A
 *   client with `requirePushedAuthorizationRequests` is refused anything else.
 * - Resources (RFC 8707, `resources.ts`): `resource` (repeatable) names registered APIs, whose
 *   scopes become requestable; the code remembers them for the token endpoint.
 * - Single sign-on: a browser without a live `svc_at` goes through the resume hop (`sso.ts`)
 *   first, once, unless the request demands a new sign-in.
 * - `GET|POST /oidc/consent`: the consent step of clients that require it.
 *
 * @module
 */
import type { Context } from "hono";
import * as v from "valibot";
import {
  bodyLimit,
  type ClientRecord,
  documented,
  noStore,
  type OperationDoc,
  randomToken,
  type RouteInstaller,
  sha256Hex,
} from "../../mod.ts";
import {
  FORM_BODY_LIMIT,
  formFields,
  grantConsent,
  hasConsent,
  OIDC_EVENTS,
  PATHS,
  type Provider,
  signJwt,
  SUPPORTED_SCOPES,
  verifyJwt,
} from "./shared.ts";
import { browserSession, errorPage, escape, formToken, formTokenValid, page } from "./pages.ts";
import { consumePushedRequest, expandPushed } from "./par.ts";
import { RESUMED_PARAM, resumeUrl } from "./sso.ts";
import { recordCodeResources, requestedResources } from "./resources.ts";

/** The parameters of an authorization request, checked. */
interface AuthorizationRequest {
  readonly client: ClientRecord;
  readonly redirectUri: string;
  readonly scopes: string[];
  readonly state: string | null;
  readonly nonce: string | null;
  readonly codeChallenge: string | null;
  /** The DPoP key the code is bound to (RFC 9449 10), or null. */
  readonly dpopJkt: string | null;
  readonly prompt: string | null;
  readonly maxAge: number | null;
  readonly loginHint: string | null;
  /** The `request_uri` of a pushed request (RFC 9126), consumed when the code is issued. */
  readonly requestUri: string | null;
  /** The resources (RFC 8707 identifiers) the request names. */
  readonly resources: readonly string[];
}

/** The parameter svc adds to an authorization request it sends to sign-in (a signed JWT). */
const REQUEST_TIME_PARAM = "svc_req";
/** The `typ` of that JWT. */
const REQUEST_TIME_TYP = "svc-oidc-request+jwt";
/** How long a sign-in may take for the request to count it as fresh (then it asks again). */
const SIGN_IN_WINDOW_SECONDS = 900;

const param = v.optional(v.pipe(v.string(), v.maxLength(2048)));

/** The parameters of an authorization request (query or form). */
export const AuthorizeParamsSchema = v.looseObject({
  response_type: param,
  client_id: param,
  redirect_uri: param,
  scope: param,
  state: param,
  nonce: param,
  code_challenge: param,
  code_challenge_method: param,
  prompt: param,
  max_age: param,
  login_hint: param,
  request: param,
  request_uri: param,
  resource: param,
  svc_req: param,
});

const AUTHORIZE_RESPONSES = {
  303: {
    description:
      "To the client's redirect URI (`code`, `state`, `iss`, or an OAuth `error`), to sign-in, or to consent",
  },
  400: {
    description: "Unknown client, unregistered redirect URI, or an unreadable form",
    mediaType: "text/html",
  },
  413: { description: "The body is larger than the limit" },
};

/** The operations (a function: `PATHS` is read once the modules are loaded). */
const operations = (): readonly OperationDoc[] => [
  {
    method: "GET",
    path: PATHS.authorize,
    summary: "OIDC authorization request (code flow)",
    tags: ["OIDC provider"],
    auth: "public",
    query: AuthorizeParamsSchema,
    responses: AUTHORIZE_RESPONSES,
  },
  {
    method: "POST",
    path: PATHS.authorize,
    summary: "OIDC authorization request by POST",
    description:
      "The same parameters as `GET /oidc/authorize`, as an `application/x-www-form-urlencoded` body (OIDC Core 3.1.2.1).",
    tags: ["OIDC provider"],
    auth: "public",
    responses: AUTHORIZE_RESPONSES,
  },
  {
    method: "GET",
    path: PATHS.consent,
    summary: "OIDC consent page",
    description: "The authorization request's parameters; a page (no scripts) whose form posts the decision.",
    tags: ["OIDC provider"],
    auth: "public",
    query: AuthorizeParamsSchema,
    responses: {
      200: { description: "The consent page", mediaType: "text/html" },
      303: { description: "To sign-in, or to the client's redirect URI with an error" },
      400: { description: "Unknown client or unregistered redirect URI", mediaType: "text/html" },
    },
  },
  {
    method: "POST",
    path: PATHS.consent,
    summary: "OIDC consent decision",
    description:
      "An `application/x-www-form-urlencoded` body: `request` (the authorization request's query), `form` (the page's token), `decision` (`allow` or `deny`).",
    tags: ["OIDC provider"],
    auth: "public",
    responses: {
      303: { description: "Back to the authorization request, or to the client with `access_denied`" },
      400: { description: "An unreadable form", mediaType: "text/html" },
      403: { description: "The form's token is missing or stale", mediaType: "text/html" },
      413: { description: "The body is larger than the limit" },
    },
  },
];

/** The consent form. */
const ConsentFormSchema = v.looseObject({
  request: v.pipe(v.string(), v.maxLength(16_384)),
  form: v.optional(v.pipe(v.string(), v.maxLength(256))),
  decision: v.optional(v.pipe(v.string(), v.maxLength(16))),
});

/** The authorization, sign-in and consent routes. */
export function authorizeRoutes(p: Provider): RouteInstaller {
  return documented((app) => {
    app.get(PATHS.authorize, noStore, (c) => authorize(p, c, new URL(c.req.url).searchParams));
    app.post(PATHS.authorize, noStore, bodyLimit(FORM_BODY_LIMIT), async (c) => {
      const form = await formFields(c);
      if (form === null || !v.safeParse(AuthorizeParamsSchema, form).success) {
        return errorPage(c, 400, "The authorization request could not be read.");
      }
      return await authorize(p, c, new URLSearchParams(form));
    });
    app.get(PATHS.consent, noStore, (c) => consentPage(p, c));
    app.post(PATHS.consent, noStore, bodyLimit(FORM_BODY_LIMIT), (c) => consentSubmit(p, c));
  }, operations);
}

/**
 * The digest of the request parameters a `svc_req` is bound to: all but svc's own markers
 * (`svc_…`) and `prompt`,
 * in any order (a change to any other name or value changes it).
 */
export function requestDigest(query: URLSearchParams): string {
  const pairs = [...query].filter(([name]) => !name.startsWith("svc_") && name !== "prompt")
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).sort();
  return sha256Hex(pairs.join("&"));
}

/** A `svc_req` for this request, made now. */
async function requestTimeToken(p: Provider, query: URLSearchParams, now: number): Promise<string> {
  return await signJwt(p, REQUEST_TIME_TYP, {
    iss: p.issuer,
    aud: p.url(PATHS.authorize),
    iat: Math.floor(now / 1000),
    exp: Math.floor(now / 1000) + SIGN_IN_WINDOW_SECONDS,
    t: now,
    q: requestDigest(query),
  });
}

/** The time (clock ms) the provider first sent this request to sign-in; null without a valid `svc_req`. */
async function requestTime(p: Provider, query: URLSearchParams): Promise<number | null> {
  const all = query.getAll(REQUEST_TIME_PARAM);
  if (all.length !== 1) return null;
  const claims = await verifyJwt(p, all[0], [REQUEST_TIME_TYP]);
  if (claims === null || claims.aud !== p.url(PATHS.authorize)) return null;
  if (claims.q !== requestDigest(query) || typeof claims.t !== "number") return null;
  return claims.t;
}

type Checked = { ok: true; request: AuthorizationRequest } | { ok: false; response: Response };

/** Why an authorization request is refused: on a page (nothing to redirect to), or at the client. */
export type Refusal =
  | {
    readonly at: "page";
    readonly clientId: string | null;
    readonly reason: string;
    readonly message: string;
  }
  | {
    readonly at: "client";
    readonly clientId: string;
    readonly redirectUri: string;
    readonly state: string | null;
    readonly error: string;
    readonly description: string;
  };

/**
 * Checks the parameters of an authorization request (the query, or what its `request_uri`
 * stands for). `pushed`: the parameters were pushed (RFC 9126): at the PAR endpoint (no
 * `request_uri` yet), or read back from one at the authorization endpoint.
 */
export async function validateRequest(
  p: Provider,
  params: URLSearchParams,
  pushed: { requestUri: string | null } | null,
): Promise<{ ok: true; request: AuthorizationRequest } | { ok: false; refusal: Refusal }> {
  const one = (name: string) => {
    const all = params.getAll(name);
    return all.length === 1 && !all[0].includes("\u0000") && all[0].length <= 2048 ? all[0] : null;
  };
  const clientId = one("client_id");
  const client = clientId === null ? null : await p.ctx.storage.clients.getByClientId(p.realmId, clientId);
  if (client === null || client.suspended) {
    return {
      ok: false,
      refusal: {
        at: "page",
        clientId,
        reason: "unknown or suspended client",
        message: "This application is unknown or suspended.",
      },
    };
  }
  const redirectUri = one("redirect_uri");
  if (redirectUri === null || !client.redirectUris.includes(redirectUri)) {
    return {
      ok: false,
      refusal: {
        at: "page",
        clientId: client.clientId,
        reason: "redirect_uri mismatch",
        message: "The redirect URI is not registered for this application.",
      },
    };
  }
  const state = one("state");
  const fail = (error: string, description: string) => ({
    ok: false as const,
    refusal: { at: "client" as const, clientId: client.clientId, redirectUri, state, error, description },
  });
  if (one("response_type") !== "code") return fail("unsupported_response_type", "response_type must be code");
  if (params.has("request_uri")) return fail("request_uri_not_supported", "request_uri is not supported");
  if (params.has("request")) return fail("request_not_supported", "request objects are not supported");
  if (pushed === null && client.requirePushedAuthorizationRequests) {
    return fail("invalid_request", "this client must push its authorization requests (RFC 9126)");
  }
  const target = await requestedResources(p, params.getAll("resource"));
  if (!target.ok) return fail("invalid_target", target.description);
  const resourceScopes = new Set(target.resources.flatMap((resource) => resource.scopes));
  // Scopes svc does not know (`address`, `phone`, a client's own) are ignored (OIDC Core 3.1.2.1);
  // the scopes of the requested resources (RFC 8707) are known.
  const scopes = [...new Set((one("scope") ?? "").split(" "))]
    .filter((s) => (SUPPORTED_SCOPES as readonly string[]).includes(s) || resourceScopes.has(s));
  if (!scopes.includes("openid")) return fail("invalid_scope", "scope must include openid");
  for (const scope of scopes) {
    if (!resourceScopes.has(scope) && !client.allowedScopes.includes(scope)) {
      return fail("invalid_scope", `scope ${scope} is not allowed for this client`);
    }
  }
  const codeChallenge = one("code_challenge");
  const method = one("code_challenge_method");
  if (codeChallenge !== null) {
    if (method !== "S256") return fail("invalid_request", "code_challenge_method must be S256");
    if (!/^[A-Za-z0-9_-]{43}$/.test(codeChallenge)) {
      return fail("invalid_request", "malformed code_challenge");
    }
  } else if (client.clientType === "public") {
    return fail("invalid_request", "public clients must use PKCE (code_challenge with S256)");
  }
  const dpopJkt = one("dpop_jkt");
  if (dpopJkt !== null && !/^[A-Za-z0-9_-]{43}$/.test(dpopJkt)) {
    return fail("invalid_request", "dpop_jkt must be a JWK SHA-256 thumbprint");
  }
  const prompt = one("prompt");
  if (prompt !== null && !["none", "login", "consent"].includes(prompt)) {
    return fail("invalid_request", "prompt must be none, login or consent");
  }
  const maxAgeText = one("max_age");
  if (maxAgeText !== null && !/^\d{1,9}$/.test(maxAgeText)) return fail("invalid_request", "bad max_age");
  return {
    ok: true,
    request: {
      client,
      redirectUri,
      scopes,
      state,
      nonce: one("nonce"),
      codeChallenge,
      dpopJkt,
      prompt,
      maxAge: maxAgeText === null ? null : Number(maxAgeText),
      loginHint: one("login_hint"),
      requestUri: pushed?.requestUri ?? null,
      resources: target.resources.map((resource) => resource.identifier),
    },
  };
}

/** Checks the query of an authorization request; errors go to the redirect URI once it is trusted. */
async function checkRequest(p: Provider, c: Context, query: URLSearchParams): Promise<Checked> {
  const expanded = await expandPushed(p, query);
  if (expanded.kind === "invalid") {
    refuse(p, query.get("client_id"), "invalid_request_uri");
    return {
      ok: false,
      response: errorPage(
        c,
        400,
        "This sign-in request is unknown, expired or already used; go back to the application.",
      ),
    };
  }
  const checked = expanded.kind === "pushed"
    ? await validateRequest(p, expanded.params, { requestUri: expanded.requestUri })
    : await validateRequest(p, query, null);
  if (checked.ok) return checked;
  const refusal = checked.refusal;
  if (refusal.at === "page") {
    refuse(p, refusal.clientId, refusal.reason);
    return { ok: false, response: errorPage(c, 400, refusal.message) };
  }
  refuse(p, refusal.clientId, refusal.error);
  return {
    ok: false,
    response: redirectWith(c, refusal.redirectUri, {
      error: refusal.error,
      error_description: refusal.description,
      state: refusal.state,
    }, p),
  };
}

function refuse(p: Provider, clientId: string | null, reason: string): void {
  p.ctx.events.emit({
    kind: OIDC_EVENTS.authorizationRefused,
    occurredAt: p.ctx.clock.now(),
    realmId: p.realmId,
    data: { clientId, reason },
  });
}

async function authorize(p: Provider, c: Context, query: URLSearchParams): Promise<Response> {
  const checked = await checkRequest(p, c, query);
  if (!checked.ok) return checked.response;
  const r = checked.request;
  const signedIn = await browserSession(p, c);
  const now = p.ctx.clock.now();
  const requestedAt = await requestTime(p, query);
  const authTime = signedIn?.session.createdAt.getTime() ?? null;
  // A sign-in at or after the time svc sent this very request to sign-in is fresh for it.
  const signedInSinceRequest = authTime !== null && requestedAt !== null && authTime >= requestedAt;
  const withinMaxAge = r.maxAge === null || signedInSinceRequest ||
    (authTime !== null && now - authTime <= r.maxAge * 1000);
  const mustSignIn = signedIn === null || !withinMaxAge || (r.prompt === "login" && !signedInSinceRequest);
  if (mustSignIn) {
    // Without a live access-token cookie, the session may still live (its refresh cookie): the
    // browser goes through the resume hop first, once (sso.ts), unless a new sign-in is demanded.
    const resume = signedIn === null && r.prompt !== "login" && !query.has(RESUMED_PARAM);
    const resumed = new URLSearchParams(query);
    resumed.set(RESUMED_PARAM, "1");
    if (r.prompt === "none") {
      if (resume) {
        const refusal = redirectWith(c, r.redirectUri, { error: "login_required", state: r.state }, p);
        const otherwise = refusal.headers.get("Location")!;
        return c.redirect(await resumeUrl(p, `${p.url(PATHS.authorize)}?${resumed}`, otherwise), 303);
      }
      refuse(p, r.client.clientId, "login_required");
      return redirectWith(c, r.redirectUri, { error: "login_required", state: r.state }, p);
    }
    // Back to this request once signed in, with the time it was sent to sign-in, signed.
    const back = new URLSearchParams(query);
    back.set(REQUEST_TIME_PARAM, await requestTimeToken(p, query, now));
    const returnTo = `${p.url(PATHS.authorize)}?${back}`;
    const target = new URL(p.ctx.config.signInUrl ?? p.url(hostedSignInPath(p)), p.issuer);
    target.searchParams.set("returnTo", returnTo);
    if (r.loginHint !== null) target.searchParams.set("login_hint", r.loginHint);
    if (resume) {
      return c.redirect(await resumeUrl(p, `${p.url(PATHS.authorize)}?${resumed}`, target.href), 303);
    }
    return c.redirect(target.href, 303);
  }
  const { session, user } = signedIn;
  if (r.client.requireConsent) {
    // prompt=consent is met by a consent given to this very request (the marker the decision adds).
    const promptMet = r.prompt !== "consent" || await consentMarkerValid(p, query);
    const consented = promptMet &&
      await hasConsent(p, user.id, r.client.clientId, r.scopes, r.client.createdAt);
    if (!consented) {
      if (r.prompt === "none") {
        refuse(p, r.client.clientId, "consent_required");
        return redirectWith(c, r.redirectUri, { error: "consent_required", state: r.state }, p);
      }
      const back = new URLSearchParams(query);
      if (r.prompt === "consent") back.delete("prompt");
      return c.redirect(`${p.path(PATHS.consent)}?${back}`, 303);
    }
  }
  // A pushed request gives one code: of concurrent uses, the one that consumes it (RFC 9126).
  if (r.requestUri !== null && !await consumePushedRequest(p, r.requestUri)) {
    refuse(p, r.client.clientId, "invalid_request_uri");
    return redirectWith(c, r.redirectUri, {
      error: "invalid_request_uri",
      error_description: "the pushed request was already used or expired",
      state: r.state,
    }, p);
  }
  const code = randomToken(p.ctx.random, 32);
  await recordCodeResources(p, sha256Hex(code), r.resources);
  await p.ctx.storage.authorizationCodes.store({
    codeHash: sha256Hex(code),
    clientId: r.client.clientId,
    redirectUri: r.redirectUri,
    realmId: p.realmId,
    userId: user.id,
    sessionId: session.id,
    orgId: null,
    scopes: r.scopes,
    authTime: session.createdAt,
    expiresAt: new Date(now + p.ctx.config.codeTtlSeconds * 1000),
    codeChallenge: r.codeChallenge,
    codeChallengeMethod: r.codeChallenge === null ? null : "S256",
    nonce: r.nonce,
    dpopJkt: r.dpopJkt,
  });
  p.ctx.events.emit({
    kind: OIDC_EVENTS.authorized,
    occurredAt: now,
    realmId: p.realmId,
    userId: user.id,
    data: { clientId: r.client.clientId, scopes: r.scopes, sessionId: session.id },
  });
  return redirectWith(c, r.redirectUri, { code, state: r.state }, p);
}

/** The hosted sign-in page, under the path base: `{SVC_ACCOUNT_MOUNT_PATH}/sign-in`. */
function hostedSignInPath(p: Provider): string {
  return `${p.ctx.svcConfig.account.mountPath}/sign-in`;
}

function redirectWith(
  c: Context,
  redirectUri: string,
  params: Record<string, string | null>,
  p: Provider,
): Response {
  const target = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) {
    if (value !== null) target.searchParams.set(name, value);
  }
  target.searchParams.set("iss", p.issuer);
  return c.redirect(target.href, 303);
}

async function consentPage(p: Provider, c: Context): Promise<Response> {
  const url = new URL(c.req.url);
  const checked = await checkRequest(p, c, url.searchParams);
  if (!checked.ok) return checked.response;
  const signedIn = await browserSession(p, c);
  if (signedIn === null) return c.redirect(`${p.path(PATHS.authorize)}?${url.searchParams}`, 303);
  const token = formToken(p, c);
  const r = checked.request;
  return page(
    c,
    200,
    "Allow access",
    `<p>${escape(r.client.clientName ?? r.client.clientId)} asks for: ${
      r.scopes.map(escape).join(", ")
    }</p><form method="post" action="${
      escape(p.path(PATHS.consent))
    }"><input type="hidden" name="request" value="${
      escape(url.searchParams.toString())
    }"><input type="hidden" name="form" value="${
      escape(token)
    }"><button type="submit" name="decision" value="allow">Allow</button> <button type="submit" name="decision" value="deny">Deny</button></form>`,
    new URL(r.redirectUri).origin,
  );
}

async function consentSubmit(p: Provider, c: Context): Promise<Response> {
  const form = await formFields(c);
  if (form === null || !v.safeParse(ConsentFormSchema, form).success) {
    return errorPage(c, 400, "The form could not be read.");
  }
  if (!formTokenValid(c, form.form)) {
    return errorPage(c, 403, "The form expired; go back to the application.");
  }
  const query = new URLSearchParams(form.request);
  const checked = await checkRequest(p, c, query);
  if (!checked.ok) return checked.response;
  const r = checked.request;
  const signedIn = await browserSession(p, c);
  if (signedIn === null) return c.redirect(`${p.path(PATHS.authorize)}?${query}`, 303);
  if (form.decision !== "allow") {
    refuse(p, r.client.clientId, "access_denied");
    return redirectWith(c, r.redirectUri, { error: "access_denied", state: r.state }, p);
  }
  await grantConsent(p, signedIn.user.id, r.client.clientId, r.scopes, r.client.createdAt);
  p.ctx.events.emit({
    kind: OIDC_EVENTS.consentGranted,
    occurredAt: p.ctx.clock.now(),
    realmId: p.realmId,
    userId: signedIn.user.id,
    data: { clientId: r.client.clientId, scopes: r.scopes },
  });
  // Back to the request, with the mark of the consent just given (prompt=consent of a pushed
  // request, which the redirect cannot drop, is met by it).
  const back = new URLSearchParams(query);
  back.delete(CONSENT_MARK_PARAM);
  back.set(CONSENT_MARK_PARAM, await consentMark(p, back));
  return c.redirect(`${p.path(PATHS.authorize)}?${back}`, 303);
}

/** The parameter svc adds to a request whose consent was just given (a signed JWT). */
const CONSENT_MARK_PARAM = "svc_consented";
const CONSENT_MARK_TYP = "svc-oidc-consent+jwt";
/** How long the consent mark counts. */
const CONSENT_MARK_SECONDS = 120;

async function consentMark(p: Provider, query: URLSearchParams): Promise<string> {
  const now = Math.floor(p.ctx.clock.now() / 1000);
  return await signJwt(p, CONSENT_MARK_TYP, {
    iss: p.issuer,
    aud: p.url(PATHS.authorize),
    iat: now,
    exp: now + CONSENT_MARK_SECONDS,
    q: requestDigest(query),
  });
}

async function consentMarkerValid(p: Provider, query: URLSearchParams): Promise<boolean> {
  const all = query.getAll(CONSENT_MARK_PARAM);
  if (all.length !== 1) return false;
  const claims = await verifyJwt(p, all[0], [CONSENT_MARK_TYP]);
  return claims !== null && claims.aud === p.url(PATHS.authorize) && claims.q === requestDigest(query);
}
