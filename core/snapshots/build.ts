/**
 * Builds a subject snapshot from stored rows: roles, groups and policies have already been
 * flattened to grant rows (the evaluator knows no roles); here every row is validated and
 * compiled, and invalid rows (bad pattern, bad condition, bad effect) are skipped and
 * reported, never failing the build.
 *
 * @module
 */
import {
  type CompiledSubject,
  compileSubjectLenient,
  type Grant,
  type SubjectSnapshot,
} from "../authz/mod.ts";
import type { SubjectRows } from "../storage/subject-grants.ts";

/** A grant row that was skipped, with the reason. */
export interface SkippedGrant {
  /** Attribution of the row (`role:<key>`…). */
  readonly source: string;
  /** The stored pattern. */
  readonly pattern: string;
  /** The stable code of the format error (`permission_format`, `condition_format`, `grant_format`). */
  readonly code: string;
  /** What is wrong. */
  readonly message: string;
}

/** A built snapshot: the input, its compiled form and what was skipped. */
export interface BuiltSnapshot {
  /** The realm of the user. */
  readonly realmId: string;
  /** Whether the user is a member of the snapshot's organization. */
  readonly isOrgMember: boolean;
  /** The user's status (`Active`, `Suspended`). */
  readonly status: string;
  /** The snapshot given to the evaluator (valid and invalid grants alike, as stored). */
  readonly snapshot: SubjectSnapshot;
  /** The compiled subject (valid grants only). */
  readonly subject: CompiledSubject;
  /** The rows skipped because they are invalid. */
  readonly skipped: readonly SkippedGrant[];
  /** When it was built (clock milliseconds). */
  readonly builtAt: number;
  /** Of a realm-only snapshot: the organizations the subject may hold pinned grants in, when loaded. */
  readonly orgContexts?: readonly string[];
}

/**
 * Flattens and compiles the rows of one (user, organization) pair.
 *
 * @example
 * ```ts
 * import { buildSnapshot, evaluate, type SubjectRows, systemClock as clock } from "@svc/svc";
 *
 * const orgId = crypto.randomUUID();
 * // As `storage.subjectGrants.loadSubject(userId, orgId)` returns them:
 * const rows: SubjectRows = {
 *   userId: crypto.randomUUID(),
 *   realmId: crypto.randomUUID(),
 *   status: "Active",
 *   attributes: {},
 *   isOrgMember: true,
 *   teamIds: [],
 *   grants: [
 *     { pattern: "docs:org:*", effect: "Allow", orgId, teamIds: [], condition: null, source: "role:editor" },
 *   ],
 * };
 * const built = buildSnapshot(rows, orgId, clock.now());
 * evaluate(built.subject, { permission: "docs:org:read", resourceOrgId: orgId }).decision; // "Allowed"
 * ```
 */
export function buildSnapshot(rows: SubjectRows, orgId: string | null, builtAt: number): BuiltSnapshot {
  const grants: Grant[] = rows.grants.map((row) => ({
    pattern: row.pattern,
    effect: row.effect as Grant["effect"],
    orgId: row.orgId,
    teamIds: row.teamIds,
    condition: row.condition,
    source: row.source,
  }));
  const snapshot: SubjectSnapshot = {
    id: rows.userId,
    orgId,
    teamIds: rows.teamIds,
    attributes: { ...rows.attributes },
    grants,
  };
  const { subject, invalid } = compileSubjectLenient(snapshot);
  const skipped = invalid.map((item): SkippedGrant => ({
    source: item.grant.source,
    pattern: item.grant.pattern,
    code: item.error.code,
    message: item.error.message,
  }));
  return {
    realmId: rows.realmId,
    isOrgMember: rows.isOrgMember,
    status: rows.status,
    snapshot,
    subject,
    skipped,
    builtAt,
    ...(rows.orgContexts === undefined ? {} : { orgContexts: [...rows.orgContexts] }),
  };
}
