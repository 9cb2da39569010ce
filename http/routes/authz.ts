/**
 * Authorization endpoints: `POST /svc-admin/authz/inspect` explains a decision grant by
 * grant from a freshly built snapshot (never the cache), fenced by `svc:global:authz-inspect`
 * (any user of the caller's realm) or `svc:org:authz-inspect` (members of the caller's own
 * organization); `GET /profile/permissions` returns the caller's allow-effect patterns and
 * team ids, nothing else.
 *
 * @module
 */
import * as v from "valibot";
import { type AccessCheck, evaluate } from "../../core/authz/mod.ts";
import { AUTHZ_INSPECT_GLOBAL, AUTHZ_INSPECT_ORG } from "../../core/definitions/svc-permissions.ts";
import { ForbiddenError, NotFoundError } from "../../core/errors.ts";
import type { SubjectSnapshots } from "../../core/snapshots/service.ts";
import {
  documented,
  type DocumentedInstaller,
  errorResponses,
  type OperationDoc,
} from "../openapi/operation.ts";
import { covers, fence } from "../auth/fence.ts";
import { requirePrincipal } from "../auth/principal.ts";
import { parseBody } from "../validate.ts";
import { UUID_PATTERN } from "../../core/ids.ts";

const id = (what: string) =>
  v.pipe(v.string(`${what} must be a string`), v.regex(UUID_PATTERN, `${what} must be a UUID`));
const attributes = (what: string) =>
  v.nullish(v.record(v.string(), v.unknown(), `${what} must be an object of attributes`));

/** The body of `POST /svc-admin/authz/inspect`. */
export const InspectRequestSchema = v.strictObject({
  userId: id("userId"),
  orgId: v.nullish(id("orgId")),
  check: v.strictObject({
    permission: v.pipe(v.string("check.permission must be a permission id"), v.maxLength(300)),
    resourceOrgId: v.nullish(v.pipe(v.string(), v.maxLength(200))),
    resourceOwnerId: v.nullish(v.pipe(v.string(), v.maxLength(200))),
    resourceTeamIds: v.nullish(v.pipe(v.array(v.pipe(v.string(), v.maxLength(200))), v.maxLength(1000))),
    resourceAttributes: attributes("check.resourceAttributes"),
    context: attributes("check.context"),
  }),
});

/** The answer of `POST /svc-admin/authz/inspect`. */
export const InspectResponseSchema = v.pipe(
  v.object({
    decision: v.picklist(["Allowed", "Denied", "DeniedByDefault"]),
    userId: v.string(),
    orgId: v.nullable(v.string()),
    permission: v.string(),
    grants: v.array(
      v.object({
        pattern: v.string(),
        effect: v.picklist(["Allow", "Deny"]),
        source: v.pipe(v.string(), v.description("Where the grant comes from (`role:<key>`…).")),
        orgId: v.nullable(v.string()),
        teamIds: v.array(v.string()),
        condition: v.pipe(v.unknown(), v.description("The grant's condition, or null.")),
        outcome: v.picklist([
          "PatternMismatch",
          "ScopeNotApplicable",
          "ConditionFailed",
          "Allowed",
          "Denied",
        ]),
      }),
    ),
    skippedGrants: v.array(
      v.object({ source: v.string(), pattern: v.string(), code: v.string(), message: v.string() }),
    ),
    snapshot: v.object({ teamIds: v.array(v.string()), builtAt: v.string() }),
  }),
  v.title("InspectResponse"),
);

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "POST",
    path: "/svc-admin/authz/inspect",
    summary: "Explain an authorization decision grant by grant",
    description:
      "From a freshly built snapshot. An organization's inspector sees members of its organization only.",
    tags: ["Authorization"],
    permissions: [AUTHZ_INSPECT_GLOBAL, AUTHZ_INSPECT_ORG],
    body: InspectRequestSchema,
    responses: {
      200: { description: "The decision and every grant's outcome", body: InspectResponseSchema },
      ...errorResponses(400, 401, 403, 404),
    },
  },
  {
    method: "GET",
    path: "/profile/permissions",
    summary: "The caller's allowed permission patterns and teams",
    tags: ["Profile"],
    responses: {
      200: {
        description: "Allow-effect patterns and team ids",
        body: v.object({ permissions: v.array(v.string()), teamIds: v.array(v.string()) }),
      },
      ...errorResponses(401, 404),
    },
  },
];

/** The authorization routes, over one instance's snapshot provider. */
export function authzRoutes(snapshots: SubjectSnapshots): DocumentedInstaller {
  return documented((app) => {
    app.post("/svc-admin/authz/inspect", async (c) => {
      await requirePrincipal(c);
      const body = await parseBody(c, InspectRequestSchema);
      const orgId = body.orgId ?? null;
      const check: AccessCheck = body.check;

      const refusal = "You may not inspect authorization decisions.";
      const scope = await fence(
        c,
        snapshots,
        { global: [AUTHZ_INSPECT_GLOBAL], org: [AUTHZ_INSPECT_ORG] },
        refusal,
      );
      if (!covers(scope, orgId)) {
        // Realm-level decisions need the global permission (403); another organization is
        // invisible to an organization's inspector (404, as an unknown one).
        if (orgId === null) throw new ForbiddenError(refusal);
        throw new NotFoundError("No such user.");
      }

      const target = await snapshots.fresh(body.userId, orgId);
      if (
        target === null || target.realmId !== scope.principal.realmId ||
        (!scope.global && !target.isOrgMember)
      ) {
        throw new NotFoundError("No such user.");
      }
      const result = evaluate(target.subject, check, { trace: true });
      const trace = result.trace ?? [];
      return c.json({
        decision: result.decision,
        userId: body.userId,
        orgId,
        permission: check.permission,
        grants: target.subject.grants.map((compiled, index) => ({
          pattern: compiled.grant.pattern,
          effect: compiled.effect,
          source: compiled.source,
          orgId: compiled.orgId,
          teamIds: compiled.teamIds === null ? [] : [...compiled.teamIds],
          condition: compiled.grant.condition ?? null,
          outcome: trace[index],
        })),
        skippedGrants: target.skipped,
        snapshot: { teamIds: target.subject.teamIds, builtAt: new Date(target.builtAt).toISOString() },
      });
    });

    // The answer of a compiled subject, computed once per snapshot (a snapshot never changes: a
    // change of the user's grants builds a new one).
    const answers = new WeakMap<object, { permissions: string[]; teamIds: readonly string[] }>();
    app.get("/profile/permissions", async (c) => {
      const principal = await requirePrincipal(c);
      const built = await snapshots.get(principal.userId, principal.orgId);
      if (built === null) throw new NotFoundError("No such user.");
      let answer = answers.get(built.subject);
      if (answer === undefined) {
        const permissions = [
          ...new Set(built.subject.grants.filter((g) => g.effect === "Allow").map((g) => g.grant.pattern)),
        ];
        answer = { permissions, teamIds: built.subject.teamIds };
        answers.set(built.subject, answer);
      }
      return c.json(answer);
    });
  }, OPERATIONS);
}
