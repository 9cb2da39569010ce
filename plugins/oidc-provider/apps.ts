/**
 * "Apps with access": the signed-in user's view of the OIDC clients that hold a grant of theirs,
 * and its revocation, for the account page (`/account`).
 *
 * | Method | Path | |
 * |---|---|---|
 * | GET | `/profile/apps` | the clients with the user's consent or a live session opened for them |
 * | DELETE | `/profile/apps/{clientId}` | revoke: the consent is deleted and the client's sessions end |
 *
 * A client holds a grant while the user's consent to it is stored, or while a session the token
 * endpoint opened for it is alive (its refresh family and access tokens). Revocation, in one
 * transaction with its audit entry (the user's realm chain, actor the user) and the
 * `oidc.app_access_revoked` event: the consent row is deleted (the next authorization asks
 * again) and every live session of the client for the user is ended with its refresh tokens.
 * After commit the ends are announced like any session end, so the client's access tokens stop on
 * every instance and a back-channel logout token goes out. All of it is stored state: nothing
 * lives in one instance's memory. Only the user's own svc token may call (an app's token, whose
 * audience is a client, is refused); under impersonation, listing works and revoking is refused
 * like every change.
 *
 * @module
 */
import type { Context } from "hono";
import * as v from "valibot";
import {
  documented,
  errorResponses,
  ForbiddenError,
  IsoTimeSchema,
  NotFoundError,
  type OperationDoc,
  type Principal,
  requirePrincipal,
  type RouteInstaller,
} from "../../mod.ts";
import type { Provider } from "./shared.ts";

/** The event of a revocation. */
export const APP_ACCESS_REVOKED_EVENT = "oidc.app_access_revoked";

const PATH = "/profile/apps";

/** One client with access. */
export const AppAccessSchema = v.pipe(
  v.object({
    clientId: v.string(),
    clientName: v.pipe(v.string(), v.description("The client's registered name, or its client id.")),
    scopes: v.array(v.string()),
    grantedAt: v.pipe(IsoTimeSchema, v.description("When consent was given, or the first live grant.")),
    lastUsedAt: v.pipe(
      v.nullable(IsoTimeSchema),
      v.description("The last refresh or sign-in of a live session of the client; null without one."),
    ),
    activeSessions: v.number(),
  }),
  v.title("AppAccess"),
);

/** The answer of `GET /profile/apps`. */
export const AppAccessListSchema = v.pipe(
  v.object({ apps: v.array(AppAccessSchema) }),
  v.title("AppAccessList"),
);

/** The path parameter of a revocation. */
export const ClientIdParamSchema = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, "not a client id"),
);

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "GET",
    path: PATH,
    summary: "The OIDC clients with access to the caller's account",
    description:
      "Clients holding the caller's consent or a live session opened for them: name, scopes, when granted, last use.",
    tags: ["Profile"],
    responses: { 200: { description: "The apps", body: AppAccessListSchema }, ...errorResponses(401, 403) },
  },
  {
    method: "DELETE",
    path: `${PATH}/:clientId`,
    summary: "Revoke an OIDC client's access to the caller's account",
    description:
      "Deletes the consent and ends the client's sessions for the caller (refresh tokens revoked, access tokens refused on every instance, back-channel logout sent). 204 also when nothing was left to revoke; 404 for an unknown client.",
    tags: ["Profile"],
    params: { clientId: "The client id" },
    responses: { 204: { description: "Revoked" }, ...errorResponses(401, 403, 404) },
  },
];

interface Held {
  clientId: string;
  scopes: Set<string>;
  grantedAt: number;
  lastUsedAt: number | null;
  sessionIds: string[];
}

/** The caller: a user with svc's own token (not an app's). */
async function caller(p: Provider, c: Context): Promise<Principal> {
  const principal = await requirePrincipal(c);
  if ((principal.kind ?? "User") !== "User") throw new ForbiddenError("Only a signed-in user can do this.");
  if (principal.audience !== undefined && principal.audience !== p.issuer) {
    throw new ForbiddenError("An app's token cannot manage the account's apps.");
  }
  if (principal.realmId.toLowerCase() !== p.realmId) throw new NotFoundError("No such app.");
  return principal;
}

