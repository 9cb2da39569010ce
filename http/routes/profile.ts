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
import type { Storage } from "../../storage/storage.ts";
import type { RouteInstaller } from "../app.ts";
import { clearSessionCookies, type CookieSettings } from "../auth/cookies.ts";
import { requireUser } from "./auth.ts";

/** What the profile routes need. */
export interface ProfileRouteDeps {
  sessions: SessionService;
  storage: Pick<Storage, "users" | "impersonations">;
  cookies: CookieSettings;
}

/** The profile routes. */
export function profileRoutes(deps: ProfileRouteDeps): RouteInstaller {
  return (app) => {
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
  };
}
