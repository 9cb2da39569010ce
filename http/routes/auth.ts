/**
 * Token and session endpoints (spec 4.1, 5.4):
 *
 * - `POST /auth/refresh`: bearer clients send `{ "refreshToken": "srt_…" }` and get
 *   `{ accessToken, refreshToken, tokenType: "Bearer", expiresIn }`; cookie clients send the
 *   `svc_rt` cookie (with the CSRF header) and get new cookies and `{ expiresIn, csrfToken }`.
 *   An optional `"orgId"` (or `null`) moves the new tokens and the rest of the refresh family
 *   to another organization of the user. A bearer client that signed in with a `DPoP` proof
 *   refreshes with a proof of the same key (its tokens then say `tokenType: "DPoP"`).
 * - `POST /auth/switch-organization` `{ "orgId" }`: a new access token for another
 *   organization of the caller, on the same session, without re-authentication.
 * - `POST /auth/logout`: ends the caller's session; clears the cookies.
 * - `POST /auth/logout-all`: ends every session of the caller; clears the cookies.
 *
 * @module
 */
import type { Context } from "hono";
import * as v from "valibot";
import { ForbiddenError } from "../../core/errors.ts";
import type { RandomSource } from "../../core/random.ts";
import type { SessionService } from "../../core/sessions/service.ts";
import { InvalidRefreshTokenError, InvalidTokenError } from "../../core/tokens/errors.ts";
import {
  documented,
  type DocumentedInstaller,
  errorResponses,
  type OperationDoc,
} from "../openapi/operation.ts";
import { CookieSessionSchema, TokenResponseSchema } from "../auth/login-response.ts";
import {
  clearSessionCookies,
  type CookieSettings,
  readCookie,
  REFRESH_COOKIE,
  setSessionCookies,
} from "../auth/cookies.ts";
import { requireCsrf } from "../auth/csrf.ts";
import { DpopAuthError, type DpopEdge, DpopProofError, issuingProofJkt } from "../auth/dpop.ts";
import { type Principal, requirePrincipal } from "../auth/principal.ts";
import type { SvcEnv } from "../request-id.ts";
import { parseBody } from "../validate.ts";
import { noStore } from "../security-headers.ts";
import { UUID_PATTERN } from "../../core/ids.ts";

const orgId = v.pipe(
  v.string("orgId must be an organization id"),
  v.regex(UUID_PATTERN, "orgId must be a UUID"),
);

/** The body of `POST /auth/refresh` (empty for cookie clients). */
export const RefreshRequestSchema = v.strictObject({
  refreshToken: v.optional(v.pipe(v.string("refreshToken must be a string"), v.maxLength(200))),
  orgId: v.optional(v.nullable(orgId)),
});

/** The body of `POST /auth/switch-organization`. */
export const SwitchOrganizationSchema = v.strictObject({ orgId });

/** The bearer answer of an organization switch: a new access token on the same session. */
export const AccessTokenResponseSchema = v.pipe(
  v.object({ accessToken: v.string(), tokenType: v.picklist(["Bearer", "DPoP"]), expiresIn: v.number() }),
  v.title("AccessTokenResponse"),
);

const TAGS = ["Auth"];

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "POST",
    path: "/auth/refresh",
    summary: "Refresh the tokens",
    description:
      "Bearer clients send `refreshToken`; cookie clients send the `svc_rt` cookie and `X-Svc-Csrf`. `orgId` moves the new tokens to another organization of the user. A session signed in with a `DPoP` proof refreshes with a proof of the same key (RFC 9449): its tokens say `tokenType: DPoP`; a proof of another key, or none, is 400 `invalid_dpop_proof` (none also ends the refresh family).",
    tags: TAGS,
    auth: "public",
    body: RefreshRequestSchema,
    bodyRequired: false,
    responses: {
      200: {
        description: "New tokens (bearer) or new cookies (cookie clients)",
        body: v.union([TokenResponseSchema, CookieSessionSchema]),
      },
      ...errorResponses(400, 401, 403),
    },
  },
  {
    method: "POST",
    path: "/auth/switch-organization",
    summary: "Switch the session to another organization of the caller",
    tags: TAGS,
    body: SwitchOrganizationSchema,
    responses: {
      200: {
        description: "A new access token (bearer) or cookie",
        body: v.union([AccessTokenResponseSchema, CookieSessionSchema]),
      },
      ...errorResponses(400, 401, 403, 404),
    },
  },
  {
    method: "POST",
    path: "/auth/logout",
    summary: "End the caller's session and clear the cookies",
    tags: TAGS,
    auth: "optional",
    responses: { 204: { description: "Logged out" }, ...errorResponses(403) },
  },
  {
    method: "POST",
    path: "/auth/logout-all",
    summary: "End every session of the caller",
    tags: TAGS,
    responses: {
      200: { description: "How many sessions ended", body: v.object({ sessionsEnded: v.number() }) },
      ...errorResponses(401, 403),
    },
  },
];

