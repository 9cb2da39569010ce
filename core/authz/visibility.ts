/**
 * List visibility: can a list of `service:scope:action` rows in the subject's
 * effective org be shown whole (`Granted`), must it be filtered row by row
 * (`Conditional`), or is it empty (`None`)? Never broader than the per-row check.
 *
 * @module
 */
import type { CompiledSubject } from "./evaluator.ts";
import { forEachCandidateBucket, SCOPE_BITS, type Slot } from "./index.ts";
import { segmentMatches } from "./pattern.ts";
import { parsePermissionIdCached, type Scope } from "./permission.ts";

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
export function visibility(subject: CompiledSubject, service: string, action: string, scope: Scope): Visibility {
  const id = parsePermissionIdCached(`${service}:${scope}:${action}`);
  if (scope === "org" && subject.orgId === null) return "None";
  const scopeBit = SCOPE_BITS[id.scope];
  let anyAllow = false, plainAllow = false, anyDeny = false, plainDeny = false;
  const visitSlots = (slots: readonly Slot[]) => {
    for (const slot of slots) {
      if ((slot.scopeMask & scopeBit) === 0) continue;
      if (slot.serviceWildcard !== null && !segmentMatches(slot.serviceWildcard, id.service)) continue;
      if (slot.actionWildcard !== null && !segmentMatches(slot.actionWildcard, id.action)) continue;
      const grant = slot.grant;
      if (grant.orgId !== null && grant.orgId !== subject.orgId) continue;
      const plain = grant.condition === null && grant.teamIds === null;
      if (slot.deny) {
        anyDeny = true;
        if (plain) plainDeny = true;
      } else {
        anyAllow = true;
        if (plain) plainAllow = true;
      }
    }
  };
  forEachCandidateBucket(subject.index, id.service, id.action, (bucket) => {
    visitSlots(bucket.denies);
    visitSlots(bucket.allows);
  });
  if (plainDeny && (scope === "global" || scope === "org")) return "None";
  if (!anyAllow) return "None";
  if (scope === "team" || scope === "self") return "Conditional";
  if (plainAllow && !anyDeny) return "Granted";
  return "Conditional";
}
