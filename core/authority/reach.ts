/**
 * The reach of a subject: every permission of the universe it may hold, in every context it
 * holds it. Over-approximated on purpose (the side that refuses more): every Allow grant counts
 * whatever its condition or team restriction; only a plain Deny (no condition, no team
 * restriction) takes a permission out, where it applies (an unpinned one everywhere, a pinned
 * one in its organization).
 *
 * @module
 */
import { type CompiledGrant, compileGrant, type Grant, type PermissionId } from "../authz/mod.ts";
import type { PermissionUniverse } from "./universe.ts";

/**
 * One permission a subject reaches, where: `context` null is realm-wide (an unpinned grant:
 * every organization), else the organization the grant is pinned to.
 */
export interface Reached {
  /** The concrete permission id. */
  readonly permission: string;
  /** Null: realm-wide; else the (lower-cased) organization id. */
  readonly context: string | null;
}

/**
 * Every (permission, context) of `universe` the Allow grants of `grants` reach, unique, in
 * universe order then context (realm-wide first). A grant that does not compile reaches nothing.
 */
export function reachOf(grants: readonly Grant[], universe: PermissionUniverse): Reached[] {
  const byContext = new Map<string | null, Set<string>>();
  const denies: CompiledGrant[] = [];
  const allows: CompiledGrant[] = [];
  for (const grant of grants) {
    try {
      const compiled = compileGrant(grant);
      if (compiled.effect === "Allow") allows.push(compiled);
      else if (compiled.condition === null && compiled.teamIds === null) denies.push(compiled);
    } catch {
      // A grant that does not compile grants (and denies) nothing.
    }
  }
  const denied = (id: PermissionId, context: string | null) =>
    denies.some((deny) =>
      (deny.orgId === null || deny.orgId.toLowerCase() === context) && deny.pattern.matches(id)
    );
  for (const compiled of allows) {
    const context = compiled.orgId === null ? null : compiled.orgId.toLowerCase();
    let set = byContext.get(context);
    for (const id of universe) {
      if (!compiled.pattern.matches(id) || denied(id, context)) continue;
      if (set === undefined) byContext.set(context, set = new Set());
      set.add(id.text);
    }
  }
  const contexts = [...byContext.keys()].sort((a, b) => a === null ? -1 : b === null ? 1 : a < b ? -1 : 1);
  const reached: Reached[] = [];
  for (const id of universe) {
    for (const context of contexts) {
      if (byContext.get(context)!.has(id.text)) reached.push({ permission: id.text, context });
    }
  }
  return reached;
}
