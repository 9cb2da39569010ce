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
import type { RouteInstaller } from "../app.ts";
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

/** The authorization routes, over one instance's snapshot provider. */
export function authzRoutes(snapshots: SubjectSnapshots): RouteInstaller {
  return (app) => {
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
      if (!covers(scope, orgId)) throw new ForbiddenError(refusal);

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

    app.get("/profile/permissions", async (c) => {
      const principal = await requirePrincipal(c);
      const built = await snapshots.get(principal.userId, principal.orgId);
      if (built === null) throw new NotFoundError("No such user.");
      const permissions = [
        ...new Set(built.subject.grants.filter((g) => g.effect === "Allow").map((g) => g.grant.pattern)),
      ];
      return c.json({ permissions, teamIds: built.subject.teamIds });
    });
  };
}
