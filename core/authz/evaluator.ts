/**
 * The evaluator: compiles a subject snapshot once, then answers access checks.
 *
 * Each grant is judged in order pattern → scope → condition; the decision is
 * `Denied` when any applicable grant denies, else `Allowed` when any applicable grant
 * allows, else `DeniedByDefault`. Asking for a trace never changes the decision.
 *
 * @module
 */
import { SvcError } from "../errors.ts";
import type { ConditionBags } from "./condition.ts";
import { SnapshotFormatError } from "./errors.ts";
import { type CompiledGrant, compileGrant, type Grant, type InvalidGrant, isPlainObject } from "./grant.ts";
import { type Bucket, buildGrantIndex, type GrantIndex, SCOPE_BITS, type Slot } from "./index.ts";
import { segmentMatches } from "./pattern.ts";
import { type PermissionId, parsePermissionIdCached } from "./permission.ts";

/** The per-(user, organization) input of the evaluator. */
export interface SubjectSnapshot {
  /** The subject (user) id. */
  id: string;
  /** The effective organization (from the token), or null. */
  orgId: string | null;
  /** The subject's team ids. */
  teamIds: readonly string[];
  /** The subject's ABAC attributes. */
  attributes: Record<string, unknown>;
  /** The flattened grants. */
  grants: readonly Grant[];
}

/** One access check. Absent optional fields mean null or empty. */
export interface AccessCheck {
  /** A concrete permission id, `service:scope:action`. */
  permission: string;
  /** The resource's organization. */
  resourceOrgId?: string | null;
  /** The resource's owner (for `self`). */
  resourceOwnerId?: string | null;
  /** The resource's teams (for `team` and team-restricted grants). */
  resourceTeamIds?: readonly string[] | null;
  /** Extra resource attributes for conditions. */
  resourceAttributes?: Record<string, unknown> | null;
  /** Context attributes for conditions. */
  context?: Record<string, unknown> | null;
}

/** The answer to a check. */
export type Decision = "Allowed" | "Denied" | "DeniedByDefault";

/** What happened to one grant during a check. */
export type GrantOutcome = "PatternMismatch" | "ScopeNotApplicable" | "ConditionFailed" | "Allowed" | "Denied";

/** The result of {@link evaluate}. */
export interface EvaluationResult {
  /** The decision. */
  readonly decision: Decision;
  /** One outcome per grant, in grant order; only when a trace was asked for. */
  readonly trace?: GrantOutcome[];
}

/** Options of {@link evaluate}. */
export interface EvaluateOptions {
  /** Also return the per-grant outcomes. */
  trace?: boolean;
}

/** A compiled subject: validated grants plus the grant index. Immutable. */
export interface CompiledSubject {
  /** The subject id. */
  readonly id: string;
  /** The effective organization, or null. */
  readonly orgId: string | null;
  /** The subject's team ids. */
  readonly teamIds: readonly string[];
  /** The subject's attributes (a shallow copy). */
  readonly attributes: Readonly<Record<string, unknown>>;
  /** The compiled grants; trace entries correspond to these positions. */
  readonly grants: readonly CompiledGrant[];
  /** The grant index. */
  readonly index: GrantIndex;
  /** The subject's team ids as a set. @internal */
  readonly teamSet: ReadonlySet<string>;
  /** The condition bag `{ id, orgId, teamIds, ...attributes }`. @internal */
  readonly bag: Readonly<Record<string, unknown>>;
}

const EMPTY_OBJECT: Readonly<Record<string, unknown>> = Object.freeze({});
const EMPTY_LIST: readonly string[] = Object.freeze([]);

function validateSnapshot(snapshot: SubjectSnapshot): void {
  if (snapshot === null || typeof snapshot !== "object") {
    throw new SnapshotFormatError("", "A subject snapshot must be an object.");
  }
  if (typeof snapshot.id !== "string") throw new SnapshotFormatError("id", "A subject's id must be a string.");
  const { orgId, teamIds, attributes, grants } = snapshot;
  if (orgId !== undefined && orgId !== null && typeof orgId !== "string") {
    throw new SnapshotFormatError("orgId", "A subject's orgId must be a string or null.");
  }
  if (
    teamIds !== undefined && teamIds !== null &&
    (!Array.isArray(teamIds) || teamIds.some((team) => typeof team !== "string"))
  ) {
    throw new SnapshotFormatError("teamIds", "A subject's teamIds must be a list of strings.");
  }
  if (attributes !== undefined && attributes !== null && !isPlainObject(attributes)) {
    throw new SnapshotFormatError("attributes", "A subject's attributes must be a plain object.");
  }
  if (grants !== undefined && grants !== null && !Array.isArray(grants)) {
    throw new SnapshotFormatError("grants", "A subject's grants must be a list.");
  }
}

