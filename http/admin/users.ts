/**
 * The admin API of users (issue 11), realm from the caller's token:
 *
 * | Method | Path | Body → answer | Fence |
 * |---|---|---|---|
 * | POST | `/svc-admin/users` | `{email, displayName?, password?, emailVerified?, attributes?, orgId?}` → 201 user | manage |
 * | GET | `/svc-admin/users?q=&status=&orgId=&offset=&limit=` | → `{items, offset, limit, total}` | read |
 * | GET | `/svc-admin/users/{userId}?expand=organizations` | → user, `ETag` | read |
 * | PATCH | `/svc-admin/users/{userId}` | `{displayName?, attributes?, email?}` (`If-Match`) → user, `ETag` | manage |
 * | POST | `/svc-admin/users/{userId}/suspend` | `{reason}` → suspension report | manage |
 * | POST | `/svc-admin/users/{userId}/reactivate` | `{reason?}` → user | manage |
 * | GET | `/svc-admin/users/{userId}/sessions` | → `{items, offset, limit, total}` | read |
 * | GET | `/svc-admin/users/{userId}/security-events?limit=&before=` | → `{events}` (newest first) | read |
 * | DELETE | `/svc-admin/users/{userId}/sessions/{sessionId}` | → 204 | manage |
 * | DELETE | `/svc-admin/users/{userId}/sessions` | → `{userId, sessionsEnded, refreshTokensRevoked}` | manage |
 * | POST | `/svc-admin/users/{userId}/factors/reset` | `{factors?, reason}` → `{userId, factors, removed}` | manage |
 *
 * Read: `svc:global:users-read` or `-manage` (the realm), `svc:org:users-read` or `-manage` (the
 * members of the caller's organization; anyone else is 404). Manage: `svc:global:users-manage`,
 * or `svc:org:users-manage` for users who belong to the caller's organization only; either way
 * only users within the caller's authority (`./authority.ts`: everything they hold, in any
 * context, the caller holds there). Anyone else is 403 (`user_outside_organization` for an
 * organization admin, `subject_beyond_authority` for a realm admin): nobody takes over an
 * account that reaches further than they do.
 *
 * Every mutation is one audited transaction (`adminMutation`) emitting a `user.*` event; the
 * user's snapshots are evicted after commit; ended sessions are announced, so their access
 * tokens stop at once on every instance. A request that changes nothing (an identical PATCH,
 * suspending a suspended user with nothing left to end, reactivating an active user, ending the
 * sessions of a user who has none, resetting factors the user does not have) answers as before
 * but writes no audit entry, emits no event and sends no mail.
 *
 * @module
 */
import type { Context } from "hono";
import * as v from "valibot";
import {
  type RemovedFactors,
  removeFactors,
  RESETTABLE_FACTORS,
  USER_FACTORS_RESET_EVENT,
} from "../../core/accounts/factor-reset.ts";
import { BreakGlassManagedError } from "../../core/break-glass/guard.ts";
import { reactivateUser, suspendUser } from "../../core/accounts/suspension.ts";
import { mailTexts } from "../../core/mail/catalogue.ts";
import { mailLocaleOf } from "../../core/mail/messages.ts";
import {
  USERS_MANAGE_GLOBAL,
  USERS_MANAGE_ORG,
  USERS_READ_GLOBAL,
  USERS_READ_ORG,
} from "../../core/definitions/permissions/users.ts";
import { ConflictError, SvcError } from "../../core/errors.ts";
import { isUuid } from "../../core/ids.ts";
import { endAllSessionsOfUser } from "../../core/sessions/service.ts";
import type { EndedSession } from "../../core/sessions/ended.ts";
import { normalizeEmail, type User } from "../../core/storage/users.ts";
import type { Storage } from "../../core/storage/storage.ts";
import type { AppDeps } from "../app.ts";
import { auditActor } from "../auth/audit-actor.ts";
import { covers, fence, type FenceScope } from "../auth/fence.ts";
import type { SvcEnv } from "../request-id.ts";
import { parseBody } from "../validate.ts";
import { documented, errorResponses, type OperationDoc } from "../openapi/operation.ts";
import { SecurityEventSchema, SecurityEventsQuerySchema } from "../routes/audit.ts";
import { activityFilterOf, requireAuthorityOver } from "./authority.ts";
import type { AdminRouteDeps } from "./deps.ts";
import {
  adminMutation,
  asConflict,
  changesNothing,
  checkVersion,
  hidden,
  ifMatchVersion,
  listBody,
  listBodyOf,
  pageOf,
  PageQuerySchema,
  parseQuery,
  PreconditionFailedError,
  refuseUnderImpersonation,
  setVersionTag,
} from "./kit.ts";
import {
  AdminSessionListSchema,
  adminSessionView,
  AdminUserListSchema,
  AdminUserSchema,
  adminUserView,
  CreateUserSchema,
  FactorResetSchema,
  ListUsersQuerySchema,
  ReactivateUserSchema,
  ReadUserQuerySchema,
  ResetFactorsSchema,
  SessionsEndedSchema,
  SuspendUserSchema,
  SuspensionSchema,
  UpdateUserSchema,
  userAuditView,
} from "./user-schemas.ts";

