/**
 * The browser flow through an upstream provider:
 *
 * - `GET /federation/start?provider=<id>|email=<email>&returnTo=…[&link=1]`: picks the provider
 *   (by id, or by the email's domain: only a verified `EmailDomain` row of an organization routes
 *   to its default identity provider), checks `returnTo` with the hosted pages' rule, stores a
 *   single-use state (TTL from the clock), binds it to the browser with a cookie and redirects to
 *   the upstream's authorization endpoint (code flow, PKCE S256, state, nonce).
 * - `GET /federation/callback?state=…&code=…`: consumes the state once, exchanges the code at the
 *   upstream's token endpoint, validates the ID token, finds the user, opens a svc session with
 *   the cookie transport and sends the browser to `returnTo`.
 *
 * Who signs in: the user linked to (upstream issuer, subject); else, with `link=1` started by a
 * browser already signed in to svc, that account, when the upstream asserts `email_verified` for
 * the account's own email in a domain the organization verified (the only way an existing
 * account is linked: never by email alone); else a new user, when the provider allows
 * just-in-time provisioning and the email's domain is one the organization verified (the user
 * joins the organization; the email counts as verified only when the upstream says so); else
 * refused. Refusals show one page with a stable code; the reason goes to `federation.refused`.
 *
 * @module
 */
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import * as v from "valibot";
import {
  allowedReturnTo,
  constantTimeEqual,
  documented,
  EMAIL_DOMAIN,
  normalizeEmail,
  noStore,
  type RouteInstaller,
  signedInUser,
  signInBrowser,
  SvcError,
  type User,
  verifiedDomainOrganization,
} from "../../mod.ts";
import type { FederationProvider } from "./providers.ts";
import { FEDERATED_MFA_LEVEL, type Federation, FEDERATION_EVENTS, PATHS, STATE_COOKIE } from "./shared.ts";
import { UpstreamError } from "./upstream.ts";

/** A refusal of the flow: `code` is shown, `reason` only recorded. */
export class FederationRefusedError extends SvcError {
  constructor(code: string, readonly reason: string, status = 403) {
    super(code, "Signing in through your organization did not work.", status);
    this.name = "FederationRefusedError";
  }
}

const MESSAGES: Record<string, string> = {
  federation_provider_unknown: "No sign-in of an organization is set up for this address.",
  federation_return_to_refused: "The page to return to is not allowed.",
  federation_state_invalid: "This sign-in expired or was already used; start again.",
  federation_refused:
    "Your organization's sign-in did not give access to an account here; ask your administrator.",
  federation_upstream_denied: "Your organization's sign-in was cancelled or refused.",
  federation_upstream_unavailable: "Your organization's sign-in cannot be reached right now.",
  federation_upstream_invalid: "Your organization's sign-in answered something svc cannot use.",
  federation_id_token_invalid: "Your organization's sign-in answered something svc cannot use.",
  federation_code_refused: "Your organization's sign-in did not complete; start again.",
};

const oneValue = (name: string) =>
  v.optional(
    v.pipe(
      v.string(`${name} must be a string`),
      v.maxLength(2048, `${name} is too long`),
      v.check((text) => !text.includes("\u0000"), `${name} must not contain U+0000`),
    ),
  );

/** The query of `GET /federation/start`. */
export const StartQuerySchema = v.object({
  provider: oneValue("provider"),
  email: oneValue("email"),
  returnTo: oneValue("returnTo"),
  link: v.optional(v.picklist(["1"], "link must be 1")),
});

/** The query of `GET /federation/callback`. */
export const CallbackQuerySchema = v.object({
  state: oneValue("state"),
  code: oneValue("code"),
  error: oneValue("error"),
  error_description: oneValue("error_description"),
  iss: oneValue("iss"),
  session_state: oneValue("session_state"),
});

function query<S extends v.GenericSchema>(c: Context, schema: S): v.InferOutput<S> {
  const raw: Record<string, string> = {};
  for (const [name, values] of Object.entries(c.req.queries())) {
    if (values.length !== 1) throw new FederationRefusedError("invalid_request", `${name} given twice`, 400);
    raw[name] = values[0];
  }
  const parsed = v.safeParse(schema, raw);
  if (!parsed.success) throw new FederationRefusedError("invalid_request", parsed.issues[0].message, 400);
  return parsed.output;
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** The error page (no script, strict CSP) with the stable code. */
function errorPage(f: Federation, c: Context, code: string, status: number): Response {
  c.header("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'; base-uri 'none'");
  c.header("Cache-Control", "no-store");
  c.header("Referrer-Policy", "no-referrer");
  const signIn = f.path(`${f.ctx.svcConfig.account.mountPath}/sign-in`);
  const message = MESSAGES[code] ?? "Signing in through your organization did not work.";
  return c.html(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign-in did not work</title></head><body><main><h1>Sign-in did not work</h1><p role="alert">${
      escape(message)
    }</p><p>Code: <code id="error-code">${escape(code)}</code></p><p><a href="${
      escape(signIn)
    }">Back to sign-in</a></p></main></body></html>`,
    status as 400,
  );
}

