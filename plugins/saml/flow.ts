/**
 * The SAML browser flow of one connection:
 *
 * - `GET /saml/{id}/metadata`: the SP's metadata (entity id = this URL, the ACS URL, HTTP-POST).
 * - `GET /saml/{id}/start?returnTo=…[&link=1]`: checks `returnTo` with the hosted pages' rule,
 *   stores a single-use request (its id, TTL from the clock) under a random `RelayState`, binds it
 *   to the browser with a cookie and redirects to the IdP (HTTP-Redirect AuthnRequest).
 * - `POST /saml/{id}/acs` (HTTP-POST binding): with a `RelayState`, consumes the request it names
 *   once (the cookie must hold the same value), so `InResponseTo` must be that request's id;
 *   without one, the response is IdP-initiated, accepted only where the connection allows it
 *   (and then it must not answer any request). The response is validated (`response.ts`), its
 *   assertion id consumed once (`{connectionId}:{assertionId}` until it expires: of concurrent
 *   posts of one assertion, one wins), the user found, a svc session opened with the cookie
 *   transport, and the browser sent to `returnTo` (303).
 *
 * - A test sign-in (`GET /saml/{id}/start?test=<ticket>`, the ticket from the admin API, see
 *   `test-sign-in.ts`) runs the same round trip, also for a disabled connection; at the ACS the
 *   response is validated the same way and the same decision is asked (`decideUser`) but not
 *   applied: no session, nobody linked or provisioned, no event; the result is stored for the
 *   administrator and the browser goes back to the test's `returnTo`, refused or not.
 *
 * Who signs in (the federation plugin's rules): the user linked to the connection's NameID;
 * else, with `link=1` started by a browser already signed in to svc, that account, when the
 * assertion's email is the account's own in a domain the organization verified (the only way an
 * existing account is linked: never by email alone); else a new user, when the connection
 * provisions just in time and the email's domain is one the organization verified; else
 * refused. Every refusal at the ACS shows one neutral page; the reason goes to `saml.refused`.
 *
 * @module
 */
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import * as v from "valibot";
import {
  ACCESS_COOKIE,
  allowedReturnTo,
  bodyLimit,
  clientIp,
  constantTimeEqual,
  documented,
  EMAIL_DOMAIN,
  normalizeEmail,
  noStore,
  type RouteInstaller,
  setSessionCookies,
  SvcError,
  type User,
} from "../../mod.ts";
import { authnRequestUrl } from "./authn-request.ts";
import type { SamlConnection } from "./connections.ts";
import { pem, spMetadata } from "./metadata.ts";
import { SamlRefusedError, type ValidatedAssertion, validateResponse } from "./response.ts";
import { PATHS, RELAY_COOKIE, type Saml, SAML_EVENTS, SAML_MFA_LEVEL } from "./shared.ts";
import { boundedAttributes, type TestMapping } from "./test-store.ts";
import { MAX_XML_CHARS } from "./limits.ts";

/** A refusal before the IdP is involved (start, metadata): `code` is shown. */
export class SamlFlowError extends SvcError {
  constructor(code: string, status: number) {
    super(code, "Signing in through your organization did not work.", status);
    this.name = "SamlFlowError";
  }
}

/** The one code every refusal at the ACS shows. */
export const ACS_REFUSED_CODE = "saml_sign_in_refused";

const MESSAGES: Record<string, string> = {
  saml_connection_unknown: "No sign-in of an organization is set up here.",
  saml_return_to_refused: "The page to return to is not allowed.",
  saml_test_unknown: "This test sign-in link was already used or has expired. Start the test again.",
  invalid_request: "The request is not valid.",
  [ACS_REFUSED_CODE]:
    "Your organization's sign-in did not give access to an account here. Start again, or ask your administrator.",
};

