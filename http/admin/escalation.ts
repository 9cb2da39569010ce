/**
 * The privilege escalation guard of the admin API: a caller may create or add a grant, or assign
 * a role, only when it may hand out every permission of the universe (svc's `svc:` permissions
 * and every plugin's) the grant patterns could match, where the grants will apply. The rule is
 * the authority module's (`core/authority`, (a)); this guard asks it through the admin adapter
 * (`./authority.ts`).
 *
 * "Could match": whatever the grant's effect or condition (a condition only narrows a grant, so
 * it is judged as if it always held). "Where": the organization the grants are pinned to, or
 * realm-wide. An organization administrator hands out only what it holds in its own
 * organization, never a `global` permission (svc's or a plugin's: realm-only for organization
 * administrators), and nothing realm-wide; a realm administrator hands out in organization O
 * what it holds there, and realm-wide what its unpinned grants give it in every organization.
 *
 * A refusal is 403 `escalation_refused`, with the permissions the caller lacks in
 * `details.missing`.
 *
 * @module
 */
import type { FenceScope } from "../auth/fence.ts";
import { type AuthorityDeps, authorityOf, EscalationRefusedError } from "./authority.ts";

/** The caller tried to grant or assign a permission they may not hand out (403 `escalation_refused`). */
export { EscalationRefusedError } from "./authority.ts";

/** Judges grant patterns against what the caller holds where the grants apply. */
export interface EscalationGuard {
  /**
   * Throws 403 `escalation_refused` unless the caller may hand out every universe permission
   * one of `patterns` matches. Patterns are valid (checked before); an empty list passes.
   */
  refuse(patterns: readonly string[]): void;
}

/**
 * The guard of the caller (`scope`) for grants applying in `targetOrgId` (the organization the
 * grants are pinned to; null: realm-wide). Build it before the change's transaction (it reads the
 * caller's grants and the catalog), use it inside on the rows the transaction reads.
 */
export async function escalationGuard(
  deps: AuthorityDeps,
  scope: FenceScope,
  targetOrgId: string | null,
): Promise<EscalationGuard> {
  const context = targetOrgId === null ? null : targetOrgId.toLowerCase();
  const authority = await authorityOf(deps, scope, [context]);
  return {
    refuse(patterns) {
      const missing = authority.missingToGrant(patterns, context);
      if (missing.length > 0) throw new EscalationRefusedError(missing);
    },
  };
}
