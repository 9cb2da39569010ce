/**
 * The permission universe of the authority rule: the concrete permission ids that carry power
 * svc knows of (svc's own `svc:` permissions and every plugin's). Patterns are judged through
 * the ids of the universe they match: a pattern matching no published id hands out nothing svc
 * or a plugin checks.
 *
 * @module
 */
import { parsePermissionIdCached, type PermissionId } from "../authz/mod.ts";

/** The concrete permission ids the authority rule judges, parsed, unique and sorted. */
export type PermissionUniverse = readonly PermissionId[];

/**
 * The universe of `ids` (svc's permissions, then the plugins'): duplicates count once, malformed
 * ids are dropped (they grant nothing; definition sync refuses them).
 */
export function permissionUniverse(ids: Iterable<string>): PermissionUniverse {
  const parsed = new Map<string, PermissionId>();
  for (const id of ids) {
    if (parsed.has(id)) continue;
    try {
      parsed.set(id, parsePermissionIdCached(id));
    } catch {
      // A malformed id grants nothing.
    }
  }
  return Object.freeze([...parsed.values()].sort((a, b) => a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
}