/** What the user's clients hold: consents and live grants, by client id. */
async function heldBy(p: Provider, userId: string, onlyClient?: string): Promise<Map<string, Held>> {
  const { sql, storage } = p.ctx;
  const held = new Map<string, Held>();
  const entry = (clientId: string, at: number): Held => {
    let found = held.get(clientId);
    if (found === undefined) {
      found = { clientId, scopes: new Set(), grantedAt: at, lastUsedAt: null, sessionIds: [] };
      held.set(clientId, found);
    }
    return found;
  };
  const consents = await sql.query<{ client_id: string; scopes: string[]; granted_at: Date | string }>(
    `SELECT client_id, scopes, granted_at FROM oidc_provider_consents
     WHERE realm_id = $1 AND user_id = $2 AND ($3::text IS NULL OR client_id = $3) ORDER BY client_id LIMIT 1000`,
    [p.realmId, userId, onlyClient ?? null],
  );
  for (const row of consents) {
    const found = entry(row.client_id, new Date(row.granted_at).getTime());
    for (const scope of row.scopes) found.scopes.add(scope);
  }
  // Live grants: the sessions the token endpoint opened that are still active (bounded by them).
  const live = new Map(
    (await storage.sessions.listActiveForUser(userId)).map((session) => [session.id, session]),
  );
  if (live.size > 0) {
    const grants = await sql.query<
      { session_id: string; client_id: string; scopes: string[]; created_at: Date | string }
    >(
      `SELECT session_id, client_id, scopes, created_at FROM oidc_provider_grants
       WHERE realm_id = $1 AND user_id = $2 AND session_id = ANY($3::uuid[])
         AND ($4::text IS NULL OR client_id = $4)`,
      [p.realmId, userId, [...live.keys()], onlyClient ?? null],
    );
    for (const row of grants) {
      const createdAt = new Date(row.created_at).getTime();
      const found = entry(row.client_id, createdAt);
      found.grantedAt = Math.min(found.grantedAt, createdAt);
      for (const scope of row.scopes) found.scopes.add(scope);
      found.sessionIds.push(row.session_id);
      const seen = live.get(row.session_id)!.lastSeenAt.getTime();
      found.lastUsedAt = Math.max(found.lastUsedAt ?? seen, seen);
    }
  }
  return held;
}

/** The apps-with-access routes. */
export function appsRoutes(p: Provider): RouteInstaller {
  return documented((app) => {
    app.get(PATH, async (c) => {
      const principal = await caller(p, c);
      const held = await heldBy(p, principal.userId);
      const apps = [];
      for (const entry of [...held.values()].sort((a, b) => a.clientId.localeCompare(b.clientId))) {
        const client = await p.ctx.storage.clients.getByClientId(p.realmId, entry.clientId);
        apps.push({
          clientId: entry.clientId,
          clientName: client?.clientName ?? entry.clientId,
          scopes: [...entry.scopes].sort(),
          grantedAt: new Date(entry.grantedAt).toISOString(),
          lastUsedAt: entry.lastUsedAt === null ? null : new Date(entry.lastUsedAt).toISOString(),
          activeSessions: entry.sessionIds.length,
        });
      }
      c.header("Cache-Control", "no-store");
      return c.json({ apps });
    });

    app.delete(`${PATH}/:clientId`, async (c) => {
      const principal = await caller(p, c);
      const parsed = v.safeParse(ClientIdParamSchema, c.req.param("clientId") ?? "");
      if (!parsed.success) throw new NotFoundError("No such app.");
      const clientId = parsed.output;
      const client = await p.ctx.storage.clients.getByClientId(p.realmId, clientId);
      if (client === null) throw new NotFoundError("No such app.");
      const userId = principal.userId.toLowerCase();
      const now = p.ctx.clock.now();
      const ended = await p.ctx.admin.mutate(principal, async ({ tx, emit }) => {
        // Under the realm's audit lock: concurrent identical revocations find nothing left.
        const consents = await tx.pluginSql.query<{ scopes: string[] }>(
          `DELETE FROM oidc_provider_consents WHERE realm_id = $1 AND user_id = $2 AND client_id = $3
           RETURNING scopes`,
          [p.realmId, userId, clientId],
        );
        const grants = await tx.pluginSql.query<{ session_id: string }>(
          `SELECT session_id FROM oidc_provider_grants WHERE realm_id = $1 AND user_id = $2 AND client_id = $3
           ORDER BY created_at DESC LIMIT 10000`,
          [p.realmId, userId, clientId],
        );
        const sessionIds: string[] = [];
        let refreshTokensRevoked = 0;
        for (const { session_id } of grants) {
          if (!await tx.sessions.revoke(session_id, { userId })) continue;
          sessionIds.push(session_id);
          refreshTokensRevoked += await tx.refreshTokens.revokeForSession(session_id);
        }
        if (consents.length === 0 && sessionIds.length === 0) return { value: [], audit: null };
        await emit({
          kind: APP_ACCESS_REVOKED_EVENT,
          occurredAt: now,
          realmId: p.realmId,
          userId,
          data: { clientId, consentRevoked: consents.length > 0, sessionsEnded: sessionIds.length },
        });
        return {
          value: sessionIds,
          audit: {
            action: "oidc.app_access.revoke",
            target: userId,
            before: { clientId, scopes: consents[0]?.scopes ?? [], sessions: sessionIds.length },
            after: { clientId, consentRevoked: consents.length > 0, sessionIds, refreshTokensRevoked },
          },
        };
      });
      await p.ctx.sessions.announceEnded(ended.map((id) => ({ id, endedAt: now })));
      return c.body(null, 204);
    });
  }, OPERATIONS);
}
