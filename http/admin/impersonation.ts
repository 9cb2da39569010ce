/**
 * Impersonation (spec 3, 4.5; issue 12), under `/svc-admin/impersonation`:
 *
 * | Route | What |
 * |---|---|
 * | `POST /svc-admin/impersonation` `{targetUserId, reason, durationSeconds?}` | 201 `{impersonationId, accessToken, refreshToken, expiresAt…}`, or 202 `{impersonationId, status: "PendingConsent"}` under consent mode |
 * | `GET /svc-admin/impersonation?targetUserId=&state=current\|past\|all` | current and past impersonations (realm, or one target) |
 * | `GET /svc-admin/impersonation/{id}` | one impersonation |
 * | `POST /svc-admin/impersonation/{id}/token` | the actor fetches the token of an approved impersonation, once |
 * | `POST /svc-admin/impersonation/{id}/end` | ends it now: its sessions end and their tokens stop on every instance |
 * | `POST /svc-admin/impersonation/consent/approve` `{token}` | the target approves (signed in as themselves) |
 * | `GET`/`PUT /svc-admin/impersonation/consent` | the realm's consent mode |
 * | `GET`/`PUT /svc-admin/impersonation/consent/organizations/{orgId}` | an organization's consent mode |
 *
 * Starting is fenced by `svc:global:impersonate` or `svc:org:impersonate`, evaluated against the
 * target: an organization administrator impersonates members of their organization only (anyone
 * else is 404). Nobody impersonates themselves, a break-glass account, an inactive user, or a user
 * holding anything (in any context, svc's or a plugin's permissions) the actor does not hold
 * there (the authority rule, `./authority.ts`) (403 `impersonation_not_allowed` with the reason).
 * One current impersonation per actor: a second start is 409 `impersonation_in_progress`
 * (serialized per actor in storage, so concurrent starts give exactly one).
 *
 * The token is an access token of the target carrying `act: {sub: actor, imp: id}` whose `exp`
 * (and every refreshed one's) never passes the impersonation's end. Its session's `mfa` is
 * `Impersonation`: it never satisfies an MFA requirement of the target.
 *
 * Consent mode (the realm's, or any organization the target belongs to: the strictest wins):
 * the start is `PendingConsent` until the target approves through the single-use
 * `impconsent+svc` link mailed to them (valid as long as that token, 30 minutes); the window
 * starts at approval, and the actor fetches the token once.
 *
 * Every start (or consent request), approval, token issue and end is an admin chain entry with
 * actor, target and reason, and an `impersonation.*` event in the target's security events.
 *
 * @module
 */
import * as v from "valibot";
import { auditActor } from "../auth/audit-actor.ts";
import { covers, fence, type FenceScope } from "../auth/fence.ts";
import { requirePrincipal } from "../auth/principal.ts";
import { type AdminMutationContext, runAdminMutation } from "../../core/audit/mutation.ts";
import {
  IMPERSONATE_GLOBAL,
  IMPERSONATE_ORG,
  IMPERSONATION_MANAGE_GLOBAL,
  IMPERSONATION_MANAGE_ORG,
  IMPERSONATION_READ_GLOBAL,
  IMPERSONATION_READ_ORG,
} from "../../core/definitions/permissions/impersonation.ts";
import { ConflictError, ForbiddenError, SvcError } from "../../core/errors.ts";
import { isUuid, UUID_PATTERN } from "../../core/ids.ts";
import {
  mailLocaleOf,
  mailMessages,
  mailSettingsFromConfig,
  realmMessages,
} from "../../core/mail/messages.ts";
import { createOutboxTransport } from "../../core/mail/outbox.ts";
import { randomUuid } from "../../core/random.ts";
import type { SessionService } from "../../core/sessions/service.ts";
import { InvalidTokenError } from "../../core/tokens/errors.ts";
import type { TokenService } from "../../core/tokens/service.ts";
import {
  type Impersonation,
  type ImpersonationConsentSetting,
  isImpersonationCurrent,
} from "../../core/storage/impersonations.ts";
import { noStore } from "../security-headers.ts";
import { parseBody } from "../validate.ts";
import { documented, errorResponses, IsoTimeSchema, type OperationDoc } from "../openapi/operation.ts";
import { requireAuthorityOver } from "./authority.ts";
import type { AdminRouteDeps } from "./deps.ts";
import {
  adminMutation,
  hidden,
  listBody,
  listSchema,
  PAGE_QUERY_ENTRIES,
  pageOf,
  parseQuery,
  requireVisible,
} from "./kit.ts";

