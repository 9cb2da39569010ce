/**
 * The caller's own profile and sessions (spec 4.1):
 *
 * - `GET /profile/me`: the profile, with the impersonation banner contract: `impersonation`
 *   is null, or `{ impersonationId, actor: { id, email, displayName }, expiresAt }` (who is
 *   acting, until when) when the token carries `act`.
 * - `GET /profile/sessions`: `{ sessions: [...] }`, the caller's active sessions (devices),
 *   most recently seen first, `current` marking the one of the request.
 * - `DELETE /profile/sessions/{id}`: remote logout of one session (204); another user's
 *   session and an unknown id are the same 404.
 *
 * @module
 */
import { NotFoundError } from "../../core/errors.ts";
import type { SessionService } from "../../core/sessions/service.ts";
import type { Storage } from "../../core/storage/storage.ts";
import * as v from "valibot";
import {
  documented,
  type DocumentedInstaller,
  errorResponses,
  IsoTimeSchema,
  type OperationDoc,
} from "../openapi/operation.ts";
import { clearSessionCookies, type CookieSettings } from "../auth/cookies.ts";
import { requireUser } from "./auth.ts";

const MFA_LEVELS = ["Password", "MultiFactor", "PhishingResistant"] as const;

/** The answer of `GET /profile/me`. */
export const ProfileSchema = v.pipe(
  v.object({
    id: v.string(),
    realmId: v.string(),
    email: v.string(),
    emailVerified: v.boolean(),
    displayName: v.nullable(v.string()),
    status: v.string(),
    orgId: v.pipe(v.nullable(v.string()), v.description("The organization the token is for.")),
    sessionId: v.nullable(v.string()),
    mfa: v.pipe(
      v.nullable(v.string()),
      v.description(`How the session signed in: ${MFA_LEVELS.join(", ")}.`),
    ),
    impersonation: v.pipe(
      v.nullable(
        v.object({
          impersonationId: v.string(),
          actor: v.object({
            id: v.string(),
            email: v.nullable(v.string()),
            displayName: v.nullable(v.string()),
          }),
          expiresAt: v.nullable(IsoTimeSchema),
        }),
      ),
      v.description("Who acts as this user, until when; null when nobody does."),
    ),
  }),
  v.title("Profile"),
);

/** One session (device) of the caller. */
export const SessionSchema = v.pipe(
  v.object({
    id: v.string(),
    current: v.pipe(v.boolean(), v.description("The session of this request.")),
    createdAt: IsoTimeSchema,
    lastSeenAt: IsoTimeSchema,
    idleExpiresAt: IsoTimeSchema,
    absoluteExpiresAt: IsoTimeSchema,
    mfa: v.string(),
    ipAddress: v.nullable(v.string()),
    deviceDescription: v.nullable(v.string()),
    impersonated: v.boolean(),
  }),
  v.title("Session"),
);

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "GET",
    path: "/profile/me",
    summary: "The caller's profile",
    tags: ["Profile"],
    responses: { 200: { description: "The profile", body: ProfileSchema }, ...errorResponses(401, 403, 404) },
  },
  {
    method: "GET",
    path: "/profile/sessions",
    summary: "The caller's active sessions, most recently seen first",
    tags: ["Profile"],
    responses: {
      200: { description: "The sessions", body: v.object({ sessions: v.array(SessionSchema) }) },
      ...errorResponses(401, 403),
    },
  },
  {
    method: "DELETE",
    path: "/profile/sessions/:id",
    summary: "End one of the caller's sessions (remote logout)",
    tags: ["Profile"],
    params: { id: "The session id" },
    responses: { 204: { description: "Ended" }, ...errorResponses(401, 403, 404) },
  },
];

/** What the profile routes need. */
export interface ProfileRouteDeps {
  /** Lists and ends the caller's sessions. */
  sessions: SessionService;
  /** Reads the caller's user and, under impersonation, the actor and the impersonation. */
  storage: Pick<Storage, "users" | "impersonations">;
  /** Clears the session cookies when a browser ends its own session. */
  cookies: CookieSettings;
}

/** The profile routes. */
export function profileRoutes(deps: ProfileRouteDeps): DocumentedInstaller {
  return documented((app) => {
    app.get("/profile/me", async (c) => {
      const principal = await requireUser(c);
      const user = await deps.storage.users.get(principal.userId);
      if (user === null || user.realmId !== principal.realmId) throw new NotFoundError("No such user.");
      let impersonation = null;
      if (principal.act) {
        const [actor, record] = await Promise.all([
          deps.storage.users.get(principal.act.actorId),
          deps.storage.impersonations.get(principal.act.impersonationId),
        ]);
        const until = record?.expiresAt.getTime() ?? principal.expiresAt;
        impersonation = {
          impersonationId: principal.act.impersonationId,
          actor: {
            id: principal.act.actorId,
            email: actor?.email ?? null,
            displayName: actor?.displayName ?? null,
          },
          expiresAt: until === undefined ? null : new Date(until).toISOString(),
        };
      }
      c.header("Cache-Control", "no-store");
      return c.json({
        id: user.id,
        realmId: user.realmId,
        email: user.email,
        emailVerified: user.emailVerified,
        displayName: user.displayName,
        status: user.status,
        orgId: principal.orgId,
        sessionId: principal.sessionId,
        mfa: principal.mfa ?? null,
        impersonation,
      });
    });

    app.get("/profile/sessions", async (c) => {
      const principal = await requireUser(c);
      const sessions = await deps.sessions.listSessions(principal.userId);
      c.header("Cache-Control", "no-store");
      return c.json({
        sessions: sessions.map((s) => ({
          id: s.id,
          current: s.id === principal.sessionId,
          createdAt: s.createdAt.toISOString(),
          lastSeenAt: s.lastSeenAt.toISOString(),
          idleExpiresAt: s.idleExpiresAt.toISOString(),
          absoluteExpiresAt: s.absoluteExpiresAt.toISOString(),
          mfa: s.mfa,
          ipAddress: s.ipAddress,
          deviceDescription: s.deviceDescription,
          impersonated: s.impersonationId !== null,
        })),
      });
    });

    app.delete("/profile/sessions/:id", async (c) => {
      const principal = await requireUser(c);
      const id = c.req.param("id");
      await deps.sessions.revokeSession(principal.userId, id);
      if (id === principal.sessionId && c.req.header("Authorization") === undefined) {
        clearSessionCookies(c, deps.cookies);
      }
      return c.body(null, 204);
    });
  }, OPERATIONS);
}