const EMAIL_ATTRIBUTES = [
  "email",
  "mail",
  "emailaddress",
  "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress",
  "urn:oid:0.9.2342.19200300.100.1.3",
];
const NAME_ATTRIBUTES = [
  "displayName",
  "name",
  "http://schemas.microsoft.com/identity/claims/displayname",
  "urn:oid:2.16.840.1.113730.3.1.241",
];
const EMAIL_FORMAT = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress";
/** The largest ACS body: a base64 response of the largest XML read, and the RelayState. */
const MAX_ACS_BYTES = Math.ceil(MAX_XML_CHARS * 4 / 3) + 4096;

const oneValue = (name: string) =>
  v.optional(
    v.pipe(
      v.string(`${name} must be a string`),
      v.maxLength(2048, `${name} is too long`),
      v.check((text) => !text.includes("\u0000"), `${name} must not contain U+0000`),
    ),
  );

/** The query of `GET /saml/{id}/start`. */
export const StartQuerySchema = v.object({
  returnTo: oneValue("returnTo"),
  link: v.optional(v.picklist(["1"], "link must be 1")),
  test: v.optional(v.pipe(v.string(), v.maxLength(64, "test is too long"))),
});

/** The form of `POST /saml/{id}/acs`. */
export const AcsFormSchema = v.strictObject({
  SAMLResponse: v.pipe(
    v.string("SAMLResponse must be a string"),
    v.maxLength(MAX_ACS_BYTES, "SAMLResponse is too long"),
    v.regex(/^[A-Za-z0-9+/=\s]+$/, "SAMLResponse must be base64"),
  ),
  RelayState: v.optional(
    v.pipe(v.string("RelayState must be a string"), v.maxLength(256, "RelayState is too long")),
  ),
});

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** The error page (no script, strict CSP) with the stable code. */
function errorPage(s: Saml, c: Context, code: string, status: number): Response {
  c.header("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'; base-uri 'none'");
  c.header("Cache-Control", "no-store");
  c.header("Referrer-Policy", "no-referrer");
  const signIn = s.path(`${s.ctx.svcConfig.account.mountPath}/sign-in`);
  const message = MESSAGES[code] ?? MESSAGES[ACS_REFUSED_CODE];
  return c.html(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign-in did not work</title></head><body><main><h1>Sign-in did not work</h1><p role="alert">${
      escape(message)
    }</p><p>Code: <code id="error-code">${escape(code)}</code></p><p><a href="${
      escape(signIn)
    }">Back to sign-in</a></p></main></body></html>`,
    status as 400,
  );
}

function refusedEvent(s: Saml, connection: SamlConnection | null, reason: string): void {
  s.ctx.events.emit({
    kind: SAML_EVENTS.refused,
    occurredAt: s.ctx.clock.now(),
    realmId: connection?.realmId ?? null,
    orgId: connection?.orgId,
    data: { connectionId: connection?.id ?? null, reason },
  });
}

/** The browser's live svc session (access cookie), or null. */
async function signedInUser(s: Saml, c: Context): Promise<User | null> {
  const token = getCookie(c, ACCESS_COOKIE);
  if (token === undefined) return null;
  try {
    const claims = await s.ctx.tokens.verify("at+svc", token);
    if (claims.act !== undefined) return null;
    const session = await s.ctx.storage.sessions.getActive(claims.sid);
    if (session === null || session.userId !== claims.sub) return null;
    const user = await s.ctx.storage.users.get(session.userId);
    return user !== null && user.status === "Active" ? user : null;
  } catch {
    return null;
  }
}

/**
 * The enabled connection an email's domain routes to: a verified `EmailDomain` row of an
 * organization of the realm whose default identity provider is one of this plugin's connections.
 */
