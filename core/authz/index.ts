/**
 * The grant index of a compiled subject: grants bucketed by service and action so a
 * check touches only grants that can match. Concrete service + concrete action live
 * in nested maps; grants whose service or action holds a `*` are kept apart. Every
 * bucket keeps its grants in original order and split by effect.
 *
 * A permission id is resolved once per compiled subject ({@link resolveCandidates},
 * memoized by the evaluator): only the at most four buckets that can hold matching
 * grants are scanned, and the result keeps only grants whose pattern matches, so a
 * check touches only grants that match its permission.
 *
 * @module
 */
import type { CompiledCondition, ConditionNode } from "./condition.ts";
import type { CompiledGrant } from "./grant.ts";
import { type PatternSegment, segmentMatches } from "./pattern.ts";
import type { PermissionId, Scope } from "./permission.ts";

/** Bit per scope, for a fast scope-segment test. @internal */
export const SCOPE_BITS: Readonly<Record<Scope, number>> = Object.freeze({
  global: 1,
  org: 2,
  team: 4,
  self: 8,
});
const ALL_SCOPES = 15;

/** One indexed grant with the fields the hot path reads. @internal */
export interface Slot {
  /** Position in the subject's grant list. */
  readonly position: number;
  /** The compiled grant. */
  readonly grant: CompiledGrant;
  /** Scope bits the pattern's scope segment accepts. */
  readonly scopeMask: number;
  /** The service segment when it holds a `*`, else null (the bucket already matched it). */
  readonly serviceWildcard: PatternSegment | null;
  /** The action segment when it holds a `*`, else null (the bucket already matched it). */
  readonly actionWildcard: PatternSegment | null;
  /** Whether the effect is Deny. */
  readonly deny: boolean;
}

/** Grants sharing one bucket, in original order, split by effect. @internal */
export interface Bucket {
  /** Deny grants. */
  readonly denies: Slot[];
  /** Allow grants. */
  readonly allows: Slot[];
}

/** Buckets of one service segment kind (a concrete service, or all wildcard services). @internal */
export interface ServiceEntry {
  /** Grants with a concrete action, by action. */
  readonly byAction: Map<string, Bucket>;
  /** Grants with a wildcard action. */
  readonly wildAction: Bucket;
}

/** The index over a subject's grants. */
export interface GrantIndex {
  /** Grants with a concrete service, by service. */
  readonly byService: ReadonlyMap<string, ServiceEntry>;
  /** Grants with a wildcard service. */
  readonly wildService: ServiceEntry;
  /** Number of indexed grants. */
  readonly size: number;
}

function newBucket(): Bucket {
  return { denies: [], allows: [] };
}

function newEntry(): ServiceEntry {
  return { byAction: new Map(), wildAction: newBucket() };
}

/** Builds the index over compiled grants (positions are the array indices). */
export function buildGrantIndex(grants: readonly CompiledGrant[]): GrantIndex {
  const byService = new Map<string, ServiceEntry>();
  const wildService = newEntry();
  grants.forEach((grant, position) => {
    const { service, action, scope } = grant.pattern;
    let entry: ServiceEntry;
    if (service.wildcard) {
      entry = wildService;
    } else {
      entry = byService.get(service.text) ?? newEntry();
      byService.set(service.text, entry);
    }
    let bucket: Bucket;
    if (action.wildcard) {
      bucket = entry.wildAction;
    } else {
      bucket = entry.byAction.get(action.text) ?? newBucket();
      entry.byAction.set(action.text, bucket);
    }
    const slot: Slot = Object.freeze({
      position,
      grant,
      scopeMask: scope === "*" ? ALL_SCOPES : SCOPE_BITS[scope],
      serviceWildcard: service.wildcard ? service : null,
      actionWildcard: action.wildcard ? action : null,
      deny: grant.effect === "Deny",
    });
    (slot.deny ? bucket.denies : bucket.allows).push(slot);
  });
  return Object.freeze({ byService, wildService, size: grants.length });
}

/**
 * Calls `visit` for every bucket that may hold grants matching `service:*:action`
 * (at most four). Exact-segment buckets match by construction; slots carry their
 * wildcard segments for the remaining test.
 */
export function forEachCandidateBucket(
  index: GrantIndex,
  service: string,
  action: string,
  visit: (bucket: Bucket) => void,
): void {
  const entry = index.byService.get(service);
  if (entry !== undefined) {
    const bucket = entry.byAction.get(action);
    if (bucket !== undefined) visit(bucket);
    visit(entry.wildAction);
  }
  const wild = index.wildService;
  const bucket = wild.byAction.get(action);
  if (bucket !== undefined) visit(bucket);
  visit(wild.wildAction);
}

/**
 * The grants whose pattern matches one permission id (all three segments), as the
 * evaluator and visibility consume them. Frozen.
 * @internal
 */
export interface Resolved {
  /** The parsed permission id. */
  readonly id: PermissionId;
  /** Matching Deny grants, in grant order. */
  readonly denies: readonly CompiledGrant[];
  /** Matching Allow grants, in grant order. */
  readonly allows: readonly CompiledGrant[];
  /** All matching grants, in grant order. */
  readonly ordered: readonly CompiledGrant[];
  /** The position in the subject's grant list of each entry of `ordered`. */
  readonly positions: readonly number[];
  /**
   * Whether a matching Deny that is not pinned to another organization has neither
   * team ids nor a condition (so it applies whenever the check's scope requirement holds).
   */
  readonly plainDeny: boolean;
  /** Whether a matching Allow in the same sense exists. */
  readonly plainAllow: boolean;
  /**
   * The other matching Denies not pinned to another organization (team ids or a condition),
   * compacted ({@link compactRestricted}): what decides whether one of them applies, in as few
   * entries as that takes.
   */
  readonly restrictedDenies: readonly RestrictedCheck[];
  /** The other matching Allows in the same sense. */
  readonly restrictedAllows: readonly RestrictedCheck[];
}