/** Event kinds of the admin user routes (the `user.*` family, in the user's security ledger). */
export const USER_ADMIN_EVENTS = {
  created: "user.created",
  updated: "user.updated",
  sessionsEnded: "user.sessions_ended",
  factorsReset: USER_FACTORS_RESET_EVENT,
} as const;

const READ = { global: [USERS_READ_GLOBAL, USERS_MANAGE_GLOBAL], org: [USERS_READ_ORG, USERS_MANAGE_ORG] };
const MANAGE = { global: [USERS_MANAGE_GLOBAL], org: [USERS_MANAGE_ORG] };

/** An organization admin asked to manage a user who reaches beyond the organization. */
export class UserOutsideOrganizationError extends SvcError {
  constructor() {
    super(
      "user_outside_organization",
      "This user belongs to more than your organization; a realm administrator manages them.",
      403,
    );
  }
}

/** A suspension of the caller's own account (it would lock the caller out). */
export class SelfSuspensionError extends SvcError {
  constructor() {
    super("cannot_suspend_self", "You cannot suspend your own account.", 409);
  }
}

/**
 * The user `userId` if the scope sees them: a user of the caller's realm, and for an org scope a
 * member of the caller's organization. Anything else (an invalid id too) is 404.
 */
export async function visibleUser(storage: Storage, scope: FenceScope, userId: string): Promise<User> {
  const user = isUuid(userId) ? await storage.users.get(userId) : null;
  if (user === null || user.realmId !== scope.principal.realmId.toLowerCase()) throw hidden("user");
  if (
    !scope.global && (scope.orgId === null || !await storage.organizations.isMember(scope.orgId, user.id))
  ) {
    throw hidden("user");
  }
  return user;
}

/**
 * The user `userId` if the scope may manage them: visible, for an org scope belonging to no
 * other organization, and within the caller's authority (`requireAuthorityOver`: everything the
 * user holds in any context, realm-wide or pinned, svc's and the plugins' permissions, the caller
 * holds there). Refusals: 403 `user_outside_organization` for an org scope,
 * `subject_beyond_authority` for a realm scope. Called before the mutation's transaction (the
 * grants are read outside it); the mutation checks again inside that the user still is visible.
 */
async function manageableUser(deps: AdminRouteDeps, scope: FenceScope, userId: string): Promise<User> {
  const user = await visibleUser(deps.storage, scope, userId);
  if (!scope.global) {
    const orgs = await deps.storage.organizations.listOrgsOfUser(user.id);
    if (orgs.some((org) => org.id.toLowerCase() !== scope.orgId?.toLowerCase())) {
      throw new UserOutsideOrganizationError();
    }
  }
  await requireAuthorityOver(
    deps,
    scope,
    { kind: "User", id: user.id },
    scope.global ? undefined : () => new UserOutsideOrganizationError(),
  );
  return user;
}

/** The `userId` path parameter (any string: an id that is not a UUID is simply not found). */
function userIdOf(c: Context<SvcEnv>): string {
  return c.req.param("userId") ?? "";
}

/** An optional JSON body: `{}` when the request has none. */
async function optionalBody<S extends v.GenericSchema>(
  c: Context<SvcEnv>,
  schema: S,
): Promise<v.InferOutput<S>> {
  const length = c.req.header("Content-Length");
  const hasBody = c.req.header("Content-Type") !== undefined || (length !== undefined && length !== "0");
  return hasBody ? await parseBody(c, schema) : v.parse(schema, {});
}