export async function connectionForDomain(
  s: Saml,
  realmId: string,
  domain: string,
): Promise<SamlConnection | null> {
  if (domain === "" || domain.length > 253) return null;
  const match = await s.ctx.storage.organizations.findVerifiedDomain(EMAIL_DOMAIN, domain, { realmId });
  if (match === null || !match.verified) return null;
  const org = await s.ctx.storage.organizations.get(match.orgId);
  if (org === null || org.defaultIdentityProviderId === null) return null;
  const connection = await s.connections.get(org.defaultIdentityProviderId);
  if (
    connection === null || !connection.enabled || connection.orgId !== org.id ||
    connection.realmId !== realmId
  ) {
    return null;
  }
  return connection;
}

async function liveConnection(s: Saml, c: Context): Promise<SamlConnection> {
  const connection = await s.connections.get(c.req.param("connectionId") ?? "");
  if (connection === null || !connection.enabled) throw new SamlFlowError("saml_connection_unknown", 404);
  return connection;
}

async function metadata(s: Saml, c: Context): Promise<Response> {
  const connection = await s.connections.get(c.req.param("connectionId") ?? "");
  if (connection === null) throw new SamlFlowError("saml_connection_unknown", 404);
  const urls = s.urls(connection.id);
  c.header("Content-Type", "application/samlmetadata+xml; charset=utf-8");
  c.header("Cache-Control", "public, max-age=300");
  const encryptionCertificates = (await s.spKeys.list(connection.id)).map((key) => key.certificate);
  return c.body(spMetadata({ entityId: urls.spEntityId, acsUrl: urls.acsUrl, encryptionCertificates }));
}

function query<S extends v.GenericSchema>(c: Context, schema: S): v.InferOutput<S> {
  const raw: Record<string, string> = {};
  for (const [name, values] of Object.entries(c.req.queries())) {
    if (values.length !== 1) throw new SamlFlowError("invalid_request", 400);
    raw[name] = values[0];
  }
  const parsed = v.safeParse(schema, raw);
  if (!parsed.success) throw new SamlFlowError("invalid_request", 400);
  return parsed.output;
}

function cookieOptions(s: Saml, connectionId: string, maxAge: number) {
  return {
    path: s.path(PATHS.acs(connectionId)),
    httpOnly: true,
    secure: s.ctx.cookies.secure,
    // The ACS is a cross-site POST from the IdP: a Lax cookie would not come with it.
    sameSite: s.ctx.cookies.secure ? "None" as const : "Lax" as const,
    maxAge,
  };
}

async function start(s: Saml, c: Context): Promise<Response> {
  const q = query(c, StartQuerySchema);
  // A test sign-in (a ticket from the admin API) may test a connection not enabled yet.
  const connection = q.test === undefined
    ? await liveConnection(s, c)
    : await s.connections.get(c.req.param("connectionId") ?? "");
  if (connection === null || connection.idpSsoUrl === null) {
    throw new SamlFlowError("saml_connection_unknown", 404);
  }
  let test: { id: string; returnTo: string } | null = null;
  if (q.test !== undefined) {
    if (q.returnTo !== undefined || q.link !== undefined) throw new SamlFlowError("invalid_request", 400);
    test = await s.tests.claim(q.test, connection.id);
    if (test === null) throw new SamlFlowError("saml_test_unknown", 400);
  }
  const { baseUrl } = s.ctx.svcConfig.server;
  const returnTo = test !== null
    ? test.returnTo
    : q.returnTo
    ? allowedReturnTo(q.returnTo, s.ctx.svcConfig.account.returnToOrigins, new URL(baseUrl).origin)
    : new URL(s.path(`${s.ctx.svcConfig.account.mountPath}/`), baseUrl).href;
  if (returnTo === null) throw new SamlFlowError("saml_return_to_refused", 400);
  const linkUser = q.link === "1" ? await signedInUser(s, c) : null;
  const linkUserId = linkUser !== null && linkUser.realmId === connection.realmId ? linkUser.id : null;
  const started = await s.requests.start(connection.id, returnTo, linkUserId);
  if (test !== null) await s.tests.bind(test.id, started.relayState);
  setCookie(
    c,
    RELAY_COOKIE,
    started.relayState,
    cookieOptions(s, connection.id, s.ctx.config.requestTtlSeconds),
  );
  const urls = s.urls(connection.id);
  return c.redirect(
    await authnRequestUrl({
      ssoUrl: connection.idpSsoUrl,
      requestId: started.requestId,
      spEntityId: urls.spEntityId,
      acsUrl: urls.acsUrl,
      issueInstant: new Date(s.ctx.clock.now()),
      relayState: started.relayState,
    }),
    303,
  );
}