function build(snapshot: SubjectSnapshot, grants: CompiledGrant[]): CompiledSubject {
  const orgId = snapshot.orgId ?? null;
  const teamIds = Object.freeze([...(snapshot.teamIds ?? EMPTY_LIST)]);
  const attributes = Object.freeze({ ...(snapshot.attributes ?? EMPTY_OBJECT) });
  const frozenGrants = Object.freeze(grants);
  return Object.freeze({
    id: snapshot.id,
    orgId,
    teamIds,
    attributes,
    grants: frozenGrants,
    index: buildGrantIndex(frozenGrants),
    teamSet: new Set(teamIds),
    bag: Object.freeze({ id: snapshot.id, orgId, teamIds, ...attributes }),
  });
}

/**
 * Validates and compiles a subject snapshot.
 *
 * @throws {SnapshotFormatError} when the snapshot itself is malformed.
 * @throws {PermissionFormatError | ConditionFormatError | GrantFormatError} on the
 *   first invalid grant.
 */
export function compileSubject(snapshot: SubjectSnapshot): CompiledSubject {
  validateSnapshot(snapshot);
  return build(snapshot, (snapshot.grants ?? []).map(compileGrant));
}

/**
 * Compiles a subject snapshot, skipping invalid grants and reporting them (login must
 * not fail on a bad row). The compiled subject's `grants` (and so trace positions)
 * are the valid grants only, in their original relative order.
 *
 * @throws {SnapshotFormatError} when the snapshot itself is malformed.
 */
export function compileSubjectLenient(
  snapshot: SubjectSnapshot,
): { subject: CompiledSubject; invalid: InvalidGrant[] } {
  validateSnapshot(snapshot);
  const compiled: CompiledGrant[] = [];
  const invalid: InvalidGrant[] = [];
  (snapshot.grants ?? []).forEach((grant, index) => {
    try {
      compiled.push(compileGrant(grant));
    } catch (error) {
      if (!(error instanceof SvcError)) throw error;
      invalid.push(Object.freeze({ index, grant, error }));
    }
  });
  return { subject: build(snapshot, compiled), invalid };
}

// ---------------------------------------------------------------------------
// Judging one grant.

const PATTERN_MISMATCH = 0, SCOPE_NOT_APPLICABLE = 1, CONDITION_FAILED = 2, APPLICABLE = 3;

/** Condition bags of the check being evaluated, built on first need. */
let scratchBags: ConditionBags | null = null;

function bagsFor(subject: CompiledSubject, check: AccessCheck): ConditionBags {
  if (scratchBags === null) {
    const attributes = check.resourceAttributes;
    scratchBags = {
      subject: subject.bag,
      resource: {
        orgId: check.resourceOrgId ?? null,
        ownerId: check.resourceOwnerId ?? null,
        teamIds: check.resourceTeamIds ?? EMPTY_LIST,
        ...(isPlainObject(attributes) ? attributes : EMPTY_OBJECT),
      },
      context: check.context ?? EMPTY_OBJECT,
    };
  }
  return scratchBags;
}

function intersects(list: readonly string[] | null | undefined, set: ReadonlySet<string>): boolean {
  if (!Array.isArray(list)) return false;
  for (let i = 0; i < list.length; i++) if (set.has(list[i])) return true;
  return false;
}

/** The resource org, when given, equals the effective org. */
function resourceInEffectiveOrg(subject: CompiledSubject, check: AccessCheck): boolean {
  const resourceOrg = check.resourceOrgId;
  return resourceOrg === undefined || resourceOrg === null || resourceOrg === subject.orgId;
}

function judge(slot: Slot, id: PermissionId, scopeBit: number, subject: CompiledSubject, check: AccessCheck): number {
  // 1. Pattern (concrete segments were matched by the bucket).
  if ((slot.scopeMask & scopeBit) === 0) return PATTERN_MISMATCH;
  if (slot.serviceWildcard !== null && !segmentMatches(slot.serviceWildcard, id.service)) return PATTERN_MISMATCH;
  if (slot.actionWildcard !== null && !segmentMatches(slot.actionWildcard, id.action)) return PATTERN_MISMATCH;
  // 2. Scope.
  const grant = slot.grant;
  if (grant.orgId !== null && grant.orgId !== subject.orgId) return SCOPE_NOT_APPLICABLE;
  const grantTeams = grant.teamIds;
  if (grantTeams !== null && !intersects(check.resourceTeamIds, grantTeams)) return SCOPE_NOT_APPLICABLE;
  switch (id.scope) {
    case "global":
      break;
    case "org":
      if (subject.orgId === null || !resourceInEffectiveOrg(subject, check)) return SCOPE_NOT_APPLICABLE;
      break;
    case "team":
      if (
        !intersects(check.resourceTeamIds, grantTeams ?? subject.teamSet) || !resourceInEffectiveOrg(subject, check)
      ) return SCOPE_NOT_APPLICABLE;
      break;
    case "self": {
      const owner = check.resourceOwnerId;
      if (owner === undefined || owner === null || owner !== subject.id || !resourceInEffectiveOrg(subject, check)) {
        return SCOPE_NOT_APPLICABLE;
      }
      break;
    }
  }
  // 3. Condition.
  if (grant.condition !== null && !grant.condition.evaluate(bagsFor(subject, check))) return CONDITION_FAILED;
  return APPLICABLE;
}

