/**
 * Impersonation stays inside the actor's fence for its whole life (issue 24): a token carrying
 * `act` may move to another organization (`POST /auth/switch-organization`, or `POST
 * /auth/refresh` with `orgId`) only where the actor could start that same impersonation, that is
 * where the start's target check passes with the actor acting in that organization:
 *
 * - the actor is an active user of the realm holding `svc:global:impersonate`, or holding
 *   `svc:org:impersonate` in that very organization (of which they are a member);
 * - `orgId: null` (no organization) needs `svc:global:impersonate`: an organization
 *   administrator never reaches the target's realm-wide token;
 * - the target is still an active, non-break-glass member of the organization, holding no
 *   permission, `svc:` or a plugin's, the actor lacks there (`requireAuthorityOver`, the start's
 *   check: the target's whole reach within the actor's).
 *
 * Anything else is 403 `impersonation_forbidden`, before the route runs, and nothing changes:
 * the refresh token is not rotated, no token is minted. Requests that are not under
 * impersonation (or whose refresh token is unknown, used, revoked or expired: the route answers
 * those, reuse detection first) pass untouched.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { evaluate } from "../../core/authz/mod.ts";
import { IMPERSONATE_GLOBAL, IMPERSONATE_ORG } from "../../core/definitions/permissions/impersonation.ts";
import { isUuid } from "../../core/ids.ts";
import type { SubjectSnapshots } from "../../core/snapshots/service.ts";
import { hashRefreshToken, isRefreshTokenShape } from "../../core/tokens/refresh.ts";
import type { Impersonation } from "../../core/storage/impersonations.ts";
import type { Storage } from "../../core/storage/storage.ts";
import type { RouteInstaller } from "../app.ts";
import { requireAuthorityOver, SubjectBeyondAuthorityError } from "../admin/authority.ts";
import { ImpersonationForbiddenError } from "../admin/kit.ts";
import type { SvcEnv } from "../request-id.ts";
import { readCookie, REFRESH_COOKIE } from "./cookies.ts";
import { requirePrincipal } from "./principal.ts";

/** What the fence reads. */
export interface ImpersonationOrgFenceDeps {
  readonly storage: Storage;
  readonly snapshots: SubjectSnapshots;
  /** The permissions the installed plugins declare (part of the authority rule's universe). */
  readonly pluginPermissions?: readonly string[];
}

/**
 * Whether the actor of `impersonation` could impersonate its target in `orgId` (null: acting in
 * no organization). The one place the start's target check is called for a move.
 */
export async function actorMayImpersonateIn(
  deps: ImpersonationOrgFenceDeps,
  impersonation: Pick<Impersonation, "realmId" | "actorId" | "targetId">,
  orgId: string | null,
): Promise<boolean> {
  const { storage, snapshots } = deps;
  const { realmId, actorId, targetId } = impersonation;
  const [actor, target] = await Promise.all([storage.users.get(actorId), storage.users.get(targetId)]);
  if (actor === null || actor.realmId !== realmId || actor.status !== "Active") return false;
  if (target === null || target.realmId !== realmId || target.status !== "Active" || target.isBreakGlass) {
    return false;
  }
  const actorIsMember = orgId !== null && await storage.organizations.isMember(orgId, actorId);
  // The actor acts in the organization when a member of it (as a start there would), else realm-wide.
  const actorOrgId = actorIsMember ? orgId : null;
  const subject = await snapshots.get(actorId, actorOrgId);
  if (subject === null || subject.realmId !== realmId) return false;
  const global = evaluate(subject.subject, { permission: IMPERSONATE_GLOBAL }).decision === "Allowed";
  const inOrg = actorIsMember &&
    evaluate(subject.subject, { permission: IMPERSONATE_ORG, resourceOrgId: orgId }).decision === "Allowed";
  if (!global && !inOrg) return false;
  const targetOrgIds = (await storage.organizations.listOrgsOfUser(targetId)).map((org) => org.id);
  if (orgId !== null && !targetOrgIds.some((id) => id.toLowerCase() === orgId.toLowerCase())) return false;
  // The start's target check: the target's whole reach is within the actor's where it acts.
  const scope = {
    principal: { userId: actorId, realmId, orgId: actorOrgId, sessionId: null },
    global,
    orgId: inOrg ? orgId : null,
  };
  try {
    await requireAuthorityOver(deps, scope, { kind: "User", id: targetId });
    return true;
  } catch (error) {
    if (error instanceof SubjectBeyondAuthorityError) return false;
    throw error;
  }
}

/**
 * The middleware of {@link impersonationOrgFence}: refuses the move of an impersonation to an
 * organization its actor could not impersonate the target in.
 */
export function impersonationOrgFence(deps: ImpersonationOrgFenceDeps): RouteInstaller {
  const refuseUnlessAllowed = async (
    impersonation: Pick<Impersonation, "realmId" | "actorId" | "targetId">,
    orgId: string | null,
  ) => {
    if (!await actorMayImpersonateIn(deps, impersonation, orgId)) throw new ImpersonationForbiddenError();
  };

  const switchOrganization: MiddlewareHandler<SvcEnv> = async (c, next) => {
    if (c.req.method === "POST") {
      const principal = await requirePrincipal(c);
      const act = principal.act;
      const orgId = (await jsonBody(c))?.orgId;
      // A malformed body is the route's to answer (400).
      if (act && isUuid(orgId)) {
        await refuseUnlessAllowed(
          { realmId: principal.realmId, actorId: act.actorId, targetId: principal.userId },
          orgId.toLowerCase(),
        );
      }
    }
    await next();
  };

  const refresh: MiddlewareHandler<SvcEnv> = async (c, next) => {
    if (c.req.method === "POST") {
      const body = await jsonBody(c);
      const orgId = body?.orgId;
      if (orgId === null || isUuid(orgId)) {
        const token = body?.refreshToken ?? readCookie(c, REFRESH_COOKIE);
        const impersonation = await impersonationOfRefreshToken(deps.storage, token);
        if (impersonation !== null) {
          await refuseUnlessAllowed(impersonation, orgId === null ? null : orgId.toLowerCase());
        }
      }
    }
    await next();
  };

  return (app) => {
    app.use("/auth/switch-organization", switchOrganization);
    app.use("/auth/refresh", refresh);
  };
}

/** The impersonation of a live refresh token's session, or null (no impersonation, or not live). */
async function impersonationOfRefreshToken(
  storage: Storage,
  token: unknown,
): Promise<Impersonation | null> {
  if (!isRefreshTokenShape(token)) return null;
  const record = await storage.refreshTokens.get(hashRefreshToken(token));
  // Used, revoked or expired: the route answers (a replay revokes the family first).
  if (record === null || record.usedAt !== null || record.revokedAt !== null) return null;
  const session = await storage.sessions.get(record.sessionId);
  if (session === null || session.impersonationId === null) return null;
  const impersonation = await storage.impersonations.get(session.impersonationId);
  // An impersonation gone or over is refused by the route (the family ends there).
  if (impersonation === null || impersonation.realmId !== record.realmId) return null;
  return impersonation;
}

/** The JSON body as an object, or null when there is none or it is not JSON (the route answers). */
async function jsonBody(c: Context<SvcEnv>): Promise<Record<string, unknown> | null> {
  if (c.req.header("Content-Type") === undefined) return null;
  try {
    const data: unknown = JSON.parse(await c.req.text());
    return typeof data === "object" && data !== null && !Array.isArray(data)
      ? data as Record<string, unknown>
      : null;
  } catch {
    return null;
  }
}