function refused(
  f: Federation,
  provider: FederationProvider | null,
  reason: string,
  extra: Record<string, unknown> = {},
): void {
  f.ctx.events.emit({
    kind: FEDERATION_EVENTS.refused,
    occurredAt: f.ctx.clock.now(),
    realmId: provider?.realmId ?? null,
    orgId: provider?.orgId,
    data: { providerId: provider?.id ?? null, reason, ...extra },
  });
}

/**
 * The enabled provider an email's domain routes to: a verified `EmailDomain` row of an
 * organization of the realm whose default identity provider is one of this plugin's. Null for any
 * other domain (unverified rows never route).
 */
export async function providerForDomain(
  f: Federation,
  realmId: string,
  domain: string,
): Promise<FederationProvider | null> {
  const org = await verifiedDomainOrganization(f.ctx, realmId, domain);
  if (org === null || org.defaultIdentityProviderId === null) return null;
  const provider = await f.providers.get(org.defaultIdentityProviderId);
  if (provider === null || !provider.enabled || provider.orgId !== org.id || provider.realmId !== realmId) {
    return null;
  }
  return provider;
}

async function start(f: Federation, c: Context): Promise<Response> {
  const q = query(c, StartQuerySchema);
  const { baseUrl } = f.ctx.svcConfig.server;
  const returnTo = q.returnTo
    ? allowedReturnTo(q.returnTo, f.ctx.svcConfig.account.returnToOrigins, new URL(baseUrl).origin)
    : new URL(f.path(`${f.ctx.svcConfig.account.mountPath}/`), baseUrl).href;
  if (returnTo === null) {
    throw new FederationRefusedError("federation_return_to_refused", "returnTo refused", 400);
  }
  let provider: FederationProvider | null = null;
  if (q.provider !== undefined) {
    provider = await f.providers.get(q.provider);
    if (provider !== null && !provider.enabled) provider = null;
  } else if (q.email !== undefined) {
    const realm = await f.ctx.storage.realms.getDefault();
    const email = normalizeEmail(q.email);
    provider = realm === null
      ? null
      : await providerForDomain(f, realm.id, email.slice(email.lastIndexOf("@") + 1));
  }
  if (provider === null) throw new FederationRefusedError("federation_provider_unknown", "no provider", 404);
  const linkUser = q.link === "1" ? await signedInUser(f.ctx, c) : null;
  const linkUserId = linkUser !== null && linkUser.realmId === provider.realmId ? linkUser.id : null;
  const metadata = await f.upstreams.metadata(provider.issuer);
  const started = await f.states.start(provider.id, returnTo, linkUserId);
  setCookie(c, STATE_COOKIE, started.state, {
    path: f.path(PATHS.callback),
    httpOnly: true,
    secure: f.ctx.cookies.secure,
    // The callback is a top-level navigation from the upstream's site.
    sameSite: "Lax",
    maxAge: f.ctx.config.stateTtlSeconds,
  });
  const target = new URL(metadata.authorizationEndpoint);
  target.searchParams.set("response_type", "code");
  target.searchParams.set("client_id", provider.clientId);
  target.searchParams.set("redirect_uri", f.callbackUrl);
  target.searchParams.set("scope", provider.scopes.join(" "));
  target.searchParams.set("state", started.state);
  target.searchParams.set("nonce", started.nonce);
  target.searchParams.set("code_challenge", started.codeChallenge);
  target.searchParams.set("code_challenge_method", "S256");
  if (q.email !== undefined) target.searchParams.set("login_hint", q.email.trim());
  return c.redirect(target.href, 303);
}

function claimText(claims: Record<string, unknown>, name: string): string | null {
  const value = claims[name];
  return typeof value === "string" && value !== "" && value.length <= 320 && !value.includes("\u0000")
    ? value
    : null;
}

async function orgVerifiedDomain(f: Federation, orgId: string, email: string): Promise<boolean> {
  const domain = email.slice(email.lastIndexOf("@") + 1);
  const domains = await f.ctx.storage.organizations.listDomains(orgId);
  return domains.some((d) => d.kind === EMAIL_DOMAIN && d.verified && d.value === domain);
}