const TAGS = ["Admin: users"];
const userParam = { userId: "The user's id." };

// Query docs take the validating schemas' entries (`OperationDoc.query` is a plain object schema;
// the handlers validate with the strict ones).
const OPERATIONS: OperationDoc[] = [
  {
    method: "POST",
    path: "/svc-admin/users",
    summary: "Create a user",
    description: "With a password: one argon2id credential. Without: a password-less user, who can be " +
      "invited (`POST /svc-admin/users/invite`). With `orgId` the user becomes a member. Realm-wide only: " +
      "organization admins invite people instead.",
    tags: TAGS,
    permissions: MANAGE.global,
    body: CreateUserSchema,
    responses: {
      201: {
        description: "Created",
        body: AdminUserSchema,
        headers: { ETag: "The user's version", Location: "The user's URL" },
      },
      ...errorResponses(400, 401, 403, 404, 409),
    },
  },
  {
    method: "GET",
    path: "/svc-admin/users",
    summary: "List and search users",
    description: "By creation time, then id. An org admin lists the members of its organization.",
    tags: TAGS,
    permissions: READ.global.concat(READ.org),
    query: v.object(ListUsersQuerySchema.entries),
    responses: {
      200: { description: "A page", body: AdminUserListSchema },
      ...errorResponses(400, 401, 403),
    },
  },
  {
    method: "GET",
    path: "/svc-admin/users/:userId",
    summary: "Read a user",
    tags: TAGS,
    permissions: READ.global.concat(READ.org),
    params: userParam,
    query: v.object(ReadUserQuerySchema.entries),
    responses: {
      200: { description: "The user", body: AdminUserSchema, headers: { ETag: "The user's version" } },
      ...errorResponses(400, 401, 403, 404),
    },
  },
  {
    method: "PATCH",
    path: "/svc-admin/users/:userId",
    summary: "Change a user",
    description: "Display name, attribute bag (replaced), email (re-verified: `emailVerified` becomes " +
      "false and a verification link goes to the new address). An organization administrator's email " +
      "change is pending (202) until the new address confirms it through a mailed link; a taken address " +
      "is told to its owner by mail, never to the caller. A break-glass account's email never changes " +
      "(403 `break_glass_managed`). `If-Match` makes the write conditional.",
    tags: TAGS,
    permissions: MANAGE.global.concat(MANAGE.org),
    params: userParam,
    body: UpdateUserSchema,
    responses: {
      200: { description: "The user", body: AdminUserSchema, headers: { ETag: "The user's version" } },
      202: {
        description: "The user, the email change pending confirmation (organization administrators)",
        body: AdminUserSchema,
        headers: { ETag: "The user's version" },
      },
      ...errorResponses(400, 401, 403, 404, 409, 412),
    },
  },
  {
    method: "POST",
    path: "/svc-admin/users/:userId/suspend",
    summary: "Suspend a user",
    description: "Status `Suspended`; every session ends at once on every instance, refresh tokens and " +
      "API keys are revoked; every sign-in path refuses the user until reactivated.",
    tags: TAGS,
    permissions: MANAGE.global.concat(MANAGE.org),
    params: userParam,
    body: SuspendUserSchema,
    responses: {
      200: { description: "What the suspension ended", body: SuspensionSchema },
      ...errorResponses(400, 401, 403, 404, 409),
    },
  },
  {
    method: "POST",
    path: "/svc-admin/users/:userId/reactivate",
    summary: "Reactivate a user",
    description: "Status `Active`. API keys revoked by the suspension stay revoked.",
    tags: TAGS,
    permissions: MANAGE.global.concat(MANAGE.org),
    params: userParam,
    body: ReactivateUserSchema,
    bodyRequired: false,
    responses: {
      200: { description: "The user", body: AdminUserSchema, headers: { ETag: "The user's version" } },
      ...errorResponses(400, 401, 403, 404),
    },
  },
  {
    method: "GET",
    path: "/svc-admin/users/:userId/sessions",
    summary: "List a user's active sessions",
    description: "Most recently seen first.",
    tags: TAGS,
    permissions: READ.global.concat(READ.org),
    params: userParam,
    query: v.object(PageQuerySchema.entries),
    responses: {
      200: { description: "A page", body: AdminSessionListSchema },
      ...errorResponses(400, 401, 403, 404),
    },
  },
  {
    method: "GET",
    path: "/svc-admin/users/:userId/security-events",
    summary: "A user's security events, newest first",
    description: "The user's security ledger (sign-ins, factor changes, lockouts…), as the user sees it " +
      "at `GET /profile/security-events`; `before` pages back.",
    tags: TAGS,
    permissions: READ.global.concat(READ.org),
    params: userParam,
    query: SecurityEventsQuerySchema,
    responses: {
      200: { description: "The events", body: v.object({ events: v.array(SecurityEventSchema) }) },
      ...errorResponses(400, 401, 403, 404),
    },
  },
  {
    method: "DELETE",
    path: "/svc-admin/users/:userId/sessions/:sessionId",
    summary: "End one session of a user",
    description: "Its refresh tokens are revoked and its access tokens stop at once.",
    tags: TAGS,
    permissions: MANAGE.global.concat(MANAGE.org),
    params: { ...userParam, sessionId: "The session's id." },
    responses: { 204: { description: "Ended" }, ...errorResponses(401, 403, 404) },
  },
  {
    method: "DELETE",
    path: "/svc-admin/users/:userId/sessions",
    summary: "End every session of a user",
    tags: TAGS,
    permissions: MANAGE.global.concat(MANAGE.org),
    params: userParam,
    responses: {
      200: { description: "What ended", body: SessionsEndedSchema },
      ...errorResponses(401, 403, 404),
    },
  },
  {
    method: "POST",
    path: "/svc-admin/users/:userId/factors/reset",
    summary: "Reset a user's factors",
    description: `Removes the named factors (${RESETTABLE_FACTORS.join(", ")}; all when omitted); the ` +
      "reason is audited, `user.factors_reset` is recorded in the user's security ledger and the user is " +
      "told by mail. The password is kept.",
    tags: TAGS,
    permissions: MANAGE.global.concat(MANAGE.org),
    params: userParam,
    body: ResetFactorsSchema,
    responses: {
      200: { description: "What was removed", body: FactorResetSchema },
      ...errorResponses(400, 401, 403, 404),
    },
  },
];