/** The session MFA level of an impersonation session (never counts as the target's MFA). */
export const MFA_LEVEL_IMPERSONATION = "Impersonation";

/** Event kinds of impersonation (spec 6, family `impersonation.*`). */
export const IMPERSONATION_EVENTS = {
  started: "impersonation.started",
  consentRequested: "impersonation.consent_requested",
  approved: "impersonation.approved",
  ended: "impersonation.ended",
} as const;

const uuid = (name: string) =>
  v.pipe(v.string(`${name} must be a string`), v.regex(UUID_PATTERN, `${name} must be a UUID`));

/** The body of `POST /svc-admin/impersonation`. */
export const StartImpersonationSchema = v.pipe(
  v.strictObject({
    targetUserId: uuid("targetUserId"),
    reason: v.pipe(
      v.string("reason is required: say why you impersonate this user"),
      v.trim(),
      v.minLength(1, "reason is required: say why you impersonate this user"),
      v.maxLength(1000, "reason must be at most 1000 characters"),
    ),
    durationSeconds: v.optional(
      v.pipe(
        v.number("durationSeconds must be a number"),
        v.integer("durationSeconds must be a whole number"),
        v.minValue(60, "durationSeconds must be at least 60"),
      ),
    ),
  }),
  v.title("StartImpersonation"),
);

/** The body of `POST /svc-admin/impersonation/consent/approve`. */
export const ApproveConsentSchema = v.pipe(
  v.strictObject({
    token: v.pipe(
      v.string("token must be a string"),
      v.minLength(1, "token must not be empty"),
      v.maxLength(8192),
    ),
  }),
  v.title("ApproveImpersonationConsent"),
);

/** The body of the consent-mode `PUT`s. */
export const ConsentModeSchema = v.pipe(
  v.strictObject({ consentRequired: v.boolean("consentRequired must be true or false") }),
  v.title("ImpersonationConsentModeChange"),
);

/** The query of `GET /svc-admin/impersonation`. */
export const ImpersonationListQuerySchema = v.object({
  ...PAGE_QUERY_ENTRIES,
  targetUserId: v.optional(v.pipe(uuid("targetUserId"), v.description("Only impersonations of this user."))),
  state: v.optional(
    v.pipe(
      v.picklist(["current", "past", "all"], 'state must be "current", "past" or "all"'),
      v.description("current: pending or active and unexpired; past: ended or expired (default all)."),
    ),
  ),
});

/** An impersonation as answered. */
export const ImpersonationViewSchema = v.pipe(
  v.object({
    id: v.string(),
    realmId: v.string(),
    actorId: v.string(),
    targetId: v.string(),
    orgId: v.nullable(v.string()),
    reason: v.string(),
    status: v.picklist(["PendingConsent", "Active", "Ended"]),
    current: v.pipe(v.boolean(), v.description("Not ended and not expired (expiry is never written).")),
    consentRequired: v.boolean(),
    durationSeconds: v.number(),
    createdAt: IsoTimeSchema,
    startedAt: v.nullable(IsoTimeSchema),
    expiresAt: IsoTimeSchema,
    endedAt: v.nullable(IsoTimeSchema),
    tokenIssued: v.boolean(),
  }),
  v.title("Impersonation"),
);

const TokenAnswerSchema = v.pipe(
  v.object({
    impersonationId: v.string(),
    accessToken: v.pipe(v.string(), v.description("The target's access token, carrying act: {sub, imp}.")),
    refreshToken: v.pipe(v.string(), v.description("Refreshes never pass the impersonation's end.")),
    tokenType: v.literal("Bearer"),
    expiresIn: v.number(),
    expiresAt: IsoTimeSchema,
  }),
  v.title("ImpersonationToken"),
);

