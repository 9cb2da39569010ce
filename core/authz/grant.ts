/**
 * Grants and their compiled form.
 *
 * @module
 */
import type { SvcError } from "../errors.ts";
import { type CompiledCondition, parseConditionDocument } from "./condition.ts";
import { GrantFormatError } from "./errors.ts";
import { parsePermissionPattern, type PermissionPattern } from "./pattern.ts";

/** The effect of a grant. */
export type Effect = "Allow" | "Deny";

/**
 * One grant of a subject snapshot (roles, groups and policies all flatten to grants).
 * `source` is attribution only and never changes a decision.
 */
export interface Grant {
  /** A permission pattern, for example `docs:org:read*`. */
  pattern: string;
  /** `Allow` or `Deny`. */
  effect: Effect;
  /** When set, the grant applies only when the effective org equals it. */
  orgId?: string | null;
  /** When non-empty, the grant applies only when the resource team ids intersect it. */
  teamIds?: readonly string[] | null;
  /** A version 1 condition document (JSON), or nothing. */
  condition?: unknown | null;
  /** Where the grant comes from (role, group, policy); never consulted. */
  source: string;
}

/** Whether a value is a plain object (`{}` or `Object.create(null)`). @internal */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** A validated, compiled grant. Frozen. */
export interface CompiledGrant {
  /** A frozen copy of the grant as given (teamIds copied). */
  readonly grant: Readonly<Grant>;
  /** The compiled pattern. */
  readonly pattern: PermissionPattern;
  /** The effect. */
  readonly effect: Effect;
  /** The pinned organization, or null. */
  readonly orgId: string | null;
  /** The team restriction, or null when the grant has no (or an empty list of) team ids. */
  readonly teamIds: ReadonlySet<string> | null;
  /** The compiled condition, or null. */
  readonly condition: CompiledCondition | null;
  /** The attribution string. */
  readonly source: string;
}

/**
 * Validates and compiles one grant.
 *
 * @throws {PermissionFormatError} for an invalid pattern.
 * @throws {ConditionFormatError} for an invalid condition document.
 * @throws {GrantFormatError} for a grant that is not an object, an effect other than
 *   `Allow`/`Deny`, or an `orgId`, `teamIds` or `source` of the wrong type.
 */
export function compileGrant(grant: Grant): CompiledGrant {
  if (!isPlainObject(grant)) throw new GrantFormatError("", "A grant must be an object.");
  const { effect, orgId, teamIds, condition, source } = grant;
  if (typeof grant.pattern !== "string") {
    throw new GrantFormatError("pattern", "A grant's pattern must be a string.");
  }
  const pattern = parsePermissionPattern(grant.pattern);
  if (effect !== "Allow" && effect !== "Deny") {
    throw new GrantFormatError(
      "effect",
      `A grant's effect must be "Allow" or "Deny", got ${JSON.stringify(effect)}.`,
    );
  }
  if (orgId !== undefined && orgId !== null && typeof orgId !== "string") {
    throw new GrantFormatError("orgId", "A grant's orgId must be a string or null.");
  }
  let teams: ReadonlySet<string> | null = null;
  let teamList: readonly string[] | null = null;
  if (teamIds !== undefined && teamIds !== null) {
    if (!Array.isArray(teamIds) || teamIds.some((team) => typeof team !== "string")) {
      throw new GrantFormatError("teamIds", "A grant's teamIds must be a list of strings or null.");
    }
    teamList = Object.freeze([...teamIds]);
    if (teamList.length > 0) teams = new Set(teamList);
  }
  if (source !== undefined && typeof source !== "string") {
    throw new GrantFormatError("source", "A grant's source must be a string.");
  }
  const compiledCondition = condition === undefined || condition === null
    ? null
    : parseConditionDocument(condition);
  const copy: Grant = {
    pattern: pattern.text,
    effect,
    orgId: orgId ?? null,
    teamIds: teamList,
    condition: compiledCondition === null ? null : compiledCondition.document,
    source: source ?? "",
  };
  return Object.freeze({
    grant: Object.freeze(copy),
    pattern,
    effect,
    orgId: orgId ?? null,
    teamIds: teams,
    condition: compiledCondition,
    source: source ?? "",
  });
}

/** One grant that failed to compile, as reported by a lenient compilation. */
export interface InvalidGrant {
  /** Its position in the snapshot's grant list. */
  readonly index: number;
  /** The grant as given. */
  readonly grant: Grant;
  /** Why it was rejected (a PermissionFormatError, ConditionFormatError or GrantFormatError). */
  readonly error: SvcError;
}
