/**
 * Break-glass (spec 3, 4.6; issue 12), under `/svc-admin/break-glass` (realm-wide permissions only):
 *
 * | Route | What |
 * |---|---|
 * | `GET /svc-admin/break-glass/status` | the account, last drill, last use, rotation required, drill due date |
 * | `POST /svc-admin/break-glass/drill` `{password}` | verifies the break-glass password (no session) and records the drill |
 * | `POST /svc-admin/break-glass/rotate` | a new generated password, shown once; the account's sessions end |
 *
 * Drilling and rotating act on the break-glass account, which holds `svc-admin` realm-wide: only
 * a realm-wide caller whose authority covers the account's whole reach may (403
 * `subject_beyond_authority` otherwise; `requireAuthorityOver`). A rotation hands the caller the
 * account's password, and a drill is an oracle for it; a holder of only `break-glass-manage`
 * does neither. Reading the status hands nothing out.
 *
 * The account itself is created by the CLI (`svc break-glass create --realm …`), which can also
 * rotate. {@link breakGlassReadinessCheck} is the `break_glass_drill` check of `/readyz`.
 *
 * @module
 */
import * as v from "valibot";
import { MAX_PASSWORD_LENGTH } from "../../core/accounts/flows.ts";
import { drillBreakGlass, rotateBreakGlassPassword } from "../../core/break-glass/account.ts";
import { BreakGlassMonitor, type BreakGlassStatus, DAY_MS } from "../../core/break-glass/monitor.ts";
import {
  BREAK_GLASS_MANAGE_GLOBAL,
  BREAK_GLASS_READ_GLOBAL,
} from "../../core/definitions/permissions/impersonation.ts";
import type { ReadinessCheck } from "../app.ts";
import { auditActor } from "../auth/audit-actor.ts";
import { fence, type FenceScope } from "../auth/fence.ts";
import { documented, errorResponses, IsoTimeSchema, type OperationDoc } from "../openapi/operation.ts";
import { noStore } from "../security-headers.ts";
import { clientIp } from "../client-ip.ts";
import { parseBody } from "../validate.ts";
import { requireAuthorityOver } from "./authority.ts";
import type { AdminRouteDeps } from "./deps.ts";

/** The name of the readiness check. */
export const BREAK_GLASS_DRILL_CHECK = "break_glass_drill";

/**
 * The `break_glass_drill` readiness check: fails while a realm's drill is overdue; `required`
 * false (the default setting) makes it non-critical (reported, `/readyz` stays 200). Each
 * evaluation also reminds of pending rotations (`breakglass.rotation_required`, hourly per realm).
 */
export function breakGlassReadinessCheck(monitor: BreakGlassMonitor, required: boolean): ReadinessCheck {
  return { name: BREAK_GLASS_DRILL_CHECK, critical: required, check: () => monitor.check() };
}

/** The body of `POST /svc-admin/break-glass/drill`. */
export const BreakGlassDrillSchema = v.pipe(
  v.strictObject({
    password: v.pipe(
      v.string("password must be a string"),
      v.minLength(1, "password must not be empty"),
      v.maxLength(MAX_PASSWORD_LENGTH),
      v.description("The break-glass password: verified, never stored or logged."),
    ),
  }),
  v.title("BreakGlassDrill"),
);

/** The status answer. */
export const BreakGlassStatusSchema = v.pipe(
  v.object({
    realmId: v.string(),
    account: v.nullable(v.object({ userId: v.string(), email: v.string(), createdAt: IsoTimeSchema })),
    lastDrillAt: v.nullable(IsoTimeSchema),
    lastUseAt: v.nullable(IsoTimeSchema),
    lastRotatedAt: v.nullable(IsoTimeSchema),
    rotationRequired: v.boolean(),
    drillDueAt: v.pipe(
      v.nullable(IsoTimeSchema),
      v.description(
        "The last drill (or, never drilled, the account's creation) plus the window; null without an account.",
      ),
    ),
    drillOverdue: v.boolean(),
    drillWindowDays: v.number(),
  }),
  v.title("BreakGlassStatus"),
);

const RotatedSchema = v.pipe(
  v.object({
    userId: v.string(),
    email: v.string(),
    password: v.pipe(v.string(), v.description("The new password, shown this once.")),
    sessionsEnded: v.number(),
  }),
  v.title("BreakGlassRotated"),
);

const TAGS = ["Admin: break-glass"];

