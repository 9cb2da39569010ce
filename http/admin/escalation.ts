/**
 * The privilege escalation guard of the admin API: a caller may create or add a grant, or assign
 * a role, only when they hold every `svc:` permission the grant patterns could match.
 *
 * "Could match": every published `svc:` permission (svc's own list, plus any `svc:` id in the
 * permission catalog) that one of the patterns matches, whatever the grant's effect or condition
 * (a condition only narrows a grant, so it is judged as if it always held).
 *
 * "Hold": the caller's subject snapshot allows the permission where the grant will apply:
 *
 * - an organization administrator (the `svc:org:` fence): in their own organization, so a
 *   grant pinned to it (an org-level role) can never carry `svc:global:` permissions they lack;
 * - a realm administrator (the `svc:global:` fence) granting in organization O: as they would
 *   hold it in O (their realm-wide grants and their grants in O);
 * - a realm administrator granting realm-wide (a realm-level role or policy, a realm-wide
 *   assignment): by their realm-wide grants only, with no organization pin applying (a grant
 *   valid in every organization needs a holder in every organization).
 *
 * A refusal is 403 `escalation_refused`, with the permissions the caller lacks in
 * `details.missing`.
 *
 * @module
 */
import {
  type CompiledSubject,
  compileSubjectLenient,
  evaluate,
  parsePermissionIdCached,
  parsePermissionPattern,
  type PermissionId,
} from "../../core/authz/mod.ts";
import { SVC_PERMISSIONS } from "../../core/definitions/svc-permissions.ts";
import { ForbiddenError, SvcError } from "../../core/errors.ts";
import type { SubjectSnapshots } from "../../core/snapshots/service.ts";
import type { Storage } from "../../storage/storage.ts";
import type { FenceScope } from "../auth/fence.ts";

/** The caller tried to grant or assign a `svc:` permission they do not hold. */
export class EscalationRefusedError extends SvcError {
  constructor(missing: readonly string[]) {
    super(
      "escalation_refused",
      `You cannot grant permissions you do not hold yourself: ${missing.join(", ")}.`,
      403,
      { missing: [...missing] },
    );
  }
}

/**
 * The effective organization of a realm-wide check: not an organization id, so that no grant
 * pinned to an organization applies, while org-scoped permissions are still judged.
 */
const EVERY_ORGANIZATION = "(every organization)";

/** The published `svc:` permissions: svc's own and any `svc:` id of the catalog. */
async function publishedSvcPermissions(storage: Storage): Promise<PermissionId[]> {
  const ids = new Set(SVC_PERMISSIONS.map((p) => p.id));
  for (const entry of await storage.permissionCatalog.listActive()) {
    if (entry.permissionId.startsWith("svc:")) ids.add(entry.permissionId);
  }
  const parsed: PermissionId[] = [];
  for (const id of [...ids].sort()) {
    try {
      parsed.push(parsePermissionIdCached(id));
    } catch {
      // A malformed catalog row grants nothing and is refused by definition sync.
    }
  }
  return parsed;
}

/** The caller's compiled subject where the grants will apply (see the module doc). */
async function callerSubject(
  snapshots: SubjectSnapshots,
  scope: FenceScope,
  targetOrgId: string | null,
): Promise<CompiledSubject> {
  const { principal } = scope;
  const orgId = scope.global ? targetOrgId : scope.orgId;
  const built = await snapshots.get(principal.userId, orgId);
  if (built === null || built.realmId !== principal.realmId) throw new ForbiddenError();
  if (orgId !== null) return built.subject;
  return compileSubjectLenient({ ...built.snapshot, orgId: EVERY_ORGANIZATION }).subject;
}

/** Judges grant patterns against what the caller holds where the grants apply. */
export interface EscalationGuard {
  /**
   * Throws 403 `escalation_refused` unless the caller holds every published `svc:` permission
   * one of `patterns` matches. Patterns are valid (checked before); an empty list passes.
   */
  refuse(patterns: readonly string[]): void;
}

/**
 * The guard of the caller (`scope`) for grants applying in `targetOrgId` (the organization the
 * grants are pinned to; null: realm-wide). Build it before the change's transaction (it reads the
 * caller's snapshot and the catalog), use it inside on the rows the transaction reads.
 */
export async function escalationGuard(
  deps: { readonly storage: Storage; readonly snapshots: SubjectSnapshots },
  scope: FenceScope,
  targetOrgId: string | null,
): Promise<EscalationGuard> {
  const published = await publishedSvcPermissions(deps.storage);
  const subject = await callerSubject(deps.snapshots, scope, targetOrgId);
  const held = (id: PermissionId) =>
    evaluate(subject, { permission: id.text, resourceOwnerId: subject.id }).decision === "Allowed";
  return {
    refuse(patterns) {
      const compiled = patterns.map((pattern) => parsePermissionPattern(pattern));
      const missing = published
        .filter((id) => compiled.some((pattern) => pattern.matches(id)) && !held(id))
        .map((id) => id.text);
      if (missing.length > 0) throw new EscalationRefusedError(missing);
    },
  };
}
