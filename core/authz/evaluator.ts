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
import type { ConditionEnv } from "./condition.ts";
import { SnapshotFormatError } from "./errors.ts";
import { type CompiledGrant, compileGrant, type Grant, type InvalidGrant, isPlainObject } from "./grant.ts";
import {
  buildGrantIndex,
  type GrantIndex,
  resolveCandidates,
  type Resolved,
  type RestrictedCheck,
} from "./index.ts";
import { parsePermissionId, type Scope } from "./permission.ts";

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
export type GrantOutcome =
  | "PatternMismatch"
  | "ScopeNotApplicable"
  | "ConditionFailed"
  | "Allowed"
  | "Denied";

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

/**
 * A compiled subject: validated grants plus the grant index. Immutable as far as
 * decisions go; it memoizes, per permission text, which grants match (bounded).
 */
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
  /**
   * Memo of the grants whose pattern matches a permission id, by permission text
   * (bounded; filled on first use). @internal
   */
  readonly resolved: Map<string, Resolved>;
}

const EMPTY_OBJECT: Readonly<Record<string, unknown>> = Object.freeze({});
const EMPTY_LIST: readonly string[] = Object.freeze([]);

function validateSnapshot(snapshot: SubjectSnapshot): void {
  if (snapshot === null || typeof snapshot !== "object") {
    throw new SnapshotFormatError("", "A subject snapshot must be an object.");
  }
  if (typeof snapshot.id !== "string") {
    throw new SnapshotFormatError("id", "A subject's id must be a string.");
  }
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
    resolved: new Map(),
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
// Resolution: the grants whose pattern matches a permission id.

/** How many permission texts a compiled subject memoizes. */
const RESOLVED_LIMIT = 2048;

/**
 * The grants of `subject` whose pattern matches `permission`, split by effect, in
 * grant order. Served from the subject's memo; on a miss, the permission is parsed and
 * only the index buckets that can match are scanned.
 *
 * @throws {PermissionFormatError} when `permission` is not a valid permission id.
 * @internal
 */
export function resolvePermission(subject: CompiledSubject, permission: string): Resolved {
  const hit = subject.resolved.get(permission);
  if (hit !== undefined) return hit;
  // A condition that reads the subject only is decided once, here, for this compiled subject.
  const resolved = resolveCandidates(
    subject.index,
    parsePermissionId(permission),
    subject.orgId,
    (condition) =>
      condition.evaluate({ subject: subject.bag, resource: EMPTY_OBJECT, context: EMPTY_OBJECT }),
  );
  if (subject.resolved.size < RESOLVED_LIMIT) subject.resolved.set(permission, resolved);
  return resolved;
}

// ---------------------------------------------------------------------------
// Judging one grant whose pattern matches.

const SCOPE_NOT_APPLICABLE = 1, CONDITION_FAILED = 2, APPLICABLE = 3;

/** The condition environment, reused by every check (conditions run synchronously). */
const ENV: ConditionEnv = { subject: null, resource: null, context: null, check: null };

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

/**
 * Steps 2 and 3, grant by grant, for a grant whose pattern matches (step 1 is done by
 * resolution). Used by the traced path; `decide` applies the same rules, regrouped.
 */
function judge(grant: CompiledGrant, scope: Scope, subject: CompiledSubject, check: AccessCheck): number {
  // 2. Scope.
  if (grant.orgId !== null && grant.orgId !== subject.orgId) return SCOPE_NOT_APPLICABLE;
  const grantTeams = grant.teamIds;
  if (grantTeams !== null && !intersects(check.resourceTeamIds, grantTeams)) return SCOPE_NOT_APPLICABLE;
  switch (scope) {
    case "global":
      break;
    case "org":
      if (subject.orgId === null || !resourceInEffectiveOrg(subject, check)) return SCOPE_NOT_APPLICABLE;
      break;
    case "team":
      if (
        !intersects(check.resourceTeamIds, grantTeams ?? subject.teamSet) ||
        !resourceInEffectiveOrg(subject, check)
      ) return SCOPE_NOT_APPLICABLE;
      break;
    case "self": {
      const owner = check.resourceOwnerId;
      if (
        owner === undefined || owner === null || owner !== subject.id ||
        !resourceInEffectiveOrg(subject, check)
      ) {
        return SCOPE_NOT_APPLICABLE;
      }
    }
  }
  // 3. Condition.
  return conditionHolds(grant, subject, check) ? APPLICABLE : CONDITION_FAILED;
}

/** Condition step for one grant, with the reusable environment. */
function conditionHolds(grant: RestrictedCheck, subject: CompiledSubject, check: AccessCheck): boolean {
  const condition = grant.condition;
  if (condition === null) return true;
  ENV.subject = subject.bag;
  ENV.resource = check.resourceAttributes;
  ENV.context = check.context ?? EMPTY_OBJECT;
  ENV.check = check;
  const holds = condition.evaluateEnv(ENV);
  ENV.subject =
    ENV.resource =
    ENV.context =
    ENV.check =
      null;
  return holds;
}

/**
 * Whether one of `grants` applies, given that the check's grant-independent scope
 * requirement holds and the grants are not pinned to another organization: the grant's
 * team restriction, the `team` scope's team test, then the condition.
 */
function anyRestrictedApplies(
  grants: readonly RestrictedCheck[],
  teamScope: boolean,
  subjectTeamsMatch: boolean,
  subject: CompiledSubject,
  check: AccessCheck,
): boolean {
  for (let i = 0; i < grants.length; i++) {
    const grant = grants[i];
    const teams = grant.teamIds;
    if (teams !== null) {
      if (!intersects(check.resourceTeamIds, teams)) continue;
    } else if (teamScope && !subjectTeamsMatch) {
      continue;
    }
    if (conditionHolds(grant, subject, check)) return true;
  }
  return false;
}

const ALLOWED: EvaluationResult = Object.freeze({ decision: "Allowed" });
const DENIED: EvaluationResult = Object.freeze({ decision: "Denied" });
const DENIED_BY_DEFAULT: EvaluationResult = Object.freeze({ decision: "DeniedByDefault" });

/**
 * The decision without a trace. The part of step 2 that does not depend on the grant
 * (effective org, resource org, owner) is tested once; a grant with neither team ids
 * nor a condition then applies at once (`plainDeny`, `plainAllow`), and only
 * team-restricted or conditioned grants are looked at one by one.
 */
function decide(subject: CompiledSubject, check: AccessCheck, resolved: Resolved): EvaluationResult {
  if (resolved.ordered.length === 0) return DENIED_BY_DEFAULT;
  let teamScope = false, subjectTeamsMatch = true;
  switch (resolved.id.scope) {
    case "global":
      break;
    case "org":
      if (subject.orgId === null || !resourceInEffectiveOrg(subject, check)) return DENIED_BY_DEFAULT;
      break;
    case "team":
      if (!resourceInEffectiveOrg(subject, check)) return DENIED_BY_DEFAULT;
      teamScope = true;
      subjectTeamsMatch = intersects(check.resourceTeamIds, subject.teamSet);
      break;
    default: {
      const owner = check.resourceOwnerId;
      if (
        owner === undefined || owner === null || owner !== subject.id ||
        !resourceInEffectiveOrg(subject, check)
      ) {
        return DENIED_BY_DEFAULT;
      }
    }
  }
  if (resolved.plainDeny && subjectTeamsMatch) return DENIED;
  if (anyRestrictedApplies(resolved.restrictedDenies, teamScope, subjectTeamsMatch, subject, check)) {
    return DENIED;
  }
  if (resolved.plainAllow && subjectTeamsMatch) return ALLOWED;
  if (anyRestrictedApplies(resolved.restrictedAllows, teamScope, subjectTeamsMatch, subject, check)) {
    return ALLOWED;
  }
  return DENIED_BY_DEFAULT;
}

function decideWithTrace(subject: CompiledSubject, check: AccessCheck, resolved: Resolved): EvaluationResult {
  const scope = resolved.id.scope;
  const trace: GrantOutcome[] = new Array(subject.grants.length).fill("PatternMismatch");
  let denied = false, allowed = false;
  const positions = resolved.positions;
  const grants = resolved.ordered;
  for (let i = 0; i < grants.length; i++) {
    const grant = grants[i];
    const code = judge(grant, scope, subject, check);
    if (code === APPLICABLE) {
      if (grant.effect === "Deny") {
        trace[positions[i]] = "Denied";
        denied = true;
      } else {
        trace[positions[i]] = "Allowed";
        allowed = true;
      }
    } else {
      trace[positions[i]] = code === SCOPE_NOT_APPLICABLE ? "ScopeNotApplicable" : "ConditionFailed";
    }
  }
  return { decision: denied ? "Denied" : allowed ? "Allowed" : "DeniedByDefault", trace };
}

/**
 * Checks one permission for a compiled subject. Without a trace the result object is
 * shared and frozen, and a check allocates nothing once its permission text has been
 * seen by this subject (the grants matching each permission are memoized per subject).
 *
 * @throws {PermissionFormatError} when `check.permission` is not a valid permission id.
 */
export function evaluate(
  subject: CompiledSubject,
  check: AccessCheck,
  options?: EvaluateOptions,
): EvaluationResult {
  const resolved = resolvePermission(subject, check.permission);
  return options !== undefined && options.trace === true
    ? decideWithTrace(subject, check, resolved)
    : decide(subject, check, resolved);
}
