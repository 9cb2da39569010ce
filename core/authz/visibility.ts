/**
 * List visibility: can a list of `service:scope:action` rows in the subject's
 * effective org be shown whole (`Granted`), must it be filtered row by row
 * (`Conditional`), or is it empty (`None`)? Never broader than the per-row check.
 *
 * @module
 */
import { type CompiledSubject, resolvePermission } from "./evaluator.ts";
import type { Scope } from "./permission.ts";

/** The visibility of a list. */
export type Visibility = "Granted" | "Conditional" | "None";

/**
 * The visibility of `service:scope:action` rows for a compiled subject. A grant is a
 * candidate when its pattern matches the id, its `orgId` (if any) equals the
 * effective org and, for scope `org`, the effective org is not null. Then:
 * 1. an unconditioned, team-less candidate Deny with scope `global` or `org` → `None`;
 * 2. no candidate Allow → `None`;
 * 3. scope `team` or `self` → `Conditional`;
 * 4. an unconditioned, team-less candidate Allow and no candidate Deny → `Granted`;
 * 5. otherwise `Conditional`.
 *
 * @throws {PermissionFormatError} when `service:scope:action` is not a valid permission id.
 */
export function visibility(
  subject: CompiledSubject,
  service: string,
  action: string,
  scope: Scope,
): Visibility {
  const { id, denies, allows } = resolvePermission(subject, `${service}:${scope}:${action}`);
  if (id.scope === "org" && subject.orgId === null) return "None";
  let anyAllow = false, plainAllow = false, anyDeny = false, plainDeny = false;
  for (const grant of denies) {
    if (grant.orgId !== null && grant.orgId !== subject.orgId) continue;
    anyDeny = true;
    if (grant.condition === null && grant.teamIds === null) plainDeny = true;
  }
  for (const grant of allows) {
    if (grant.orgId !== null && grant.orgId !== subject.orgId) continue;
    anyAllow = true;
    if (grant.condition === null && grant.teamIds === null) plainAllow = true;
  }
  if (plainDeny && (id.scope === "global" || id.scope === "org")) return "None";
  if (!anyAllow) return "None";
  if (id.scope === "team" || id.scope === "self") return "Conditional";
  if (plainAllow && !anyDeny) return "Granted";
  return "Conditional";
}