const PendingAnswerSchema = v.pipe(
  v.object({
    impersonationId: v.string(),
    status: v.literal("PendingConsent"),
    consentExpiresAt: IsoTimeSchema,
  }),
  v.title("ImpersonationPendingConsent"),
);

const ConsentModeViewSchema = v.pipe(
  v.object({
    realmId: v.string(),
    orgId: v.nullable(v.string()),
    consentRequired: v.boolean(),
    updatedAt: v.nullable(IsoTimeSchema),
  }),
  v.title("ImpersonationConsentMode"),
);

/** Refusals of a start (403 `impersonation_not_allowed`, `details.reason` says which). */
export class ImpersonationNotAllowedError extends SvcError {
  constructor(reason: "self" | "break_glass" | "target_not_active" | "privileged_target" | "not_a_user") {
    const messages = {
      self: "Nobody impersonates themselves.",
      break_glass: "A break-glass account is never impersonated.",
      target_not_active: "The user is not active.",
      privileged_target: "The user holds permissions you do not hold.",
      not_a_user: "Only a signed-in administrator impersonates.",
    };
    super("impersonation_not_allowed", messages[reason], 403, { reason });
  }
}

/** What the impersonation routes need beyond the admin route deps. */
export interface ImpersonationRouteDeps extends AdminRouteDeps {
  readonly tokens: TokenService;
  /** Signs the impersonation session in (its tokens carry `act` and stop at the end). */
  readonly signIn: Pick<SessionService, "signIn">;
}

const IMPERSONATE = { global: [IMPERSONATE_GLOBAL], org: [IMPERSONATE_ORG] };
const READ = {
  global: [IMPERSONATE_GLOBAL, IMPERSONATION_READ_GLOBAL, IMPERSONATION_MANAGE_GLOBAL],
  org: [IMPERSONATE_ORG, IMPERSONATION_READ_ORG, IMPERSONATION_MANAGE_ORG],
};
const MANAGE = { global: [IMPERSONATION_MANAGE_GLOBAL], org: [IMPERSONATION_MANAGE_ORG] };
const TAGS = ["Admin: impersonation"];

