/**
 * How a completed sign-in answers, whatever the factor (password, MFA, passkey): bearer
 * clients get the token response `{ accessToken, refreshToken, tokenType: "Bearer", expiresIn }`;
 * browser clients (those that ask for cookies) get the session cookies and
 * `{ expiresIn, csrfToken }`. Every sign-in route answers through {@link respondWithSignIn},
 * which also gives a browser or client that presented no device id its own (`./device-id.ts`).
 *
 * @module
 */
import type { Context } from "hono";
import * as v from "valibot";
import type { RandomSource } from "../../core/random.ts";
import type { IssuedTokens, SessionService, SignInInput } from "../../core/sessions/service.ts";
import type { SvcEnv } from "../request-id.ts";
import { type CookieSettings, setSessionCookies } from "./cookies.ts";
import { issueDevice } from "./device-id.ts";
import { type DpopEdge, issuingProofJkt } from "./dpop.ts";

/** The bearer token answer of a sign-in or a refresh. */
export const TokenResponseSchema = v.pipe(
  v.object({
    accessToken: v.pipe(v.string(), v.description("A JWT (typ at+svc).")),
    refreshToken: v.pipe(v.string(), v.description("An opaque srt_… token, single use (rotated).")),
    tokenType: v.picklist(["Bearer", "DPoP"]),
    expiresIn: v.pipe(v.number(), v.description("Seconds until the access token expires.")),
  }),
  v.title("TokenResponse"),
);

/** The cookie-transport answer: the tokens went into cookies; the CSRF token goes in `X-Svc-Csrf`. */
export const CookieSessionSchema = v.pipe(
  v.object({
    expiresIn: v.pipe(v.number(), v.description("Seconds until the access token expires.")),
    csrfToken: v.pipe(v.string(), v.description("Send it as X-Svc-Csrf on state-changing requests.")),
  }),
  v.title("CookieSession"),
);

/** The answer of every completed sign-in: tokens (bearer) or cookies (`X-Svc-Transport: cookie`). */
export const SignInResponseSchema = v.pipe(
  v.union([TokenResponseSchema, CookieSessionSchema]),
  v.title("SignInResponse"),
);

/** The transport a sign-in request asks for. */
export type SignInTransport = "bearer" | "cookie";

/**
 * The transport of a sign-in request: `cookie` when the client sends the header
 * `X-Svc-Transport: cookie` (browsers using svc's cookie session), else `bearer`.
 */
export function signInTransport(c: Context<SvcEnv>): SignInTransport {
  return c.req.header(TRANSPORT_HEADER)?.trim().toLowerCase() === "cookie" ? "cookie" : "bearer";
}

/** The request header that selects the cookie transport for sign-in. */
export const TRANSPORT_HEADER = "X-Svc-Transport";

/** What {@link respondWithSignIn} needs. */
export interface SignInResponder {
  /** Creates the session and issues its tokens. */
  sessions: SessionService;
  /** How the session and device cookies are set (cookie transport). */
  cookies: CookieSettings;
  /** Source of the CSRF token and of new device ids. */
  random: RandomSource;
  /** Seconds the refresh cookie lives. */
  refreshTokenTtlSeconds: number;
  /** DPoP: a bearer sign-in with a `DPoP` proof gets tokens bound to its key (absent: DPoP is ignored). */
  dpop?: DpopEdge;
}

/**
 * Creates the session, issues its tokens and answers in the request's transport.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   cookieSettings,
 *   createApp,
 *   createAuthStack,
 *   createSqlStorage,
 *   cryptoRandom as random,
 *   loadConfig,
 *   nullEventSink as events,
 *   openDatabase,
 *   type RouteInstaller,
 *   systemClock as clock,
 * } from "@svc/svc";
 * import { respondWithSignIn, type SignInResponder } from "./login-response.ts";
 *
 * const database = await openDatabase({ kind: "embedded" }); // PGlite, in memory
 * await database.ensureSchema();
 * const storage = createSqlStorage(database, { clock, random });
 * const realm = await storage.realms.create({ name: "default", displayName: "Default", isDefault: true });
 * const user = await storage.users.create({ realmId: realm.id, email: "ada@example.com" });
 * const { config } = loadConfig({ env: {} });
 * const auth = createAuthStack({ config, storage, clock, random, events });
 * await auth.ensureKeys();
 *
 * const responder: SignInResponder = {
 *   sessions: auth.sessions,
 *   cookies: cookieSettings(config),
 *   random,
 *   refreshTokenTtlSeconds: config.tokens.refreshTokenTtlSeconds,
 * };
 * const loginRoutes: RouteInstaller = (app) => {
 *   app.post("/auth/login", async (c) => {
 *     // … verify the credentials …
 *     const signIn = { realmId: realm.id, userId: user.id, mfa: "Password" };
 *     return (await respondWithSignIn(c, responder, signIn)).response;
 *   });
 * };
 * const app = createApp({ config, readinessChecks: [], clock, random, routes: [loginRoutes] });
 *
 * const bearer = await app.request("/auth/login", { method: "POST" });
 * assert.equal((await bearer.json()).tokenType, "Bearer"); // accessToken, refreshToken, expiresIn
 * const browser = await app.request("/auth/login", {
 *   method: "POST",
 *   headers: { "X-Svc-Transport": "cookie" },
 * });
 * assert.ok("csrfToken" in await browser.json()); // the tokens went into Set-Cookie
 * await database.close();
 * ```
 */
export async function respondWithSignIn(
  c: Context<SvcEnv>,
  responder: SignInResponder,
  input: SignInInput,
): Promise<{ response: Response; issued: IssuedTokens }> {
  const transport = signInTransport(c);
  // Opt-in DPoP binding (RFC 9449): the access tokens carry cnf.jkt, the refresh tokens need the key.
  const jkt = transport === "bearer" ? await issuingProofJkt(c, responder.dpop) : null;
  const issued = await responder.sessions.signIn(
    jkt === null ? input : { ...input, dpop: { jkt, bindRefresh: true } },
  );
  c.header("Cache-Control", "no-store");
  issueDevice(c, responder.cookies, responder.random, transport);
  if (transport === "bearer") return { response: c.json(issued.tokens), issued };
  const csrfToken = setSessionCookies(c, responder.cookies, {
    accessToken: issued.tokens.accessToken,
    expiresIn: issued.tokens.expiresIn,
    refreshToken: issued.tokens.refreshToken,
    refreshMaxAge: responder.refreshTokenTtlSeconds,
  }, responder.random);
  return { response: c.json({ expiresIn: issued.tokens.expiresIn, csrfToken }), issued };
}