/** What the evaluator tests of a team-restricted or conditioned grant. @internal */
export type RestrictedCheck = Pick<CompiledGrant, "teamIds" | "condition">;

/**
 * Whether a condition reads the subject bag only (every `attr` and `ref` path starts with
 * `subject.`): its value is then the same for every check of one compiled subject. Memoized.
 */
const subjectOnlyMemo = new WeakMap<CompiledCondition, boolean>();
export function readsSubjectOnly(condition: CompiledCondition): boolean {
  let known = subjectOnlyMemo.get(condition);
  if (known === undefined) {
    known = nodeReadsSubjectOnly(condition.document.condition);
    subjectOnlyMemo.set(condition, known);
  }
  return known;
}

function nodeReadsSubjectOnly(node: ConditionNode): boolean {
  if ("allOf" in node) return node.allOf.every(nodeReadsSubjectOnly);
  if ("anyOf" in node) return node.anyOf.every(nodeReadsSubjectOnly);
  if ("not" in node) return nodeReadsSubjectOnly(node.not);
  const subjectPath = (path: unknown) => typeof path === "string" && path.startsWith("subject.");
  if (!subjectPath(node.attr)) return false;
  const value = node.value;
  if (value !== null && typeof value === "object" && !Array.isArray(value) && "ref" in value) {
    return subjectPath((value as { ref: unknown }).ref);
  }
  return true;
}

/**
 * The restricted grants of one effect as the checks that decide whether any of them applies
 * (issue 29: the cost of a check must not grow with the number of grants):
 * - a condition that reads the subject only is decided once, with `subjectHolds` (the compiled
 *   subject's bag): false drops the grant, true leaves its team restriction alone (or makes it
 *   plain, reported as `plain`);
 * - the grants with team ids and no condition become one entry whose teams are the union of
 *   theirs (one of them applies exactly when the resource shares a team with the union);
 * - grants with the same team ids and the same condition document are tested once.
 * "Any applies" does not depend on the order, so the decision is unchanged; traces still judge
 * every grant.
 */
export function compactRestricted(
  grants: readonly CompiledGrant[],
  subjectHolds?: (condition: CompiledCondition) => boolean,
): { checks: RestrictedCheck[]; plain: boolean } {
  let union: Set<string> | null = null;
  let plain = false;
  const seen = new Set<string>();
  const out: RestrictedCheck[] = [];
  for (const grant of grants) {
    let condition = grant.condition;
    if (condition !== null && subjectHolds !== undefined && readsSubjectOnly(condition)) {
      if (!subjectHolds(condition)) continue;
      condition = null;
    }
    if (condition === null) {
      if (grant.teamIds === null) {
        plain = true;
        continue;
      }
      union ??= new Set();
      for (const team of grant.teamIds) union.add(team);
      continue;
    }
    const teams = grant.teamIds === null ? null : [...grant.teamIds].sort();
    const key = JSON.stringify([teams, grant.grant.condition ?? null]);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(grant);
  }
  if (union !== null) out.unshift(Object.freeze({ teamIds: union, condition: null }));
  return { checks: out, plain };
}

/**
 * Collects the grants whose pattern matches `id` from the (at most four) buckets that
 * can hold them, testing only the scope bits and the wildcard segments.
 */
export function resolveCandidates(
  index: GrantIndex,
  id: PermissionId,
  effectiveOrg: string | null,
  subjectHolds?: (condition: CompiledCondition) => boolean,
): Resolved {
  const scopeBit = SCOPE_BITS[id.scope];
  const slots: Slot[] = [];
  const take = (list: readonly Slot[]) => {
    for (const slot of list) {
      if ((slot.scopeMask & scopeBit) === 0) continue;
      if (slot.serviceWildcard !== null && !segmentMatches(slot.serviceWildcard, id.service)) continue;
      if (slot.actionWildcard !== null && !segmentMatches(slot.actionWildcard, id.action)) continue;
      slots.push(slot);
    }
  };
  forEachCandidateBucket(index, id.service, id.action, (bucket) => {
    take(bucket.denies);
    take(bucket.allows);
  });
  slots.sort((a, b) => a.position - b.position);
  const ordered = slots.map((slot) => slot.grant);
  const denies = ordered.filter((grant) => grant.effect === "Deny");
  const allows = ordered.filter((grant) => grant.effect !== "Deny");
  // Grants pinned to another organization never apply for this subject.
  const inOrg = (grant: CompiledGrant) => grant.orgId === null || grant.orgId === effectiveOrg;
  const plain = (grant: CompiledGrant) => grant.teamIds === null && grant.condition === null;
  const restrictedDenies = compactRestricted(denies.filter((g) => inOrg(g) && !plain(g)), subjectHolds);
  const restrictedAllows = compactRestricted(allows.filter((g) => inOrg(g) && !plain(g)), subjectHolds);
  return Object.freeze({
    id,
    denies: Object.freeze(denies),
    allows: Object.freeze(allows),
    ordered: Object.freeze(ordered),
    positions: Object.freeze(slots.map((slot) => slot.position)),
    plainDeny: denies.some((grant) => inOrg(grant) && plain(grant)) || restrictedDenies.plain,
    plainAllow: allows.some((grant) => inOrg(grant) && plain(grant)) || restrictedAllows.plain,
    restrictedDenies: Object.freeze(restrictedDenies.checks),
    restrictedAllows: Object.freeze(restrictedAllows.checks),
  });
}