function firstValue(
  assertion: ValidatedAssertion,
  configured: string | null,
  defaults: readonly string[],
): string | null {
  for (const name of configured === null ? defaults : [configured]) {
    const value = assertion.attributes[name]?.[0];
    if (value !== undefined && value !== "" && value.length <= 320) return value;
  }
  return null;
}

function emailOf(connection: SamlConnection, assertion: ValidatedAssertion): string | null {
  const fromAttribute = firstValue(assertion, connection.attributeMapping.email, EMAIL_ATTRIBUTES);
  const candidate = fromAttribute ??
    (connection.attributeMapping.email === null &&
        (assertion.nameIdFormat === EMAIL_FORMAT || /^[^\s@]+@[^\s@]+$/.test(assertion.nameId))
      ? assertion.nameId
      : null);
  if (candidate === null) return null;
  const email = normalizeEmail(candidate);
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) ? email : null;
}

async function orgVerifiedDomain(s: Saml, orgId: string, email: string): Promise<boolean> {
  const domain = email.slice(email.lastIndexOf("@") + 1);
  const domains = await s.ctx.storage.organizations.listDomains(orgId);
  return domains.some((d) => d.kind === EMAIL_DOMAIN && d.verified && d.value === domain);
}

/** The identity key of a connection's subjects in svc's federated identities. */
export function linkIssuer(connectionId: string): string {
  return `urn:svc:saml:${connectionId}`;
}

/**
 * Who an assertion signs in as, decided without changing anything: the user linked to the
 * NameID; the signed-in user asking to link (`linkUserId`); a user to provision just in time;
 * or a refusal ({@link SamlRefusedError} with the reason). Sign-in applies it (`resolveUser`);
 * a test sign-in only shows it.
 */
export type UserDecision =
  | { readonly kind: "linked"; readonly user: User }
  | { readonly kind: "link"; readonly user: User }
  | {
    readonly kind: "provision";
    readonly email: string;
    readonly displayName: string | null;
    readonly attributes: Readonly<Record<string, unknown>>;
  };

/** Decides who the assertion signs in as (see {@link UserDecision}); throws the refusal. */
export async function decideUser(
  s: Saml,
  connection: SamlConnection,
  assertion: ValidatedAssertion,
  linkUserId: string | null,
): Promise<UserDecision> {
  const { storage } = s.ctx;
  const link = await storage.federatedIdentities.find(linkIssuer(connection.id), assertion.nameId);
  if (link !== null) {
    const user = await storage.users.get(link.userId);
    if (user === null || user.realmId !== connection.realmId || user.status !== "Active") {
      throw new SamlRefusedError("linked account unavailable");
    }
    return { kind: "linked", user };
  }
  const email = emailOf(connection, assertion);
  if (linkUserId !== null) {
    const user = await storage.users.get(linkUserId);
    if (
      user === null || user.status !== "Active" || user.realmId !== connection.realmId || email === null ||
      email !== user.email || !await orgVerifiedDomain(s, connection.orgId, email)
    ) {
      throw new SamlRefusedError("link conditions not met");
    }
    return { kind: "link", user };
  }
  if (!connection.jitProvisioning) throw new SamlRefusedError("no linked account");
  if (email === null) throw new SamlRefusedError("no usable email");
  if (!await orgVerifiedDomain(s, connection.orgId, email)) {
    throw new SamlRefusedError("email domain not verified by the organization");
  }
  if (await storage.users.findByEmail(connection.realmId, email) !== null) {
    // Never linked by email alone: the account's owner links it while signed in (link=1).
    throw new SamlRefusedError("an account has this email; link it while signed in");
  }
  const attributes: Record<string, unknown> = {};
  for (const [attribute, name] of Object.entries(connection.attributeMapping.attributes)) {
    const values = assertion.attributes[name];
    if (values !== undefined) attributes[attribute] = values.length === 1 ? values[0] : [...values];
  }
  const displayName = firstValue(assertion, connection.attributeMapping.name, NAME_ATTRIBUTES);
  return { kind: "provision", email, displayName, attributes };
}

