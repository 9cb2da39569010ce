/**
 * The ledgers over HTTP:
 *
 * | Method | Path | Fence |
 * |---|---|---|
 * | GET | `/svc-admin/audit/entries?afterSeq=0&limit=100` | `svc:global:audit-read` |
 * | GET | `/svc-admin/audit/verify` | `svc:global:audit-read` |
 * | POST | `/svc-admin/audit/retention` `{securityEventsOlderThanDays?, auditPayloadsOlderThanDays?}` | `svc:global:audit-retention` |
 * | POST | `/svc-admin/users/{userId}/erase` | `svc:global:users-erase` |
 * | GET | `/profile/security-events?limit=50&before=<ISO time>` | the caller's own events |
 *
 * Everything is scoped to the caller's realm. Verification answers `{valid, checked, headSeq,
 * headHash, firstBad: {seq, reason} | null}`.
 *
 * @module
 */
import * as v from "valibot";
import { applyRetention, eraseUser } from "../../core/audit/erasure.ts";
import {
  AUDIT_READ_GLOBAL,
  AUDIT_RETENTION_GLOBAL,
  USERS_ERASE_GLOBAL,
} from "../../core/definitions/svc-permissions.ts";
import type { EventPublisher } from "../../core/events/publisher.ts";
import type { SubjectSnapshots } from "../../core/snapshots/service.ts";
import type { SessionEndAnnouncer } from "../../core/sessions/ended.ts";
import type { AdminAuditEntry } from "../../core/storage/admin-audit.ts";
import type { Storage } from "../../core/storage/storage.ts";
import type { AppDeps } from "../app.ts";
import { parseQuery, wholeNumber } from "../admin/kit.ts";
import {
  documented,
  type DocumentedInstaller,
  errorResponses,
  IsoTimeSchema,
  type OperationDoc,
} from "../openapi/operation.ts";
import { auditActor } from "../auth/audit-actor.ts";
import { fence } from "../auth/fence.ts";
import { refuseUnderImpersonation } from "../admin/kit.ts";
import { requirePrincipal } from "../auth/principal.ts";
import { parseBody } from "../validate.ts";

const DAY_MS = 86_400_000;
const days = (what: string) =>
  v.optional(
    v.pipe(v.number(`${what} must be a number of days`), v.integer(), v.minValue(1), v.maxValue(36500)),
  );

/** The body of `POST /svc-admin/audit/retention`. */
export const RetentionSchema = v.strictObject({
  securityEventsOlderThanDays: days("securityEventsOlderThanDays"),
  auditPayloadsOlderThanDays: days("auditPayloadsOlderThanDays"),
});

/** The query of `GET /svc-admin/audit/entries`. */
export const AuditEntriesQuerySchema = v.strictObject({
  afterSeq: v.optional(
    v.pipe(
      wholeNumber("afterSeq", 0, Number.MAX_SAFE_INTEGER),
      v.description("Entries after this sequence number (default 0)."),
    ),
  ),
  limit: v.optional(v.pipe(wholeNumber("limit", 1, 1000), v.description("At most this many (default 100)."))),
});

/** The query of `GET /profile/security-events`. */
export const SecurityEventsQuerySchema = v.strictObject({
  limit: v.optional(v.pipe(wholeNumber("limit", 1, 200), v.description("At most this many (default 50)."))),
  before: v.optional(
    v.pipe(
      v.string("before must be an ISO 8601 time"),
      v.check((text) => !Number.isNaN(new Date(text).getTime()), "before must be an ISO 8601 time"),
      v.description("Only events before this time (ISO 8601), for paging back."),
    ),
  ),
});

/** An admin audit entry as the API shows it. */
export const AuditEntrySchema = v.pipe(
  v.object({
    realmId: v.string(),
    seq: v.number(),
    occurredAt: IsoTimeSchema,
    action: v.string(),
    actorId: v.string(),
    actorKind: v.picklist(["User", "ServiceAccount", "ApiKey", "System", "BreakGlass"]),
    onBehalfOf: v.nullable(v.string()),
    target: v.nullable(v.string()),
    orgId: v.nullable(v.string()),
    before: v.pipe(v.unknown(), v.description("Snapshot before; null when absent or redacted.")),
    after: v.pipe(v.unknown(), v.description("Snapshot after; null when absent or redacted.")),
    beforeDigest: v.string(),
    afterDigest: v.string(),
    prevHash: v.string(),
    entryHash: v.string(),
  }),
  v.title("AuditEntry"),
);