/** The user the upstream identity signs in as (linking or provisioning on the way), or a refusal. */
async function resolveUser(
  f: Federation,
  provider: FederationProvider,
  claims: Record<string, unknown> & { sub: string },
  linkUserId: string | null,
): Promise<User> {
  const { storage, clock, events } = f.ctx;
  const linkKey = provider.issuer;
  const link = await storage.federatedIdentities.find(linkKey, claims.sub);
  if (link !== null) {
    const user = await storage.users.get(link.userId);
    if (user === null || user.realmId !== provider.realmId || user.status !== "Active") {
      throw new FederationRefusedError("federation_refused", "linked account unavailable");
    }
    return user;
  }
  const claimedEmail = claimText(claims, provider.claimMapping.email);
  const email = claimedEmail == null ? null : normalizeEmail(claimedEmail);
  const emailVerified = claims.email_verified === true;
  const attributes: Record<string, unknown> = {};
  for (const [attribute, claim] of Object.entries(provider.claimMapping.attributes)) {
    if (claims[claim] !== undefined) attributes[attribute] = claims[claim];
  }
  if (linkUserId !== null) {
    // Explicit linking: the browser is signed in as this account, and the upstream asserts its
    // email, verified, in a domain the organization verified.
    const user = await storage.users.get(linkUserId);
    if (
      user === null || user.status !== "Active" || user.realmId !== provider.realmId || email === null ||
      !emailVerified || email !== user.email || !await orgVerifiedDomain(f, provider.orgId, email)
    ) {
      throw new FederationRefusedError("federation_refused", "link conditions not met");
    }
    await storage.federatedIdentities.link(user.id, linkKey, claims.sub).catch(() => {
      throw new FederationRefusedError("federation_refused", "link conflict");
    });
    events.emit({
      kind: FEDERATION_EVENTS.linked,
      occurredAt: clock.now(),
      realmId: provider.realmId,
      orgId: provider.orgId,
      userId: user.id,
      data: { providerId: provider.id, issuer: provider.issuer, how: "signed_in" },
    });
    return user;
  }
  if (!provider.allowJitProvisioning) {
    throw new FederationRefusedError("federation_refused", "no linked account");
  }
  if (email === null || !/^[^\s@]+@[^\s@]+$/.test(email)) {
    throw new FederationRefusedError("federation_refused", "no usable email claim");
  }
  if (!await orgVerifiedDomain(f, provider.orgId, email)) {
    throw new FederationRefusedError("federation_refused", "email domain not verified by the organization");
  }
  if (await storage.users.findByEmail(provider.realmId, email) !== null) {
    // Never linked by email alone: the account's owner links it while signed in (link=1).
    throw new FederationRefusedError(
      "federation_refused",
      "an account has this email; link it while signed in",
    );
  }
  const name = claimText(claims, provider.claimMapping.name);
  const user = await storage.transaction(async (tx) => {
    const created = await tx.users.create({
      realmId: provider.realmId,
      email,
      displayName: name,
      emailVerified,
      attributes,
    });
    await tx.organizations.addMember(provider.orgId, created.id);
    await tx.federatedIdentities.link(created.id, linkKey, claims.sub);
    return created;
  }).catch((err) => {
    if (err instanceof SvcError && err.status < 500) {
      throw new FederationRefusedError("federation_refused", "provisioning conflict");
    }
    throw err;
  });
  const base = { occurredAt: clock.now(), realmId: provider.realmId, orgId: provider.orgId, userId: user.id };
  events.emit({
    ...base,
    kind: FEDERATION_EVENTS.provisioned,
    data: { providerId: provider.id, issuer: provider.issuer, emailVerified },
  });
  events.emit({
    ...base,
    kind: FEDERATION_EVENTS.linked,
    data: { providerId: provider.id, issuer: provider.issuer, how: "provisioned" },
  });
  return user;
}