/** The user the assertion signs in as (linking or provisioning on the way), or a refusal. */
async function resolveUser(
  s: Saml,
  connection: SamlConnection,
  assertion: ValidatedAssertion,
  linkUserId: string | null,
): Promise<User> {
  const { storage, clock, events } = s.ctx;
  const issuer = linkIssuer(connection.id);
  const base = { realmId: connection.realmId, orgId: connection.orgId };
  const decision = await decideUser(s, connection, assertion, linkUserId);
  if (decision.kind === "linked") return decision.user;
  if (decision.kind === "link") {
    const { user } = decision;
    await storage.federatedIdentities.link(user.id, issuer, assertion.nameId).catch(() => {
      throw new SamlRefusedError("link conflict");
    });
    events.emit({
      ...base,
      kind: SAML_EVENTS.linked,
      occurredAt: clock.now(),
      userId: user.id,
      data: { connectionId: connection.id, how: "signed_in" },
    });
    return user;
  }
  const user = await storage.transaction(async (tx) => {
    const created = await tx.users.create({
      realmId: connection.realmId,
      email: decision.email,
      displayName: decision.displayName,
      // The organization's own IdP asserts an address in a domain the organization verified.
      emailVerified: true,
      attributes: { ...decision.attributes },
    });
    await tx.organizations.addMember(connection.orgId, created.id);
    await tx.federatedIdentities.link(created.id, issuer, assertion.nameId);
    return created;
  }).catch((err) => {
    if (err instanceof SvcError && err.status < 500) throw new SamlRefusedError("provisioning conflict");
    throw err;
  });
  const at = { ...base, occurredAt: clock.now(), userId: user.id };
  events.emit({ ...at, kind: SAML_EVENTS.provisioned, data: { connectionId: connection.id } });
  events.emit({ ...at, kind: SAML_EVENTS.linked, data: { connectionId: connection.id, how: "provisioned" } });
  return user;
}

/** What a test sign-in shows of a decision (nothing is applied). */
async function testMapping(
  s: Saml,
  connection: SamlConnection,
  assertion: ValidatedAssertion,
): Promise<TestMapping> {
  try {
    const decision = await decideUser(s, connection, assertion, null);
    if (decision.kind === "provision") {
      return {
        outcome: "would_provision",
        wouldProvision: {
          email: decision.email,
          displayName: decision.displayName,
          attributes: decision.attributes,
        },
      };
    }
    const { user } = decision;
    return {
      outcome: "existing_user",
      user: { id: user.id, email: user.email, displayName: user.displayName },
    };
  } catch (err) {
    if (err instanceof SamlRefusedError) return { outcome: "refused", reason: err.reason };
    throw err;
  }
}

function decodeBase64Utf8(text: string): string {
  let binary: string;
  try {
    binary = atob(text.replace(/\s+/g, ""));
  } catch {
    throw new SamlRefusedError("SAMLResponse not base64");
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(
      Uint8Array.from(binary, (ch) => ch.charCodeAt(0)),
    );
  } catch {
    throw new SamlRefusedError("SAMLResponse not UTF-8");
  }
}