/** What the auth routes need. */
export interface AuthRouteDeps {
  /** Refreshes tokens, switches organization and ends sessions. */
  sessions: SessionService;
  /** How the session cookies are set and cleared (cookie transport). */
  cookies: CookieSettings;
  /** Source of the fresh CSRF token set with the cookies. */
  random: RandomSource;
  /** Seconds the refresh cookie lives. */
  refreshTokenTtlSeconds: number;
  /** DPoP proofs at `/auth/refresh` (a bound session's refresh needs one of its key). */
  dpop?: DpopEdge;
}

/** The token and session routes. */
export function authRoutes(deps: AuthRouteDeps): DocumentedInstaller {
  return documented((app) => {
    app.post("/auth/refresh", noStore, async (c) => {
      const body = await optionalBody(c);
      if (body.refreshToken !== undefined) {
        const dpopJkt = await issuingProofJkt(c, deps.dpop);
        const { tokens } = await refreshBound(deps, body.refreshToken, { orgId: body.orgId, dpopJkt });
        return c.json(tokens);
      }
      const cookie = readCookie(c, REFRESH_COOKIE);
      if (cookie === undefined) throw new InvalidRefreshTokenError();
      requireCsrf(c);
      try {
        const { tokens } = await refreshBound(deps, cookie, { orgId: body.orgId });
        const csrfToken = setSessionCookies(c, deps.cookies, {
          accessToken: tokens.accessToken,
          expiresIn: tokens.expiresIn,
          refreshToken: tokens.refreshToken,
          refreshMaxAge: deps.refreshTokenTtlSeconds,
        }, deps.random);
        return c.json({ expiresIn: tokens.expiresIn, csrfToken });
      } catch (err) {
        if (err instanceof InvalidRefreshTokenError) clearSessionCookies(c, deps.cookies);
        throw err;
      }
    });

    app.post("/auth/switch-organization", noStore, async (c) => {
      const principal = await requireUser(c);
      const body = await parseBody(c, SwitchOrganizationSchema);
      const { response } = await deps.sessions.switchOrganization(principal, body.orgId, {
        audience: principal.audience ?? "",
        act: principal.act ? { sub: principal.act.actorId, imp: principal.act.impersonationId } : undefined,
        // A DPoP-bound caller's new token is bound to the same key.
        jkt: principal.dpopJkt,
      });
      if (c.req.header("Authorization") !== undefined) return c.json(response);
      const csrfToken = setSessionCookies(c, deps.cookies, {
        accessToken: response.accessToken,
        expiresIn: response.expiresIn,
      }, deps.random);
      return c.json({ expiresIn: response.expiresIn, csrfToken });
    });

    app.post("/auth/logout", async (c) => {
      let principal: Principal | null = null;
      try {
        principal = await c.get("principal")();
      } catch (err) {
        // An expired or bad token still logs out of this browser; a CSRF failure does not.
        if (!(err instanceof InvalidTokenError)) throw err;
      }
      if (principal !== null && principal.sessionId !== null) await deps.sessions.logout(principal.sessionId);
      clearSessionCookies(c, deps.cookies);
      return c.body(null, 204);
    });

    app.post("/auth/logout-all", async (c) => {
      const principal = await requireUser(c);
      const sessionsEnded = await deps.sessions.logoutAll(principal.userId);
      clearSessionCookies(c, deps.cookies);
      return c.json({ sessionsEnded });
    });
  }, OPERATIONS);
}

/** A refresh; a bound session's refresh token without a proof of its key is 400 `invalid_dpop_proof`. */
async function refreshBound(
  deps: AuthRouteDeps,
  token: string,
  options: { orgId?: string | null; dpopJkt?: string | null },
) {
  try {
    return await deps.sessions.refresh(token, options);
  } catch (error) {
    if (error instanceof DpopProofError) {
      throw new DpopAuthError(
        error.code,
        "The refresh token is bound to a DPoP key: send its proof.",
        {},
        400,
      );
    }
    throw error;
  }
}

/** The caller, who must be a user (not an API key or service account). */
export async function requireUser(c: Context<SvcEnv>): Promise<Principal> {
  const principal = await requirePrincipal(c);
  if ((principal.kind ?? "User") !== "User") throw new ForbiddenError("Only a signed-in user can do this.");
  return principal;
}

async function optionalBody(c: Context<SvcEnv>): Promise<v.InferOutput<typeof RefreshRequestSchema>> {
  const length = c.req.header("Content-Length");
  if (c.req.header("Content-Type") === undefined && (length === undefined || length === "0")) return {};
  return await parseBody(c, RefreshRequestSchema);
}
