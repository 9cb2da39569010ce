/**
 * Shadow-mode authorization (issue 15), realm-wide permissions only:
 *
 * | Route | What |
 * |---|---|
 * | `POST /svc-admin/authz/shadow` `{userId, orgId?, permission, resource?, context?, legacyDecision}` | records one agreement or divergence; answers the legacy decision unchanged |
 * | `GET /svc-admin/authz/shadow/report?from=&to=&permission=` | the ShadowAuthzReport of a time window |
 *
 * A comparison is telemetry, not an admin change: it appends no audit entry. A divergence emits
 * `authz.shadow_divergence` with both decisions and svc's explain trace.
 *
 * @module
 */
import * as v from "valibot";
import { SHADOW_READ_GLOBAL, SHADOW_RECORD_GLOBAL } from "../../core/definitions/permissions/imports.ts";
import { UUID_PATTERN } from "../../core/ids.ts";
import { ShadowRecorder, shadowReport } from "../../core/imports/shadow.ts";
import { fence } from "../auth/fence.ts";
import { documented, errorResponses, type OperationDoc } from "../openapi/operation.ts";
import { parseBody } from "../validate.ts";
import type { AdminRouteDeps } from "./deps.ts";
import { hidden, parseQuery } from "./kit.ts";

const id = (what: string) =>
  v.pipe(v.string(`${what} must be a string`), v.regex(UUID_PATTERN, `${what} must be a UUID`));
const short = v.pipe(v.string(), v.maxLength(200));
const attributes = (what: string) =>
  v.nullish(v.record(v.string(), v.unknown(), `${what} must be an object of attributes`));

/** The body of `POST /svc-admin/authz/shadow`. */
export const ShadowCheckSchema = v.pipe(
  v.strictObject({
    userId: id("userId"),
    orgId: v.nullish(id("orgId")),
    permission: v.pipe(v.string("permission must be a permission id"), v.minLength(1), v.maxLength(300)),
    resource: v.nullish(v.strictObject({
      orgId: v.nullish(short),
      ownerId: v.nullish(short),
      teamIds: v.nullish(v.pipe(v.array(short), v.maxLength(1000))),
      attributes: attributes("resource.attributes"),
    })),
    context: attributes("context"),
    legacyDecision: v.pipe(
      v.boolean("legacyDecision must be true (allowed) or false (refused)"),
      v.description("What the legacy system decided: true allowed, false refused."),
    ),
  }),
  v.title("ShadowCheck"),
);

/** The answer of a comparison. */
export const ShadowOutcomeSchema = v.pipe(
  v.object({
    legacyDecision: v.pipe(v.boolean(), v.description("The legacy decision, unchanged: enforce this one.")),
    svcDecision: v.picklist(["Allowed", "Denied", "DeniedByDefault"]),
    agreed: v.boolean(),
  }),
  v.title("ShadowOutcome"),
);

/** The ShadowAuthzReport. */
export const ShadowReportSchema = v.pipe(
  v.object({
    agreements: v.number(),
    divergences: v.number(),
    total: v.number(),
    readyForCutover: v.pipe(
      v.boolean(),
      v.description("True only with zero divergences over a non-empty sample."),
    ),
  }),
  v.title("ShadowAuthzReport"),
);

const isoTime = (what: string) =>
  v.pipe(
    v.string(),
    v.isoTimestamp(`${what} must be an ISO 8601 time with a zone (2026-01-31T12:00:00Z)`),
    v.transform((s) => new Date(s)),
  );

/** The query of the report. */
export const ShadowReportQuerySchema = v.strictObject({
  from: v.optional(v.pipe(isoTime("from"), v.description("Comparisons at or after this time."))),
  to: v.optional(v.pipe(isoTime("to"), v.description("Comparisons before this time."))),
  permission: v.optional(
    v.pipe(v.string(), v.minLength(1), v.maxLength(300), v.description("Only this permission.")),
  ),
});

const TAGS = ["Admin: imports"];

/** The shadow-mode routes. */
export function shadowRoutes(deps: AdminRouteDeps) {
  return documented((app, appDeps) => {
    const recorder = new ShadowRecorder({
      snapshot: (userId, orgId) => deps.snapshots.get(userId, orgId),
      events: { transaction: (work) => deps.publisher.transaction(work, deps.storage) },
      clock: appDeps.clock,
    });

    app.post("/svc-admin/authz/shadow", async (c) => {
      const scope = await fence(
        c,
        deps.snapshots,
        { global: [SHADOW_RECORD_GLOBAL] },
        "You may not record shadow comparisons.",
      );
      const body = await parseBody(c, ShadowCheckSchema);
      const outcome = await recorder.compare({
        realmId: scope.principal.realmId,
        userId: body.userId,
        orgId: body.orgId ?? null,
        permission: body.permission,
        resource: body.resource ?? null,
        context: body.context ?? null,
        legacyDecision: body.legacyDecision,
      });
      if (outcome === null) throw hidden("user");
      return c.json(outcome);
    });

    app.get("/svc-admin/authz/shadow/report", async (c) => {
      const scope = await fence(
        c,
        deps.snapshots,
        { global: [SHADOW_READ_GLOBAL, SHADOW_RECORD_GLOBAL] },
        "You may not read the shadow report.",
      );
      const query = parseQuery(c, ShadowReportQuerySchema);
      const tally = await deps.storage.shadowComparisons.tally(scope.principal.realmId, query);
      return c.json(shadowReport(tally));
    });
  }, OPERATIONS);
}

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "POST",
    path: "/svc-admin/authz/shadow",
    summary: "Shadow mode: compare a legacy decision with svc's and record the agreement or divergence",
    description:
      "Answers the legacy decision unchanged. A divergence emits authz.shadow_divergence with the trace.",
    tags: TAGS,
    permissions: [SHADOW_RECORD_GLOBAL],
    body: ShadowCheckSchema,
    responses: {
      200: { description: "The legacy decision, svc's, and whether they agree", body: ShadowOutcomeSchema },
      ...errorResponses(400, 401, 403, 404),
    },
  },
  {
    method: "GET",
    path: "/svc-admin/authz/shadow/report",
    summary: "Shadow mode report: agreements, divergences, ready for cutover",
    tags: TAGS,
    permissions: [SHADOW_READ_GLOBAL, SHADOW_RECORD_GLOBAL],
    query: ShadowReportQuerySchema,
    responses: {
      200: { description: "The ShadowAuthzReport", body: ShadowReportSchema },
      ...errorResponses(400, 401, 403),
    },
  },
];