/** The break-glass routes. */
export function breakGlassRoutes(deps: AdminRouteDeps) {
  return documented((app, appDeps) => {
    const { clock, random, config } = appDeps;
    const drillWindowDays = config.breakGlass.drillWindowDays;
    const monitor = new BreakGlassMonitor({
      storage: deps.storage,
      clock,
      events: { transaction: (work) => deps.publisher.transaction(work, deps.storage) },
      drillWindowMs: drillWindowDays * DAY_MS,
    });
    const core = {
      storage: deps.storage,
      passwords: deps.passwords,
      random,
      clock,
      events: deps.publisher,
      abuse: deps.abuse,
    };

    /** 403 unless the caller's authority covers the realm's break-glass account (none: nothing to cover). */
    const requireAuthorityOverAccount = async (scope: FenceScope) => {
      const account = await deps.storage.breakGlass.account(scope.principal.realmId);
      if (account !== null) await requireAuthorityOver(deps, scope, { kind: "User", id: account.userId });
    };

    app.get("/svc-admin/break-glass/status", async (c) => {
      const scope = await fence(c, deps.snapshots, {
        global: [BREAK_GLASS_READ_GLOBAL, BREAK_GLASS_MANAGE_GLOBAL],
      }, "You may not read the break-glass status.");
      const realmId = scope.principal.realmId;
      c.header("Cache-Control", "no-store");
      return c.json({ realmId, ...statusView(await monitor.status(realmId)), drillWindowDays });
    });

    app.post("/svc-admin/break-glass/drill", noStore, async (c) => {
      const scope = await fence(
        c,
        deps.snapshots,
        { global: [BREAK_GLASS_MANAGE_GLOBAL] },
        "You may not drill.",
      );
      await requireAuthorityOverAccount(scope);
      const body = await parseBody(c, BreakGlassDrillSchema);
      const realmId = scope.principal.realmId;
      await drillBreakGlass(core, {
        realmId,
        password: body.password,
        actor: auditActor(scope.principal),
        ip: clientIp(c),
      });
      return c.json({ realmId, ...statusView(await monitor.status(realmId)), drillWindowDays });
    });

    app.post("/svc-admin/break-glass/rotate", noStore, async (c) => {
      const scope = await fence(
        c,
        deps.snapshots,
        { global: [BREAK_GLASS_MANAGE_GLOBAL] },
        "You may not rotate.",
      );
      await requireAuthorityOverAccount(scope);
      const rotated = await rotateBreakGlassPassword(core, {
        realmId: scope.principal.realmId,
        actor: auditActor(scope.principal),
      });
      // After commit: the account's access tokens stop on every instance.
      await deps.sessions?.announce(rotated.ended);
      return c.json({
        userId: rotated.account.userId,
        email: rotated.account.email,
        password: rotated.password,
        sessionsEnded: rotated.ended.length,
      });
    });
  }, OPERATIONS);
}

function statusView(status: BreakGlassStatus) {
  return {
    account: status.account === null ? null : {
      userId: status.account.userId,
      email: status.account.email,
      createdAt: status.account.createdAt.toISOString(),
    },
    lastDrillAt: status.lastDrillAt?.toISOString() ?? null,
    lastUseAt: status.lastUseAt?.toISOString() ?? null,
    lastRotatedAt: status.lastRotatedAt?.toISOString() ?? null,
    rotationRequired: status.rotationRequired,
    drillDueAt: status.drillDueAt?.toISOString() ?? null,
    drillOverdue: status.drillOverdue,
  };
}

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "GET",
    path: "/svc-admin/break-glass/status",
    summary: "Break-glass status: last drill, last use, rotation required, drill due date",
    tags: TAGS,
    permissions: [BREAK_GLASS_READ_GLOBAL, BREAK_GLASS_MANAGE_GLOBAL],
    responses: {
      200: { description: "The status", body: BreakGlassStatusSchema },
      ...errorResponses(401, 403),
    },
  },
  {
    method: "POST",
    path: "/svc-admin/break-glass/drill",
    summary: "Record a drill: verify the break-glass password without signing in",
    tags: TAGS,
    permissions: [BREAK_GLASS_MANAGE_GLOBAL],
    body: BreakGlassDrillSchema,
    responses: {
      200: { description: "Recorded; the new status", body: BreakGlassStatusSchema },
      422: { description: "The password did not verify (`break_glass_drill_failed`); nothing recorded" },
      ...errorResponses(400, 401, 403, 409),
    },
  },
  {
    method: "POST",
    path: "/svc-admin/break-glass/rotate",
    summary: "Rotate the break-glass password (shown once); its sessions end",
    tags: TAGS,
    permissions: [BREAK_GLASS_MANAGE_GLOBAL],
    responses: {
      200: { description: "The new password", body: RotatedSchema },
      ...errorResponses(401, 403, 409),
    },
  },
];