/** The answer of `GET /svc-admin/audit/verify`. */
export const AuditChainReportSchema = v.pipe(
  v.object({
    realmId: v.string(),
    valid: v.boolean(),
    checked: v.number(),
    headHash: v.string(),
    headSeq: v.number(),
    firstBad: v.nullable(
      v.object({
        seq: v.number(),
        reason: v.picklist([
          "sequence_gap",
          "prev_hash_mismatch",
          "entry_hash_mismatch",
          "payload_digest_mismatch",
        ]),
      }),
    ),
  }),
  v.title("AuditChainReport"),
);

/** The answer of `POST /svc-admin/audit/retention`. */
export const RetentionReportSchema = v.pipe(
  v.object({ securityEventsDeleted: v.number(), auditPayloadsRedacted: v.number() }),
  v.title("RetentionReport"),
);

/** The answer of `POST /svc-admin/users/{userId}/erase`. */
export const ErasureReportSchema = v.pipe(
  v.object({
    userId: v.string(),
    securityEventsRedacted: v.number(),
    auditEntriesRedacted: v.number(),
    passwordCredentialsDeleted: v.number(),
    passkeysDeleted: v.number(),
    totpDeleted: v.boolean(),
    emailOtpEnrollmentDeleted: v.boolean(),
    recoveryCodesDeleted: v.number(),
    federatedIdentitiesDeleted: v.number(),
    knownDevicesDeleted: v.number(),
    sessionsRevoked: v.number(),
    refreshTokensRevoked: v.number(),
    apiKeysRevoked: v.number(),
    subjectKeyDestroyed: v.boolean(),
    sessionOriginsCleared: v.number(),
    mailDeleted: v.number(),
    mailRedacted: v.number(),
    webhookPayloadsRedacted: v.number(),
    freeTextRedacted: v.number(),
    auditMentionsRedacted: v.number(),
  }),
  v.title("ErasureReport"),
);

/** A security event of the caller's own ledger. */
export const SecurityEventSchema = v.pipe(
  v.object({
    id: v.string(),
    kind: v.string(),
    occurredAt: IsoTimeSchema,
    data: v.record(v.string(), v.unknown()),
    ipAddress: v.nullable(v.string()),
    deviceDescription: v.nullable(v.string()),
  }),
  v.title("SecurityEvent"),
);

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "GET",
    path: "/svc-admin/audit/entries",
    summary: "Read the realm's admin audit chain",
    tags: ["Audit"],
    permissions: [AUDIT_READ_GLOBAL],
    query: AuditEntriesQuerySchema,
    responses: {
      200: {
        description: "Entries by sequence number",
        body: v.object({ entries: v.array(AuditEntrySchema) }),
      },
      ...errorResponses(400, 401, 403),
    },
  },
  {
    method: "GET",
    path: "/svc-admin/audit/verify",
    summary: "Verify the realm's admin audit chain",
    tags: ["Audit"],
    permissions: [AUDIT_READ_GLOBAL],
    responses: {
      200: { description: "The verification report", body: AuditChainReportSchema },
      ...errorResponses(401, 403),
    },
  },
  {
    method: "POST",
    path: "/svc-admin/audit/retention",
    summary: "Apply retention to the realm's ledgers",
    description: "Deletes old security events and redacts old audit payloads; the chain still verifies.",
    tags: ["Audit"],
    permissions: [AUDIT_RETENTION_GLOBAL],
    body: RetentionSchema,
    responses: {
      200: { description: "What was deleted and redacted", body: RetentionReportSchema },
      ...errorResponses(400, 401, 403),
    },
  },
  {
    method: "POST",
    path: "/svc-admin/users/:userId/erase",
    summary: "Erase a user (GDPR erasure)",
    tags: ["Admin: users"],
    permissions: [USERS_ERASE_GLOBAL],
    params: { userId: "The user id" },
    responses: {
      200: { description: "What was erased", body: ErasureReportSchema },
      ...errorResponses(401, 403, 404),
    },
  },
  {
    method: "GET",
    path: "/profile/security-events",
    summary: "The caller's own security events, newest first",
    tags: ["Profile"],
    query: SecurityEventsQuerySchema,
    responses: {
      200: { description: "The events", body: v.object({ events: v.array(SecurityEventSchema) }) },
      ...errorResponses(400, 401),
    },
  },
];