async function acs(s: Saml, c: Context): Promise<Response> {
  const connection = await s.connections.get(c.req.param("connectionId") ?? "");
  const cookie = getCookie(c, RELAY_COOKIE);
  if (connection !== null) setCookie(c, RELAY_COOKIE, "", cookieOptions(s, connection.id, 0));
  let test: { id: string; returnTo: string } | null = null;
  try {
    if (connection === null) throw new SamlRefusedError("connection unknown or disabled");
    const type = c.req.header("Content-Type") ?? "";
    if (!type.toLowerCase().startsWith("application/x-www-form-urlencoded")) {
      throw new SamlRefusedError("not a form post");
    }
    const form = new URLSearchParams(await c.req.text());
    const raw: Record<string, string> = {};
    for (const name of new Set(form.keys())) {
      const values = form.getAll(name);
      if (values.length !== 1) throw new SamlRefusedError(`${name} given twice`);
      raw[name] = values[0];
    }
    const parsed = v.safeParse(AcsFormSchema, raw);
    if (!parsed.success) throw new SamlRefusedError(`form: ${parsed.issues[0].message}`);
    const { SAMLResponse, RelayState } = parsed.output;
    // A test sign-in's post: validated as any, then only shown (no session, nobody provisioned).
    if (RelayState !== undefined && RelayState !== "") {
      test = await s.tests.forRelay(RelayState, connection.id);
    }
    if (!connection.enabled && test === null) throw new SamlRefusedError("connection unknown or disabled");

    let requestId: string | null = null;
    let returnTo =
      new URL(s.path(`${s.ctx.svcConfig.account.mountPath}/`), s.ctx.svcConfig.server.baseUrl).href;
    let linkUserId: string | null = null;
    if (RelayState !== undefined && RelayState !== "") {
      if (cookie === undefined || !constantTimeEqual(cookie, RelayState)) {
        throw new SamlRefusedError("relay state not bound to this browser");
      }
      const request = await s.requests.consume(RelayState);
      if (request === null || request.connectionId !== connection.id) {
        throw new SamlRefusedError("relay state unknown, expired or used");
      }
      ({ requestId, returnTo, linkUserId } = request);
    } else if (!connection.allowIdpInitiated) {
      throw new SamlRefusedError("IdP-initiated sign-in not allowed");
    }

    const urls = s.urls(connection.id);
    const assertion = await validateResponse(decodeBase64Utf8(SAMLResponse), {
      spEntityId: urls.spEntityId,
      acsUrl: urls.acsUrl,
      idpEntityId: connection.idpEntityId,
      certificates: connection.idpCertificates.map(pem),
      requestId,
      now: s.ctx.clock.now(),
      skewMs: s.ctx.config.clockSkewSeconds * 1000,
      decryptionKeys: () => s.spKeys.decryptionKeys(connection.id),
      requireEncrypted: connection.requireEncryptedAssertions,
    });
    if (
      !await s.ctx.storage.samlAssertions.mark(connection.id, assertion.assertionId, assertion.consumeUntil)
    ) {
      throw new SamlRefusedError("assertion replayed");
    }
    if (test !== null) {
      await s.tests.complete(test.id, {
        nameId: assertion.nameId,
        nameIdFormat: assertion.nameIdFormat,
        ...boundedAttributes(assertion.attributes),
        mapping: await testMapping(s, connection, assertion),
      });
      return c.redirect(test.returnTo, 303);
    }
    const user = await resolveUser(s, connection, assertion, linkUserId);
    const member = await s.ctx.storage.organizations.isMember(connection.orgId, user.id);
    const issued = await s.ctx.sessions.signIn({
      realmId: connection.realmId,
      userId: user.id,
      mfa: SAML_MFA_LEVEL,
      orgId: member ? connection.orgId : null,
      ipAddress: clientIp(c),
      deviceDescription: c.req.header("User-Agent")?.slice(0, 200) ?? null,
    });
    setSessionCookies(c, s.ctx.cookies, {
      accessToken: issued.tokens.accessToken,
      expiresIn: issued.tokens.expiresIn,
      refreshToken: issued.tokens.refreshToken,
      refreshMaxAge: s.ctx.svcConfig.tokens.refreshTokenTtlSeconds,
    }, s.ctx.random);
    s.ctx.events.emit({
      kind: SAML_EVENTS.signIn,
      occurredAt: s.ctx.clock.now(),
      realmId: connection.realmId,
      orgId: connection.orgId,
      userId: user.id,
      data: {
        connectionId: connection.id,
        sessionId: issued.session.id,
        initiatedBy: requestId === null ? "idp" : "sp",
      },
    });
    return c.redirect(returnTo, 303);
  } catch (err) {
    if (err instanceof SamlRefusedError && test !== null) {
      // The tester sees why; nobody else is told (a test raises no event).
      await s.tests.complete(test.id, {
        nameId: null,
        nameIdFormat: null,
        attributes: [],
        attributesTruncated: false,
        mapping: { outcome: "refused", reason: err.reason },
      });
      return c.redirect(test.returnTo, 303);
    }
    if (err instanceof SamlRefusedError) {
      refusedEvent(s, connection, err.reason);
      return errorPage(s, c, ACS_REFUSED_CODE, 403);
    }
    throw err;
  }
}