/** The impersonation routes. */
export function impersonationRoutes(deps: ImpersonationRouteDeps) {
  return documented((app, appDeps) => {
    const { clock, random, config } = appDeps;
    const windowSeconds = config.impersonation.windowSeconds;
    const consentTtlSeconds = deps.tokens.ttlSeconds("impconsent+svc");
    const messages = mailMessages(mailSettingsFromConfig(config));

    /** The target's organizations, and whether the scope covers the target (404 otherwise). */
    const visibleTarget = async (scope: FenceScope, targetId: string) => {
      const user = isUuid(targetId) ? await deps.storage.users.get(targetId) : null;
      if (user === null || user.realmId !== scope.principal.realmId) throw hidden("user");
      const orgIds = (await deps.storage.organizations.listOrgsOfUser(user.id)).map((o) => o.id);
      if (!scope.global && !(scope.orgId !== null && orgIds.some((id) => covers(scope, id)))) {
        throw hidden("user");
      }
      return { user, orgIds };
    };

    /** The record of `id` in the caller's realm whose target the scope covers, else 404. */
    const visibleRecord = async (scope: FenceScope, id: string) => {
      const record = isUuid(id) ? await deps.storage.impersonations.get(id) : null;
      if (record === null || record.realmId !== scope.principal.realmId) throw hidden("impersonation");
      if (
        !scope.global &&
        !(scope.orgId !== null && await deps.storage.organizations.isMember(scope.orgId, record.targetId))
      ) {
        throw hidden("impersonation");
      }
      return record;
    };

    /** Signs in the impersonation session and answers its tokens. */
    const issueTokens = async (record: Impersonation) => {
      const issued = await deps.signIn.signIn({
        realmId: record.realmId,
        userId: record.targetId,
        mfa: MFA_LEVEL_IMPERSONATION,
        orgId: record.orgId,
        impersonation: { actorId: record.actorId, impersonationId: record.id, expiresAt: record.expiresAt },
      });
      return {
        impersonationId: record.id,
        accessToken: issued.tokens.accessToken,
        refreshToken: issued.tokens.refreshToken,
        tokenType: "Bearer" as const,
        expiresIn: issued.tokens.expiresIn,
        expiresAt: record.expiresAt.toISOString(),
      };
    };

    app.post("/svc-admin/impersonation", noStore, async (c) => {
      const scope = await fence(c, deps.snapshots, IMPERSONATE, "You may not impersonate users.");
      const body = await parseBody(c, StartImpersonationSchema);
      const durationSeconds = body.durationSeconds ?? windowSeconds;
      if (durationSeconds > windowSeconds) {
        throw new SvcError(
          "invalid_request",
          `Invalid request: durationSeconds must be at most ${windowSeconds}.`,
          400,
          {
            field: "durationSeconds",
          },
        );
      }
      const { principal } = scope;
      const { user: target, orgIds } = await visibleTarget(scope, body.targetUserId);
      if ((principal.kind ?? "User") !== "User" || principal.sessionId === null) {
        throw new ImpersonationNotAllowedError("not_a_user");
      }
      if (target.id === principal.userId) throw new ImpersonationNotAllowedError("self");
      if (target.isBreakGlass) throw new ImpersonationNotAllowedError("break_glass");
      if (target.status !== "Active") throw new ImpersonationNotAllowedError("target_not_active");
      await requireAuthorityOver(
        deps,
        scope,
        { kind: "User", id: target.id },
        () => new ImpersonationNotAllowedError("privileged_target"),
      );
      const consentRequired = await deps.storage.impersonations.consentRequiredFor(principal.realmId, orgIds);
      const orgId = scope.global ? null : scope.orgId;
      const now = clock.now();
      const id = randomUuid(random);
      const actor = await deps.storage.users.get(principal.userId);
      const { value: record } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        let record: Impersonation;
        try {
          record = await tx.impersonations.create({
            id,
            realmId: principal.realmId,
            actorId: principal.userId,
            targetId: target.id,
            orgId,
            reason: body.reason,
            consentRequired,
            // Under consent, the pending request lives as long as its link; the window starts at approval.
            expiresAt: new Date(now + (consentRequired ? consentTtlSeconds : durationSeconds) * 1000),
            durationSeconds,
          });
        } catch (error) {
          if (error instanceof ConflictError) {
            throw new SvcError(
              "impersonation_in_progress",
              "You already have a current impersonation; end it first.",
              409,
              {
                impersonationId: error.details?.impersonationId,
              },
            );
          }
          throw error;
        }
        const data = {
          impersonationId: id,
          actorId: principal.userId,
          reason: body.reason,
          expiresAt: record.expiresAt.toISOString(),
        };
        if (consentRequired) {
          const consent = await deps.tokens.mint("impconsent+svc", {
            realm: principal.realmId,
            sub: target.id,
            act: { sub: principal.userId, imp: id },
          }, { ttlSeconds: consentTtlSeconds });
          const own = realmMessages(messages, await tx.realms.get(target.realmId));
          await createOutboxTransport(tx.mailOutbox).send(
            own.impersonationConsent({
              to: target.email,
              token: consent.token,
              ttlSeconds: consentTtlSeconds,
              actorName: actor?.displayName ?? actor?.email ?? "",
              reason: body.reason,
              durationSeconds,
              locale: mailLocaleOf(c.req.header("Accept-Language")),
            }),
            { realmId: target.realmId, userId: target.id },
          );
          await emit(event(IMPERSONATION_EVENTS.consentRequested, record, now, { ...data, durationSeconds }));
        } else {
          await emit(event(IMPERSONATION_EVENTS.started, record, now, data));
        }
        return {
          value: record,
          audit: {
            action: consentRequired ? "impersonation.request" : "impersonation.start",
            target: target.id,
            orgId,
            after: auditView(record),
          },
        };
      });
      if (consentRequired) {
        return c.json({
          impersonationId: record.id,
          status: "PendingConsent" as const,
          consentExpiresAt: record.expiresAt.toISOString(),
        }, 202);
      }
      return c.json(await issueTokens(record), 201);
    });

    app.get("/svc-admin/impersonation", async (c) => {
      const scope = await fence(c, deps.snapshots, READ, "You may not read impersonations.");
      const query = parseQuery(c, ImpersonationListQuerySchema);
      const page = pageOf(query);
      if (query.targetUserId !== undefined) await visibleTarget(scope, query.targetUserId);
      const { items, total } = await deps.storage.impersonations.list(scope.principal.realmId, {
        targetId: query.targetUserId?.toLowerCase(),
        targetMemberOf: scope.global ? undefined : scope.orgId ?? undefined,
        state: query.state ?? "all",
        offset: page.offset,
        limit: page.limit,
      });
      const now = clock.now();
      return c.json(listBody(items.map((r) => view(r, now)), page, total));
    });

    // Consent routes before `/:id`, so that `consent` is never taken for an id.
    app.post("/svc-admin/impersonation/consent/approve", async (c) => {
      const principal = await requirePrincipal(c);
      if ((principal.kind ?? "User") !== "User") throw new ForbiddenError("Only the user asked may approve.");
      const body = await parseBody(c, ApproveConsentSchema);
      const claims = await deps.tokens.verify("impconsent+svc", body.token);
      if (claims.sub !== principal.userId || claims.realm !== principal.realmId) {
        throw new ForbiddenError("This consent request is not addressed to you.");
      }
      const pending = await deps.storage.impersonations.get(claims.act.imp);
      if (pending === null || pending.targetId !== claims.sub || pending.actorId !== claims.act.sub) {
        throw hidden("impersonation");
      }
      const now = clock.now();
      const { value: record } = await adminMutation(
        deps,
        { principal, global: false, orgId: null },
        async ({ tx, emit }) => {
          // Single use: the consent token's jti is spent in the approving transaction.
          if (!await tx.consumedTokens.consume(claims.jti, new Date(claims.exp * 1000))) {
            throw new InvalidTokenError("consumed");
          }
          const approved = await tx.impersonations.approveConsent(pending.id, {
            expiresAt: new Date(now + pending.durationSeconds * 1000),
          });
          if (approved === null) {
            throw new SvcError(
              "impersonation_not_pending",
              "The impersonation is no longer waiting for consent.",
              409,
            );
          }
          const data = {
            impersonationId: approved.id,
            actorId: approved.actorId,
            reason: approved.reason,
            expiresAt: approved.expiresAt.toISOString(),
          };
          await emit(event(IMPERSONATION_EVENTS.approved, approved, now, data));
          await emit(event(IMPERSONATION_EVENTS.started, approved, now, data));
          return {
            value: approved,
            audit: {
              action: "impersonation.approve",
              target: approved.targetId,
              orgId: approved.orgId,
              before: { status: pending.status },
              after: auditView(approved),
            },
          };
        },
      );
      return c.json(view(record, clock.now()));
    });

    app.get("/svc-admin/impersonation/consent", async (c) => {
      const scope = await fence(
        c,
        deps.snapshots,
        { global: READ.global },
        "You may not read the consent mode.",
      );
      return c.json(
        consentView(await deps.storage.impersonations.consentSetting(scope.principal.realmId, null)),
      );
    });

    app.put("/svc-admin/impersonation/consent", async (c) => {
      const scope = await fence(
        c,
        deps.snapshots,
        { global: MANAGE.global },
        "You may not set the consent mode.",
      );
      const body = await parseBody(c, ConsentModeSchema);
      return c.json(await setConsent(scope, null, body.consentRequired));
    });

    app.get("/svc-admin/impersonation/consent/organizations/:orgId", async (c) => {
      const scope = await fence(c, deps.snapshots, READ, "You may not read the consent mode.");
      const orgId = await visibleOrg(scope, c.req.param("orgId"));
      return c.json(
        consentView(await deps.storage.impersonations.consentSetting(scope.principal.realmId, orgId)),
      );
    });

    app.put("/svc-admin/impersonation/consent/organizations/:orgId", async (c) => {
      const scope = await fence(c, deps.snapshots, MANAGE, "You may not set the consent mode.");
      const orgId = await visibleOrg(scope, c.req.param("orgId"));
      const body = await parseBody(c, ConsentModeSchema);
      return c.json(await setConsent(scope, orgId, body.consentRequired));
    });

    const visibleOrg = async (scope: FenceScope, orgId: string) => {
      const org = isUuid(orgId) ? await deps.storage.organizations.get(orgId) : null;
      if (org === null || org.realmId !== scope.principal.realmId) throw hidden("organization");
      requireVisible(scope, org.id, "organization");
      return org.id;
    };

    const setConsent = async (scope: FenceScope, orgId: string | null, consentRequired: boolean) => {
      const { value } = await adminMutation(deps, scope, async ({ tx }) => {
        const { before, after } = await tx.impersonations.setConsentSetting(
          scope.principal.realmId,
          orgId,
          consentRequired,
        );
        // Already so: a repeat, which changes nothing.
        if (before.consentRequired === after.consentRequired) return { value: after, audit: null };
        return {
          value: after,
          audit: {
            action: "impersonation.consent.set",
            target: orgId ?? scope.principal.realmId,
            orgId,
            before: { consentRequired: before.consentRequired },
            after: { consentRequired: after.consentRequired },
          },
        };
      });
      return consentView(value);
    };

    app.get("/svc-admin/impersonation/:id", async (c) => {
      const scope = await fence(c, deps.snapshots, READ, "You may not read impersonations.");
      return c.json(view(await visibleRecord(scope, c.req.param("id")), clock.now()));
    });

    app.post("/svc-admin/impersonation/:id/token", noStore, async (c) => {
      const scope = await fence(c, deps.snapshots, IMPERSONATE, "You may not impersonate users.");
      const record = await visibleRecord(scope, c.req.param("id"));
      if (record.actorId !== scope.principal.userId) {
        throw new ForbiddenError("Only the administrator who started the impersonation fetches its token.");
      }
      const { value: claimed } = await adminMutation(deps, scope, async ({ tx }) => {
        const claimed = await tx.impersonations.claimToken(record.id);
        if (claimed === null) {
          throw new SvcError(
            "impersonation_token_unavailable",
            "No token to fetch: the impersonation is waiting for consent, ended, expired, or its token was fetched.",
            409,
          );
        }
        return {
          value: claimed,
          audit: {
            action: "impersonation.token.issue",
            target: claimed.targetId,
            orgId: claimed.orgId,
            after: {
              impersonationId: claimed.id,
              reason: claimed.reason,
              expiresAt: claimed.expiresAt.toISOString(),
            },
          },
        };
      });
      return c.json(await issueTokens(claimed));
    });

    app.post("/svc-admin/impersonation/:id/end", async (c) => {
      const principal = await requirePrincipal(c);
      const id = c.req.param("id");
      // The impersonation's own token may end it (the banner's "stop"); the guard lets only that through.
      const own = principal.act !== undefined && principal.act !== null &&
        principal.act.impersonationId.toLowerCase() === id.toLowerCase();
      let record: Impersonation;
      let scope: FenceScope | null = null;
      if (own) {
        const found = await deps.storage.impersonations.get(id);
        if (found === null || found.realmId !== principal.realmId) throw hidden("impersonation");
        record = found;
      } else {
        scope = await fence(c, deps.snapshots, IMPERSONATE, "You may not end impersonations.");
        const found = isUuid(id) ? await deps.storage.impersonations.get(id) : null;
        if (found === null || found.realmId !== principal.realmId) throw hidden("impersonation");
        // The actor ends their own; anyone else needs the target in their fence.
        if (found.actorId !== principal.userId) await visibleRecord(scope, found.id);
        record = found;
      }
      const now = clock.now();
      const work = async ({ tx, emit }: AdminMutationContext) => {
        const ended = await tx.impersonations.end(record.id);
        if (ended === null) {
          throw new SvcError("impersonation_already_ended", "The impersonation has ended already.", 409);
        }
        const sessions = await tx.impersonations.sessionIds(record.id);
        for (const sessionId of sessions) {
          await tx.sessions.revoke(sessionId);
          await tx.refreshTokens.revokeForSession(sessionId);
        }
        await emit(event(IMPERSONATION_EVENTS.ended, ended, now, {
          impersonationId: ended.id,
          actorId: ended.actorId,
          reason: ended.reason,
          endedBy: principal.act?.actorId ?? principal.userId,
        }));
        return {
          value: { ended, sessions },
          audit: {
            action: "impersonation.end",
            target: ended.targetId,
            orgId: ended.orgId,
            before: { status: record.status },
            after: auditView(ended),
          },
        };
      };
      // The impersonation's own token is refused by adminMutation (act): its end is audited with
      // the true actor (the administrator, on behalf of the target) through runAdminMutation.
      const { value } = scope === null
        ? await runAdminMutation(
          { storage: deps.storage, publisher: deps.publisher },
          principal.realmId,
          auditActor(principal),
          work,
        )
        : await adminMutation(deps, scope, work);
      // After commit: the impersonation's access tokens stop on every instance.
      await deps.sessions?.announce(value.sessions.map((sessionId) => ({ id: sessionId, endedAt: now })));
      return c.json(view(value.ended, clock.now()));
    });
  }, OPERATIONS);
}