/** The admin user routes. */
export function adminUserRoutes(deps: AdminRouteDeps) {
  const { storage, snapshots } = deps;
  return documented((app, appDeps: AppDeps) => {
    const now = () => appDeps.clock.now();

    app.post("/svc-admin/users", async (c) => {
      // Realm-wide only: a 409 for an address taken elsewhere in the realm would tell an
      // organization admin that it exists outside their organization. They invite instead, which
      // answers alike whoever owns the address.
      const scope = await fence(c, snapshots, { global: MANAGE.global }, "You may not create users.");
      const body = await parseBody(c, CreateUserSchema);
      const orgId = body.orgId?.toLowerCase() ?? null;
      refuseUnderImpersonation(scope.principal);
      // Hashing is slow: before the transaction, which then holds its locks briefly.
      const hash = body.password === undefined ? null : await deps.passwords.hash(body.password);
      const { value: user } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        if (orgId !== null) await visibleOrganization(tx, scope, orgId);
        const created = await tx.users.create({
          realmId: scope.principal.realmId,
          email: body.email,
          displayName: body.displayName ?? null,
          emailVerified: body.emailVerified ?? false,
          attributes: body.attributes ?? {},
        }).catch(asConflict);
        if (hash !== null) await tx.passwordCredentials.replace(created.id, hash);
        if (orgId !== null) await tx.organizations.addMember(orgId, created.id);
        // The password credential bumped nothing on the row, but re-read for the stored version.
        const user = (await tx.users.get(created.id)) ?? created;
        await emit({
          kind: USER_ADMIN_EVENTS.created,
          occurredAt: now(),
          realmId: user.realmId,
          orgId,
          userId: user.id,
          data: { orgId, passwordless: hash === null },
        });
        return {
          value: user,
          audit: {
            action: "user.create",
            target: user.id,
            orgId,
            after: { ...userAuditView(user), orgId, passwordless: hash === null },
          },
        };
      });
      setVersionTag(c, user.version);
      c.header("Location", `/svc-admin/users/${user.id}`);
      return c.json(adminUserView(user), 201);
    });

    app.get("/svc-admin/users", async (c) => {
      const scope = await fence(c, snapshots, READ, "You may not read users.");
      const query = parseQuery(c, ListUsersQuerySchema);
      const page = pageOf(query);
      const orgId = query.orgId?.toLowerCase() ?? (scope.global ? null : scope.orgId);
      if (orgId !== null) await visibleOrganization(storage, scope, orgId);
      const found = await storage.users.search(scope.principal.realmId, {
        q: query.q,
        status: query.status,
        memberOf: orgId ?? undefined,
        offset: page.offset,
        limit: page.limit,
      });
      const pending = await invitationsPending(storage, found.items.map((u) => u.id));
      return c.json(
        listBody(
          found.items.map((u) => ({ ...adminUserView(u), invitationPending: pending.has(u.id) })),
          page,
          found.total,
        ),
      );
    });

    app.get("/svc-admin/users/:userId", async (c) => {
      const scope = await fence(c, snapshots, READ, "You may not read users.");
      const query = parseQuery(c, ReadUserQuerySchema);
      const user = await visibleUser(storage, scope, userIdOf(c));
      let organizations;
      if (query.expand === "organizations") {
        organizations = (await storage.organizations.listOrgsOfUser(user.id))
          .filter((org) => scope.global || org.id.toLowerCase() === scope.orgId?.toLowerCase());
      }
      const pending = await invitationsPending(storage, [user.id]);
      setVersionTag(c, user.version);
      return c.json({ ...adminUserView(user, organizations), invitationPending: pending.has(user.id) });
    });

    app.patch("/svc-admin/users/:userId", async (c) => {
      const scope = await fence(c, snapshots, MANAGE, "You may not change users.");
      const expected = ifMatchVersion(c);
      const body = await parseBody(c, UpdateUserSchema);
      const target = await manageableUser(deps, scope, userIdOf(c));
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const before = await tx.users.get(target.id);
        if (before === null) throw hidden("user");
        checkVersion(expected, before.version);
        const email = body.email === undefined ? undefined : normalizeEmail(body.email);
        const emailRequested = email !== undefined && email !== before.email;
        if (emailRequested && before.isBreakGlass) throw new BreakGlassManagedError("email_change");
        const asked = { displayName: body.displayName, attributes: body.attributes, email };
        if (changesNothing(before, asked)) {
          return { value: { user: before, emailChanged: false, pendingEmail: null }, audit: null };
        }
        // An organization administrator's change is pending until the new address confirms it
        // (requestEmailChange, after commit): the answer never tells whether the address is taken.
        const pendingEmail = emailRequested && !scope.global ? email : null;
        const emailChanged = emailRequested && pendingEmail === null;
        let after: User;
        try {
          after = await tx.users.update(before.id, {
            displayName: body.displayName,
            attributes: body.attributes,
            ...(emailChanged ? { email, emailVerified: false } : {}),
          }, { expectedVersion: expected });
        } catch (error) {
          if (error instanceof ConflictError && error.details?.reason === "user_version_stale") {
            throw new PreconditionFailedError();
          }
          asConflict(error);
        }
        const fields = [
          ...(body.displayName !== undefined ? ["displayName"] : []),
          ...(body.attributes !== undefined ? ["attributes"] : []),
          ...(emailChanged ? ["email"] : []),
        ];
        await emit({
          kind: USER_ADMIN_EVENTS.updated,
          occurredAt: now(),
          realmId: after.realmId,
          orgId: null,
          userId: after.id,
          data: { fields },
        });
        return {
          value: { user: after, emailChanged, pendingEmail },
          audit: {
            action: "user.update",
            target: after.id,
            before: userAuditView(before),
            after: { ...userAuditView(after), ...(pendingEmail !== null ? { pendingEmail } : {}) },
          },
        };
      });
      await snapshots.invalidateUser(value.user.id);
      // The existing flow: an `everify+svc` link to the new address (the old address's links die).
      if (value.emailChanged) await deps.accounts.requestEmailVerification(value.user.id);
      setVersionTag(c, value.user.version);
      if (value.pendingEmail !== null) {
        await deps.accounts.requestEmailChange(
          value.user.id,
          value.pendingEmail,
          mailLocaleOf(c.req.header("Accept-Language")),
        );
        // 202: the address changes once confirmed (the same answer whether it is free or taken).
        return c.json(adminUserView(value.user), 202);
      }
      return c.json(adminUserView(value.user));
    });

    app.post("/svc-admin/users/:userId/suspend", async (c) => {
      const scope = await fence(c, snapshots, MANAGE, "You may not suspend users.");
      const body = await parseBody(c, SuspendUserSchema);
      const target = await manageableUser(deps, scope, userIdOf(c));
      if (target.id === scope.principal.userId.toLowerCase()) throw new SelfSuspensionError();
      refuseUnderImpersonation(scope.principal);
      const report = await suspendUser(
        { storage, clock: appDeps.clock, publisher: deps.publisher, sessions: deps.sessions, snapshots },
        scope.principal.realmId,
        target.id,
        auditActor(scope.principal),
        { reason: body.reason, authorize: (tx) => stillVisible(tx, scope, target.id) },
      );
      return c.json(report);
    });

    app.post("/svc-admin/users/:userId/reactivate", async (c) => {
      const scope = await fence(c, snapshots, MANAGE, "You may not reactivate users.");
      const body = await optionalBody(c, ReactivateUserSchema);
      const target = await manageableUser(deps, scope, userIdOf(c));
      refuseUnderImpersonation(scope.principal);
      const user = await reactivateUser(
        { storage, clock: appDeps.clock, publisher: deps.publisher, snapshots },
        scope.principal.realmId,
        target.id,
        auditActor(scope.principal),
        { reason: body.reason, authorize: (tx) => stillVisible(tx, scope, target.id) },
      );
      setVersionTag(c, user.version);
      return c.json(adminUserView(user));
    });

    app.get("/svc-admin/users/:userId/sessions", async (c) => {
      const scope = await fence(c, snapshots, READ, "You may not read users.");
      const page = pageOf(parseQuery(c, PageQuerySchema));
      const user = await visibleUser(storage, scope, userIdOf(c));
      const orgContext = await activityFilterOf(deps, scope, user.id);
      const sessions = await storage.sessions.listActiveForUser(user.id, { orgContext });
      return c.json(listBodyOf(sessions, page, adminSessionView));
    });

    app.get("/svc-admin/users/:userId/security-events", async (c) => {
      const scope = await fence(c, snapshots, READ, "You may not read users.");
      const query = parseQuery(c, SecurityEventsQuerySchema);
      const user = await visibleUser(storage, scope, userIdOf(c));
      const events = await storage.securityEvents.listByUser(user.id, {
        orgContext: await activityFilterOf(deps, scope, user.id),
        limit: query.limit ?? 50,
        before: query.before === undefined ? undefined : new Date(query.before),
      });
      return c.json({
        events: events.map((e) => ({
          id: e.id,
          kind: e.kind,
          occurredAt: e.occurredAt.toISOString(),
          data: e.data,
          ipAddress: e.ipAddress,
          deviceDescription: e.deviceDescription,
        })),
      });
    });

    app.delete("/svc-admin/users/:userId/sessions/:sessionId", async (c) => {
      const scope = await fence(c, snapshots, MANAGE, "You may not end sessions.");
      const target = await manageableUser(deps, scope, userIdOf(c));
      const sessionId = c.req.param("sessionId") ?? "";
      const endedAt = now();
      await adminMutation(deps, scope, async ({ tx, emit }) => {
        await stillVisible(tx, scope, target.id);
        if (!isUuid(sessionId) || !await tx.sessions.revoke(sessionId, { userId: target.id })) {
          throw hidden("session");
        }
        const refreshTokensRevoked = await tx.refreshTokens.revokeForSession(sessionId);
        await emit({
          kind: USER_ADMIN_EVENTS.sessionsEnded,
          occurredAt: endedAt,
          realmId: target.realmId,
          orgId: null,
          userId: target.id,
          data: { sessionsEnded: 1, sessionIds: [sessionId.toLowerCase()] },
        });
        return {
          value: null,
          audit: {
            action: "user.session.end",
            target: target.id,
            after: { sessionId: sessionId.toLowerCase(), refreshTokensRevoked },
          },
        };
      });
      await deps.sessions?.announce([{ id: sessionId.toLowerCase(), endedAt }]);
      return c.body(null, 204);
    });

    app.delete("/svc-admin/users/:userId/sessions", async (c) => {
      const scope = await fence(c, snapshots, MANAGE, "You may not end sessions.");
      const target = await manageableUser(deps, scope, userIdOf(c));
      let ended: EndedSession[] = [];
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        await stillVisible(tx, scope, target.id);
        const result = await endAllSessionsOfUser(tx, target.id, now());
        ended = result.sessions;
        const report = {
          userId: target.id,
          sessionsEnded: result.sessions.length,
          refreshTokensRevoked: result.refreshTokensRevoked,
        };
        // Nothing left to end: a repeat, which changes nothing.
        if (report.sessionsEnded + report.refreshTokensRevoked === 0) return { value: report, audit: null };
        await emit({
          kind: USER_ADMIN_EVENTS.sessionsEnded,
          occurredAt: now(),
          realmId: target.realmId,
          orgId: null,
          userId: target.id,
          data: { sessionsEnded: report.sessionsEnded, sessionIds: ended.map((s) => s.id) },
        });
        return {
          value: report,
          audit: { action: "user.sessions.end_all", target: target.id, after: report },
        };
      });
      await deps.sessions?.announce(ended);
      return c.json(value);
    });

    app.post("/svc-admin/users/:userId/factors/reset", async (c) => {
      const scope = await fence(c, snapshots, MANAGE, "You may not reset factors.");
      const body = await parseBody(c, ResetFactorsSchema);
      const target = await manageableUser(deps, scope, userIdOf(c));
      const factors = RESETTABLE_FACTORS.filter((f) =>
        body.factors === undefined || body.factors.includes(f)
      );
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        await stillVisible(tx, scope, target.id);
        const removed = await removeFactors(tx, target.id, factors);
        // Nothing was there to remove: a repeat, which changes nothing (and tells the user nothing).
        if (!removedAny(removed)) {
          return { value: { report: { userId: target.id, factors, removed }, changed: false }, audit: null };
        }
        await emit({
          kind: USER_ADMIN_EVENTS.factorsReset,
          occurredAt: now(),
          realmId: target.realmId,
          orgId: null,
          userId: target.id,
          data: { factors, removed },
        });
        return {
          value: { report: { userId: target.id, factors, removed }, changed: true },
          audit: {
            action: "user.factors.reset",
            target: target.id,
            after: { factors, removed, reason: body.reason },
          },
        };
      });
      if (value.changed) {
        const locale = mailLocaleOf(c.req.header("Accept-Language"));
        await deps.accounts.notifyFactorsReset(
          target.id,
          factors.map((f) => mailTexts(locale).factorLabels[f]),
          locale,
        );
      }
      return c.json(value.report);
    });
  }, OPERATIONS);
}

