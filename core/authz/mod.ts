/**
 * The pure authorization engine: permission grammar, condition documents, the
 * evaluator with its grant index, list visibility and the golden-vector runner.
 * Web APIs only; semantics per `authz-semantics.md`.
 *
 * @example
 * ```ts
 * const subject = compileSubject({
 *   id: "u1", orgId: "o1", teamIds: [], attributes: {},
 *   grants: [{ pattern: "docs:org:*", effect: "Allow", source: "role:editor" }],
 * });
 * evaluate(subject, { permission: "docs:org:read", resourceOrgId: "o1" }).decision; // "Allowed"
 * ```
 *
 * @module
 */

/** Errors: `permission_format`, `condition_format`, `grant_format` and `snapshot_format`. */
export {
  ConditionFormatError,
  GrantFormatError,
  PermissionFormatError,
  SnapshotFormatError,
} from "./errors.ts";
/** The reasons a permission id or pattern is rejected. */
export type { PermissionFormatReason } from "./errors.ts";

/** Parses a concrete permission id `service:scope:action`. */
export { parsePermissionId } from "./permission.ts";
/** {@link parsePermissionId} memoized in a small bounded map. */
export { parsePermissionIdCached } from "./permission.ts";
/** The four scopes and a guard for them. */
export { isScope, SCOPES } from "./permission.ts";
/** A scope (`global`, `org`, `team`, `self`) and a parsed permission id. */
export type { PermissionId, Scope } from "./permission.ts";

/** Parses and compiles a permission pattern (at most one `*` per service or action segment). */
export { parsePermissionPattern } from "./pattern.ts";
/** Whether one compiled pattern segment matches a concrete segment. */
export { segmentMatches } from "./pattern.ts";
/** A compiled permission pattern and one of its segments. */
export type { PatternSegment, PermissionPattern } from "./pattern.ts";

/** Validates and compiles a version 1 condition document. */
export { parseConditionDocument } from "./condition.ts";
/** The nine condition operators. */
export { CONDITION_OPERATORS } from "./condition.ts";
/** Condition document shapes, the attribute bags and a compiled condition. */
export type {
  CompiledCondition,
  ConditionBags,
  ConditionDocument,
  ConditionLeaf,
  ConditionNode,
  ConditionOperator,
} from "./condition.ts";

/** Validates and compiles one grant. */
export { compileGrant } from "./grant.ts";
/** A grant, its effect, its compiled form and an invalid-grant report. */
export type { CompiledGrant, Effect, Grant, InvalidGrant } from "./grant.ts";

/** Compiles a subject snapshot, throwing on the first invalid grant. */
export { compileSubject } from "./evaluator.ts";
/** Compiles a subject snapshot, skipping and reporting invalid grants. */
export { compileSubjectLenient } from "./evaluator.ts";
/** Checks one permission for a compiled subject, optionally with a per-grant trace. */
export { evaluate } from "./evaluator.ts";
/** Evaluator inputs and outputs. */
export type {
  AccessCheck,
  CompiledSubject,
  Decision,
  EvaluateOptions,
  EvaluationResult,
  GrantOutcome,
  SubjectSnapshot,
} from "./evaluator.ts";
/** The grant index held by a compiled subject. */
export type { GrantIndex } from "./index.ts";

/** List visibility for (subject, service, action, scope). */
export { visibility } from "./visibility.ts";
/** `Granted`, `Conditional` or `None`. */
export type { Visibility } from "./visibility.ts";

/** Runs one parsed golden-vector file; throws VectorFileError for a malformed file. */
export { runVectorFile, VectorFileError } from "./vectors.ts";
/** One vector case result and the vector file kinds. */
export type { VectorKind, VectorResult } from "./vectors.ts";