function event(kind: string, record: Impersonation, now: number, data: Record<string, unknown>) {
  // `userId` is the target: the event lands in the target's security events.
  return {
    kind,
    occurredAt: now,
    realmId: record.realmId,
    orgId: record.orgId,
    userId: record.targetId,
    data,
  };
}

/** The audit snapshot of an impersonation: actor, target and reason (never a token). */
function auditView(record: Impersonation) {
  return {
    impersonationId: record.id,
    actorId: record.actorId,
    targetId: record.targetId,
    reason: record.reason,
    status: record.status,
    consentRequired: record.consentRequired,
    expiresAt: record.expiresAt.toISOString(),
    endedAt: record.endedAt?.toISOString() ?? null,
  };
}

/** An impersonation as answered. */
export function view(record: Impersonation, now: number): v.InferOutput<typeof ImpersonationViewSchema> {
  return {
    id: record.id,
    realmId: record.realmId,
    actorId: record.actorId,
    targetId: record.targetId,
    orgId: record.orgId,
    reason: record.reason,
    status: record.status,
    current: isImpersonationCurrent(record, new Date(now)),
    consentRequired: record.consentRequired,
    durationSeconds: record.durationSeconds,
    createdAt: record.createdAt.toISOString(),
    startedAt: record.startedAt?.toISOString() ?? null,
    expiresAt: record.expiresAt.toISOString(),
    endedAt: record.endedAt?.toISOString() ?? null,
    tokenIssued: record.tokenIssuedAt !== null,
  };
}