function anyApplicable(
  slots: readonly Slot[] | undefined,
  id: PermissionId,
  scopeBit: number,
  subject: CompiledSubject,
  check: AccessCheck,
): boolean {
  if (slots === undefined) return false;
  for (let i = 0; i < slots.length; i++) {
    if (judge(slots[i], id, scopeBit, subject, check) === APPLICABLE) return true;
  }
  return false;
}

const ALLOWED: EvaluationResult = Object.freeze({ decision: "Allowed" });
const DENIED: EvaluationResult = Object.freeze({ decision: "Denied" });
const DENIED_BY_DEFAULT: EvaluationResult = Object.freeze({ decision: "DeniedByDefault" });

function decide(subject: CompiledSubject, check: AccessCheck, id: PermissionId): EvaluationResult {
  const scopeBit = SCOPE_BITS[id.scope];
  const index = subject.index;
  const entry = index.byService.get(id.service);
  const exact: Bucket | undefined = entry?.byAction.get(id.action);
  const serviceOnly: Bucket | undefined = entry?.wildAction;
  const wild = index.wildService;
  const actionOnly: Bucket | undefined = wild.byAction.get(id.action);
  const anything: Bucket = wild.wildAction;
  if (
    anyApplicable(exact?.denies, id, scopeBit, subject, check) ||
    anyApplicable(serviceOnly?.denies, id, scopeBit, subject, check) ||
    anyApplicable(actionOnly?.denies, id, scopeBit, subject, check) ||
    anyApplicable(anything.denies, id, scopeBit, subject, check)
  ) return DENIED;
  if (
    anyApplicable(exact?.allows, id, scopeBit, subject, check) ||
    anyApplicable(serviceOnly?.allows, id, scopeBit, subject, check) ||
    anyApplicable(actionOnly?.allows, id, scopeBit, subject, check) ||
    anyApplicable(anything.allows, id, scopeBit, subject, check)
  ) return ALLOWED;
  return DENIED_BY_DEFAULT;
}

function decideWithTrace(subject: CompiledSubject, check: AccessCheck, id: PermissionId): EvaluationResult {
  const scopeBit = SCOPE_BITS[id.scope];
  const trace: GrantOutcome[] = new Array(subject.grants.length).fill("PatternMismatch");
  let denied = false, allowed = false;
  const visit = (slots: readonly Slot[] | undefined) => {
    if (slots === undefined) return;
    for (const slot of slots) {
      const code = judge(slot, id, scopeBit, subject, check);
      if (code === APPLICABLE) {
        trace[slot.position] = slot.deny ? "Denied" : "Allowed";
        if (slot.deny) denied = true;
        else allowed = true;
      } else {
        trace[slot.position] = code === PATTERN_MISMATCH
          ? "PatternMismatch"
          : code === SCOPE_NOT_APPLICABLE
          ? "ScopeNotApplicable"
          : "ConditionFailed";
      }
    }
  };
  const entry = subject.index.byService.get(id.service);
  for (const bucket of [entry?.byAction.get(id.action), entry?.wildAction]) {
    visit(bucket?.denies);
    visit(bucket?.allows);
  }
  const wild = subject.index.wildService;
  for (const bucket of [wild.byAction.get(id.action), wild.wildAction]) {
    visit(bucket?.denies);
    visit(bucket?.allows);
  }
  return { decision: denied ? "Denied" : allowed ? "Allowed" : "DeniedByDefault", trace };
}

/**
 * Checks one permission for a compiled subject. Without a trace the result object is
 * shared and frozen (no per-check allocation unless a condition needs its bags).
 *
 * @throws {PermissionFormatError} when `check.permission` is not a valid permission id.
 */
export function evaluate(
  subject: CompiledSubject,
  check: AccessCheck,
  options?: EvaluateOptions,
): EvaluationResult {
  const id = parsePermissionIdCached(check.permission);
  scratchBags = null;
  const result = options?.trace === true ? decideWithTrace(subject, check, id) : decide(subject, check, id);
  scratchBags = null;
  return result;
}