/** What the ledger routes need besides the app's dependencies. */
export interface AuditRoutesDeps {
  /** Holds the audit chain and security events; retention and erasure write there. */
  readonly storage: Storage;
  /** The callers' subject snapshots, for the permission fences; an erased user's are dropped. */
  readonly snapshots: SubjectSnapshots;
  /** Records the events of erasure and retention in their transaction; without it, none are recorded. */
  readonly publisher?: EventPublisher;
  /** Told of the sessions an erasure ends, so their access tokens stop at once. */
  readonly sessions?: SessionEndAnnouncer;
}

/** An audit entry as the API shows it. */
export function auditEntryView(e: AdminAuditEntry) {
  return { ...e, occurredAt: e.occurredAt.toISOString() };
}

/** The audit, retention, erasure and security-event routes. */
export function auditRoutes(deps: AuditRoutesDeps): DocumentedInstaller {
  return documented((app, appDeps: AppDeps) => {
    const { storage, snapshots } = deps;

    app.get("/svc-admin/audit/entries", async (c) => {
      const scope = await fence(c, snapshots, { global: [AUDIT_READ_GLOBAL] });
      const query = parseQuery(c, AuditEntriesQuerySchema);
      const entries = await storage.adminAudit.list(scope.principal.realmId, {
        afterSeq: query.afterSeq ?? 0,
        limit: query.limit ?? 100,
      });
      return c.json({ entries: entries.map(auditEntryView) });
    });

    app.get("/svc-admin/audit/verify", async (c) => {
      const scope = await fence(c, snapshots, { global: [AUDIT_READ_GLOBAL] });
      return c.json(await storage.adminAudit.verify(scope.principal.realmId.toLowerCase()));
    });

    app.post("/svc-admin/audit/retention", async (c) => {
      const scope = await fence(c, snapshots, { global: [AUDIT_RETENTION_GLOBAL] });
      const body = await parseBody(c, RetentionSchema);
      const now = appDeps.clock.now();
      const report = await applyRetention(deps, scope.principal.realmId, {
        securityEventsBefore: body.securityEventsOlderThanDays === undefined
          ? undefined
          : new Date(now - body.securityEventsOlderThanDays * DAY_MS),
        auditPayloadsBefore: body.auditPayloadsOlderThanDays === undefined
          ? undefined
          : new Date(now - body.auditPayloadsOlderThanDays * DAY_MS),
      }, auditActor(scope.principal));
      return c.json(report);
    });

    app.post("/svc-admin/users/:userId/erase", async (c) => {
      const scope = await fence(c, snapshots, { global: [USERS_ERASE_GLOBAL] });
      // The admin mutation conventions (http/admin/kit.ts): never under impersonation.
      refuseUnderImpersonation(scope.principal);
      const report = await eraseUser(
        { storage, clock: appDeps.clock, publisher: deps.publisher, sessions: deps.sessions },
        scope.principal.realmId,
        c.req.param("userId"),
        auditActor(scope.principal),
      );
      // The user is suspended and anonymized: their cached authorization must go everywhere.
      await snapshots.invalidateUser(report.userId);
      return c.json(report);
    });

    app.get("/profile/security-events", async (c) => {
      const principal = await requirePrincipal(c);
      const query = parseQuery(c, SecurityEventsQuerySchema);
      const events = await storage.securityEvents.listByUser(principal.userId, {
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
  }, OPERATIONS);
}
