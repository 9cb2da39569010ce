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
import { SvcError } from "../../core/errors.ts";
import type { SubjectSnapshots } from "../../core/snapshots/service.ts";
import type { AdminAuditEntry } from "../../storage/contract/admin-audit.ts";
import type { Storage } from "../../storage/storage.ts";
import type { AppDeps, RouteInstaller } from "../app.ts";
import { fence } from "../auth/fence.ts";
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

/** What the ledger routes need besides the app's dependencies. */
export interface AuditRoutesDeps {
  readonly storage: Storage;
  readonly snapshots: SubjectSnapshots;
  readonly publisher?: EventPublisher;
}

/** An audit entry as the API shows it. */
export function auditEntryView(e: AdminAuditEntry) {
  return { ...e, occurredAt: e.occurredAt.toISOString() };
}

function intQuery(
  text: string | undefined,
  fallback: number,
  min: number,
  max: number,
  name: string,
): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new SvcError("invalid_request", `${name} must be a whole number between ${min} and ${max}.`, 400);
  }
  return n;
}

/** The audit, retention, erasure and security-event routes. */
export function auditRoutes(deps: AuditRoutesDeps): RouteInstaller {
  return (app, appDeps: AppDeps) => {
    const { storage, snapshots } = deps;

    app.get("/svc-admin/audit/entries", async (c) => {
      const scope = await fence(c, snapshots, { global: [AUDIT_READ_GLOBAL] });
      const entries = await storage.adminAudit.list(scope.principal.realmId, {
        afterSeq: intQuery(c.req.query("afterSeq"), 0, 0, Number.MAX_SAFE_INTEGER, "afterSeq"),
        limit: intQuery(c.req.query("limit"), 100, 1, 1000, "limit"),
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
      }, { id: scope.principal.userId, kind: "User" });
      return c.json(report);
    });

    app.post("/svc-admin/users/:userId/erase", async (c) => {
      const scope = await fence(c, snapshots, { global: [USERS_ERASE_GLOBAL] });
      const report = await eraseUser(
        { storage, clock: appDeps.clock, publisher: deps.publisher },
        scope.principal.realmId,
        c.req.param("userId"),
        { id: scope.principal.userId, kind: "User" },
      );
      return c.json(report);
    });

    app.get("/profile/security-events", async (c) => {
      const principal = await requirePrincipal(c);
      const beforeText = c.req.query("before");
      const before = beforeText === undefined ? undefined : new Date(beforeText);
      if (before !== undefined && Number.isNaN(before.getTime())) {
        throw new SvcError("invalid_request", "before must be an ISO 8601 time.", 400);
      }
      const events = await storage.securityEvents.listByUser(principal.userId, {
        limit: intQuery(c.req.query("limit"), 50, 1, 200, "limit"),
        before,
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
  };
}