function consentView(setting: ImpersonationConsentSetting) {
  return {
    realmId: setting.realmId,
    orgId: setting.orgId,
    consentRequired: setting.consentRequired,
    updatedAt: setting.updatedAt?.toISOString() ?? null,
  };
}

const ID_PARAM = { id: "The impersonation id." };

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "POST",
    path: "/svc-admin/impersonation",
    summary: "Start impersonating a user (with a reason)",
    description:
      "Without consent mode: 201 with the target's tokens (act claim, exp capped at the end). With consent mode (realm or any organization of the target): 202, the target is mailed a single-use approval link.",
    tags: TAGS,
    permissions: [IMPERSONATE_GLOBAL, IMPERSONATE_ORG],
    body: StartImpersonationSchema,
    responses: {
      201: { description: "Started; the target's tokens", body: TokenAnswerSchema },
      202: { description: "Waiting for the target's consent", body: PendingAnswerSchema },
      ...errorResponses(400, 401, 403, 404, 409),
    },
  },
  {
    method: "GET",
    path: "/svc-admin/impersonation",
    summary: "List impersonations (current and past), realm-wide or of one target",
    tags: TAGS,
    permissions: [IMPERSONATE_GLOBAL, IMPERSONATE_ORG, IMPERSONATION_READ_GLOBAL, IMPERSONATION_READ_ORG],
    query: ImpersonationListQuerySchema,
    responses: {
      200: { description: "One page, newest first", body: listSchema(ImpersonationViewSchema) },
      ...errorResponses(400, 401, 403, 404),
    },
  },
  {
    method: "POST",
    path: "/svc-admin/impersonation/consent/approve",
    summary: "Approve an impersonation of yourself (the mailed consent token, single use)",
    description: "No `svc:` permission: only the target user, signed in as themselves (never under " +
      "impersonation), may approve the request addressed to them.",
    tags: TAGS,
    permissions: [],
    body: ApproveConsentSchema,
    responses: {
      200: { description: "Approved: the impersonation is active", body: ImpersonationViewSchema },
      ...errorResponses(400, 401, 403, 404, 409),
    },
  },
  {
    method: "GET",
    path: "/svc-admin/impersonation/consent",
    summary: "The realm's impersonation consent mode",
    tags: TAGS,
    permissions: READ.global,
    responses: { 200: { description: "The mode", body: ConsentModeViewSchema }, ...errorResponses(401, 403) },
  },
  {
    method: "PUT",
    path: "/svc-admin/impersonation/consent",
    summary: "Set the realm's impersonation consent mode",
    tags: TAGS,
    permissions: MANAGE.global,
    body: ConsentModeSchema,
    responses: {
      200: { description: "The mode", body: ConsentModeViewSchema },
      ...errorResponses(400, 401, 403),
    },
  },
  {
    method: "GET",
    path: "/svc-admin/impersonation/consent/organizations/:orgId",
    summary: "An organization's impersonation consent mode",
    tags: TAGS,
    permissions: [...READ.global, ...READ.org],
    params: { orgId: "The organization id." },
    responses: {
      200: { description: "The mode", body: ConsentModeViewSchema },
      ...errorResponses(401, 403, 404),
    },
  },
  {
    method: "PUT",
    path: "/svc-admin/impersonation/consent/organizations/:orgId",
    summary: "Set an organization's impersonation consent mode (it only adds to the realm's)",
    tags: TAGS,
    permissions: [...MANAGE.global, ...MANAGE.org],
    params: { orgId: "The organization id." },
    body: ConsentModeSchema,
    responses: {
      200: { description: "The mode", body: ConsentModeViewSchema },
      ...errorResponses(400, 401, 403, 404),
    },
  },
  {
    method: "GET",
    path: "/svc-admin/impersonation/:id",
    summary: "One impersonation",
    tags: TAGS,
    permissions: [IMPERSONATE_GLOBAL, IMPERSONATE_ORG, IMPERSONATION_READ_GLOBAL, IMPERSONATION_READ_ORG],
    params: ID_PARAM,
    responses: {
      200: { description: "The impersonation", body: ImpersonationViewSchema },
      ...errorResponses(401, 403, 404),
    },
  },
  {
    method: "POST",
    path: "/svc-admin/impersonation/:id/token",
    summary: "Fetch the token of an approved impersonation (the actor, once)",
    tags: TAGS,
    permissions: [IMPERSONATE_GLOBAL, IMPERSONATE_ORG],
    params: ID_PARAM,
    responses: {
      200: { description: "The target's tokens", body: TokenAnswerSchema },
      ...errorResponses(401, 403, 404, 409),
    },
  },
  {
    method: "POST",
    path: "/svc-admin/impersonation/:id/end",
    summary: "End an impersonation now (its tokens stop on every instance)",
    description:
      "Allowed to holders of the impersonate permission over the target, and to the impersonation's own token.",
    tags: TAGS,
    permissions: [IMPERSONATE_GLOBAL, IMPERSONATE_ORG],
    params: ID_PARAM,
    responses: {
      200: { description: "Ended", body: ImpersonationViewSchema },
      ...errorResponses(401, 403, 404, 409),
    },
  },
];
