/**
 * How a completed sign-in answers, whatever the factor (password, MFA, passkey): bearer
 * clients get the token response `{ accessToken, refreshToken, tokenType: "Bearer", expiresIn }`;
 * browser clients (those that ask for cookies) get the session cookies and
 * `{ expiresIn, csrfToken }`. Every sign-in route answers through {@link respondWithSignIn}.
 *
 * @module
 */
import type { Context } from "hono";
import type { RandomSource } from "../../core/random.ts";
import type { IssuedTokens, SessionService, SignInInput } from "../../core/sessions/service.ts";
import type { SvcEnv } from "../request-id.ts";
import { type CookieSettings, setSessionCookies } from "./cookies.ts";

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
  sessions: SessionService;
  cookies: CookieSettings;
  random: RandomSource;
  /** Seconds the refresh cookie lives. */
  refreshTokenTtlSeconds: number;
}

/**
 * Creates the session, issues its tokens and answers in the request's transport.
 *
 * @example
 * ```ts
 * app.post("/auth/login", async (c) => {
 *   // … verify the credentials …
 *   return await respondWithSignIn(c, responder, { realmId, userId, mfa: "Password" });
 * });
 * ```
 */
export async function respondWithSignIn(
  c: Context<SvcEnv>,
  responder: SignInResponder,
  input: SignInInput,
): Promise<{ response: Response; issued: IssuedTokens }> {
  const issued = await responder.sessions.signIn(input);
  c.header("Cache-Control", "no-store");
  if (signInTransport(c) === "bearer") return { response: c.json(issued.tokens), issued };
  const csrfToken = setSessionCookies(c, responder.cookies, {
    accessToken: issued.tokens.accessToken,
    expiresIn: issued.tokens.expiresIn,
    refreshToken: issued.tokens.refreshToken,
    refreshMaxAge: responder.refreshTokenTtlSeconds,
  }, responder.random);
  return { response: c.json({ expiresIn: issued.tokens.expiresIn, csrfToken }), issued };
}