async function callback(f: Federation, c: Context): Promise<Response> {
  const q = query(c, CallbackQuerySchema);
  const cookie = getCookie(c, STATE_COOKIE);
  setCookie(c, STATE_COOKIE, "", {
    path: f.path(PATHS.callback),
    httpOnly: true,
    secure: f.ctx.cookies.secure,
    sameSite: "Lax",
    maxAge: 0,
  });
  if (q.state === undefined || cookie === undefined || !constantTimeEqual(cookie, q.state)) {
    refused(f, null, "state not bound to this browser");
    throw new FederationRefusedError("federation_state_invalid", "state cookie mismatch", 400);
  }
  const state = await f.states.consume(q.state);
  if (state === null) {
    refused(f, null, "state unknown, expired or used");
    throw new FederationRefusedError("federation_state_invalid", "state consumed", 400);
  }
  const provider = await f.providers.get(state.providerId);
  if (provider === null || !provider.enabled) {
    refused(f, provider, "provider gone or disabled");
    throw new FederationRefusedError("federation_provider_unknown", "provider gone", 404);
  }
  try {
    if (q.error !== undefined || q.code === undefined) {
      throw new FederationRefusedError("federation_upstream_denied", "upstream answered an error");
    }
    const metadata = await f.upstreams.metadata(provider.issuer);
    if (q.iss !== undefined && q.iss !== metadata.issuer) {
      throw new UpstreamError("federation_upstream_invalid", "iss parameter mismatch");
    }
    const secret = await f.providers.clientSecret(provider.id);
    const idToken = await f.upstreams.exchangeCode(
      metadata,
      { clientId: provider.clientId, clientSecret: secret },
      q.code,
      f.callbackUrl,
      state.codeVerifier,
    );
    const claims = await f.upstreams.verifyIdToken(metadata, idToken, {
      clientId: provider.clientId,
      nonce: state.nonce,
    });
    const user = await resolveUser(f, provider, claims, state.linkUserId);
    const issued = await signInBrowser(f.ctx, c, {
      realmId: provider.realmId,
      userId: user.id,
      mfa: FEDERATED_MFA_LEVEL,
      orgId: provider.orgId,
    });
    f.ctx.events.emit({
      kind: FEDERATION_EVENTS.signIn,
      occurredAt: f.ctx.clock.now(),
      realmId: provider.realmId,
      orgId: provider.orgId,
      userId: user.id,
      data: { providerId: provider.id, issuer: provider.issuer, sessionId: issued.session.id },
    });
    return c.redirect(state.returnTo, 303);
  } catch (err) {
    if (err instanceof FederationRefusedError || err instanceof UpstreamError) {
      refused(f, provider, err instanceof FederationRefusedError ? err.reason : err.code);
    }
    throw err;
  }
}

const PAGE = { description: "An error page (HTML) with the stable code", mediaType: "text/html" };
const TAGS = ["Federation"];

/**
 * The one answer to every upstream failure (unreachable, refused by the outbound guard, timed out,
 * a bad discovery document, a refused code, an invalid ID token): different answers would let
 * anyone who can name an issuer probe which internal ports are open. The precise code goes to
 * the `federation.refused` event (callback) and the server log (start).
 */
export const UPSTREAM_FAILURE_CODE = "federation_upstream_unavailable";

/** The flow's routes: browser navigations, documented as such. */
export function flowRoutes(f: Federation): RouteInstaller {
  const handle = (run: (f: Federation, c: Context) => Promise<Response>) => async (c: Context) => {
    try {
      return await run(f, c);
    } catch (err) {
      if (err instanceof UpstreamError) {
        f.ctx.logError(`federation: ${c.req.path}: upstream failed (${err.code})`);
        return errorPage(f, c, UPSTREAM_FAILURE_CODE, 502);
      }
      if (err instanceof FederationRefusedError) return errorPage(f, c, err.code, err.status);
      throw err;
    }
  };
  return documented((app) => {
    app.get(PATHS.start, noStore, handle(start));
    app.get(PATHS.callback, noStore, handle(callback));
  }, [
    {
      method: "GET",
      path: PATHS.start,
      summary: "Start signing in through an organization's identity provider",
      description:
        "By `provider` id, or by `email` (only a verified `EmailDomain` row routes to the organization's default identity provider). `returnTo` follows the hosted pages' origin rule. `link=1` from a signed-in browser links the upstream identity to that account.",
      tags: TAGS,
      auth: "public",
      query: StartQuerySchema,
      responses: {
        303: { description: "To the upstream's authorization endpoint (code flow, PKCE S256, state, nonce)" },
        400: PAGE,
        404: PAGE,
        502: PAGE,
      },
    },
    {
      method: "GET",
      path: PATHS.callback,
      summary: "The upstream identity provider's redirect back",
      description:
        "Consumes the state once, exchanges the code, validates the ID token, signs the user in (cookie transport) and redirects to `returnTo`.",
      tags: TAGS,
      auth: "public",
      query: CallbackQuerySchema,
      responses: {
        303: { description: "To returnTo, signed in" },
        400: PAGE,
        403: PAGE,
        404: PAGE,
        502: PAGE,
      },
    },
  ]);
}
