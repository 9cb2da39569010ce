/**
 * Browser single sign-on for as long as the svc session lives, not only as long as its access
 * token cookie (`svc_at`, 10 minutes).
 *
 * The refresh cookie (`svc_rt`) is scoped to the refresh endpoint's path (spec 5.4), so the
 * authorization endpoint never sees it. When an authorization request finds no live `svc_at`
 * (and does not demand a new sign-in: `prompt=login`), the browser first goes through
 * `GET {path base}/auth/refresh/oidc-resume`, under the refresh cookie's path, where the
 * session is refreshed as the account pages refresh it (`POST /auth/refresh`: rotation, reuse
 * detection, the session's idle timeout moved forward, its absolute timeout kept). With a live
 * session the browser gets fresh cookies and goes back to the request (which still applies
 * `max_age` to the session's sign-in time); otherwise it goes where the request would have gone
 * without a session (sign-in, or `login_required` for `prompt=none`).
 *
 * Both destinations are carried in a JWT the provider signs (2 minutes), so the hop is no open
 * redirect. The request it goes back to is marked `svc_resumed=1`: it does not hop again.
 *
 * @module
 */
import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import {
  documented,
  InvalidRefreshTokenError,
  noStore,
  type OperationDoc,
  REFRESH_COOKIE,
  REFRESH_PATH,
  type RouteInstaller,
  setSessionCookies,
} from "../../mod.ts";
import { errorPage } from "./pages.ts";
import { type Provider, signJwt, verifyJwt } from "./shared.ts";

/** The hop, under the refresh cookie's path (relative to the path base). */
export const RESUME_PATH = `${REFRESH_PATH}/oidc-resume`;
/** The mark of an authorization request that already went through the hop. */
export const RESUMED_PARAM = "svc_resumed";
const RESUME_TYP = "svc-oidc-resume+jwt";
const RESUME_SECONDS = 120;

/** The hop's URL for a request: `ok` once the session is refreshed, `otherwise` when there is none. */
export async function resumeUrl(p: Provider, ok: string, otherwise: string): Promise<string> {
  const now = Math.floor(p.ctx.clock.now() / 1000);
  const token = await signJwt(p, RESUME_TYP, {
    iss: p.issuer,
    aud: p.url(RESUME_PATH),
    iat: now,
    exp: now + RESUME_SECONDS,
    ok,
    otherwise,
  });
  return `${p.url(RESUME_PATH)}?r=${encodeURIComponent(token)}`;
}

const operations = (): readonly OperationDoc[] => [
  {
    method: "GET",
    path: RESUME_PATH,
    summary: "OIDC single sign-on: resume the browser's session",
    description:
      "The authorization endpoint sends a browser without a live access-token cookie here (under the refresh cookie's path) with `r`, a JWT the provider signed: with a live session the refresh cookie is rotated, fresh cookies are set and the browser goes back to the authorization request; otherwise it goes to sign-in (or the client's `login_required`).",
    tags: ["OIDC provider"],
    auth: "public",
    responses: {
      303: { description: "Back to the authorization request, or to sign-in" },
      400: { description: "`r` is missing, forged or expired", mediaType: "text/html" },
    },
  },
];

/** The hop's route. */
export function ssoRoutes(p: Provider): RouteInstaller {
  return documented((app) => {
    app.get(RESUME_PATH, noStore, (c) => resume(p, c));
  }, operations);
}

async function resume(p: Provider, c: Context): Promise<Response> {
  const r = c.req.query("r");
  const claims = r === undefined || r.length > 16_384 ? null : await verifyJwt(p, r, [RESUME_TYP]);
  if (
    claims === null || claims.aud !== p.url(RESUME_PATH) || typeof claims.ok !== "string" ||
    typeof claims.otherwise !== "string"
  ) {
    return errorPage(c, 400, "This sign-in link expired; go back to the application.");
  }
  const cookie = getCookie(c, REFRESH_COOKIE);
  if (cookie === undefined) return c.redirect(claims.otherwise, 303);
  // Only a browser session of svc in the provider's realm (not a client's refresh token).
  const record = await p.ctx.sessions.refreshRecord(cookie);
  if (
    record === null || record.realmId !== p.realmId ||
    (record.audience !== null && record.audience !== p.ctx.tokens.issuer)
  ) {
    return c.redirect(claims.otherwise, 303);
  }
  try {
    const { tokens } = await p.ctx.sessions.refresh(cookie);
    setSessionCookies(c, p.ctx.cookies, {
      accessToken: tokens.accessToken,
      expiresIn: tokens.expiresIn,
      refreshToken: tokens.refreshToken,
      refreshMaxAge: p.ctx.svcConfig.tokens.refreshTokenTtlSeconds,
    }, p.ctx.random);
  } catch (error) {
    if (!(error instanceof InvalidRefreshTokenError)) throw error;
    return c.redirect(claims.otherwise, 303);
  }
  return c.redirect(claims.ok, 303);
}