/** The organization `orgId` of the caller's realm if the scope covers it, else 404. */
async function visibleOrganization(storage: Storage, scope: FenceScope, orgId: string): Promise<void> {
  if (!covers(scope, orgId)) throw hidden("organization");
  const org = isUuid(orgId) ? await storage.organizations.get(orgId) : null;
  if (org === null || org.realmId !== scope.principal.realmId.toLowerCase()) throw hidden("organization");
}

/** A factor reset removed something. */
function removedAny(removed: RemovedFactors): boolean {
  return removed.totp || removed.emailOtp || removed.passkeys > 0 || removed.recoveryCodes > 0;
}

/** Inside a mutation's transaction: the user still exists in the realm and is still visible. */
async function stillVisible(tx: Storage, scope: FenceScope, userId: string): Promise<void> {
  await visibleUser(tx, scope, userId);
}

/**
 * The users of `ids` (one page) whose invitation is still pending: no password, no passkey and an
 * unverified address (accepting sets a credential and verifies the address). One query per page.
 */
async function invitationsPending(storage: Storage, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await storage.pluginSql.query<{ id: string }>(
    `SELECT u.id FROM users u
     WHERE u.id = ANY($1::uuid[]) AND NOT u.email_verified
       AND NOT EXISTS (SELECT 1 FROM password_credentials p WHERE p.user_id = u.id)
       AND NOT EXISTS (SELECT 1 FROM passkey_credentials k WHERE k.user_id = u.id)`,
    [ids],
  );
  return new Set(rows.map((r) => r.id));
}