const PAGE = { description: "An error page (HTML) with the stable code", mediaType: "text/html" };
const TAGS = ["SAML"];
const PARAMS = { connectionId: "The connection's id" };

/** The flow's routes: browser navigations and the IdP's post, documented as such. */
export function flowRoutes(s: Saml): RouteInstaller {
  const handle = (run: (s: Saml, c: Context) => Promise<Response>) => async (c: Context) => {
    try {
      return await run(s, c);
    } catch (err) {
      if (err instanceof SamlFlowError) return errorPage(s, c, err.code, err.status);
      throw err;
    }
  };
  return documented((app) => {
    app.get("/saml/:connectionId/metadata", handle(metadata));
    app.get("/saml/:connectionId/start", noStore, handle(start));
    app.post("/saml/:connectionId/acs", noStore, bodyLimit(MAX_ACS_BYTES), handle(acs));
  }, [
    {
      method: "GET",
      path: "/saml/:connectionId/metadata",
      summary: "The SP's SAML metadata for a connection",
      description:
        "Its URL is the SP's entity id; it names the ACS URL (HTTP-POST binding) and the certificates of the connection's active encryption keys (`KeyDescriptor use=\"encryption\"`, the current one first).",
      tags: TAGS,
      auth: "public",
      params: PARAMS,
      responses: {
        200: { description: "SAML metadata (XML)", mediaType: "application/samlmetadata+xml" },
        404: PAGE,
      },
    },
    {
      method: "GET",
      path: "/saml/:connectionId/start",
      summary: "Start signing in through an organization's SAML IdP",
      description:
        "`returnTo` follows the hosted pages' origin rule. `link=1` from a signed-in browser links the IdP's identity to that account. `test` (alone) is a test sign-in's single-use ticket from `POST /svc-admin/saml/connections/{connectionId}/test-sign-in`. Sends an AuthnRequest with the HTTP-Redirect binding; the RelayState is bound to the browser by a cookie.",
      tags: TAGS,
      auth: "public",
      params: PARAMS,
      query: StartQuerySchema,
      responses: { 303: { description: "To the IdP's SSO URL" }, 400: PAGE, 404: PAGE },
    },
    {
      method: "POST",
      path: "/saml/:connectionId/acs",
      summary: "The assertion consumer service (HTTP-POST binding)",
      description:
        "A form with `SAMLResponse` and `RelayState` (absent for IdP-initiated sign-in, where the connection allows it). On success the browser is signed in (cookie transport) and sent to `returnTo`; every refusal shows one page.",
      tags: TAGS,
      auth: "public",
      params: PARAMS,
      responses: { 303: { description: "To returnTo, signed in" }, 403: PAGE, 413: PAGE },
    },
  ]);
}
