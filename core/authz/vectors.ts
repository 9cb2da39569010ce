/**
 * The golden-vector runner (pure): validates one parsed vector file and runs every
 * case against this engine. File format: section 5 of the authorization semantics
 * page, `{ kind, version: 1, cases: [...] }` with kind `pattern`, `condition`,
 * `evaluate` or `visibility`.
 *
 * @module
 */
import { SvcError } from "../errors.ts";
import { parseConditionDocument } from "./condition.ts";
import { ConditionFormatError, PermissionFormatError } from "./errors.ts";
import { type AccessCheck, compileSubject, evaluate, type SubjectSnapshot } from "./evaluator.ts";
import type { Grant } from "./grant.ts";
import { parsePermissionPattern } from "./pattern.ts";
import { isScope, parsePermissionId } from "./permission.ts";
import { visibility } from "./visibility.ts";

/** The outcome of one vector case. */
export interface VectorResult {
  /** The case name. */
  name: string;
  /** Whether the engine produced the expected answer. */
  ok: boolean;
  /** Why not, when `ok` is false. */
  message?: string;
}

/** The kinds of vector file. */
export type VectorKind = "pattern" | "condition" | "evaluate" | "visibility";

/** A vector file is malformed as a whole (not an object, unknown kind or version, no case list). Code `vector_format`. */
export class VectorFileError extends SvcError {
  /** What is wrong with the file. */
  constructor(message: string) {
    super("vector_format", message, 400);
  }
}

/** A single case is malformed; reported as a failed case. */
class CaseError extends Error {}

type Case = Record<string, unknown>;

const CASE_FIELDS: Record<VectorKind, readonly string[]> = {
  pattern: ["name", "pattern", "permission", "expect"],
  condition: ["name", "document", "attributes", "expect"],
  evaluate: ["name", "subject", "grants", "check", "expect"],
  visibility: ["name", "subject", "grants", "query", "expect"],
};

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function describe(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

function describeError(error: unknown): string {
  if (error instanceof SvcError) return `${error.name} (${error.code}): ${error.message}`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function throws(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

function runPattern(c: Case): string | undefined {
  const { pattern, permission, expect } = c;
  const hasPattern = pattern !== undefined, hasPermission = permission !== undefined;
  if (hasPattern && typeof pattern !== "string") throw new CaseError("pattern must be a string");
  if (hasPermission && typeof permission !== "string") throw new CaseError("permission must be a string");
  switch (expect) {
    case "match":
    case "no-match": {
      if (!hasPattern || !hasPermission) {
        throw new CaseError(`expect ${expect} needs both pattern and permission`);
      }
      const matched = parsePermissionPattern(pattern as string).matches(
        parsePermissionId(permission as string),
      );
      return matched === (expect === "match")
        ? undefined
        : `expected ${expect}, got ${matched ? "match" : "no-match"}`;
    }
    case "invalid-pattern":
    case "valid-pattern": {
      if (!hasPattern || hasPermission) throw new CaseError(`expect ${expect} takes a pattern only`);
      const error = throws(() => {
        const parsed = parsePermissionPattern(pattern as string);
        const again = parsePermissionPattern(parsed.toString());
        if (again.toString() !== parsed.toString()) throw new Error("pattern does not round-trip");
      });
      if (expect === "valid-pattern") {
        return error === undefined ? undefined : `expected valid, got ${describeError(error)}`;
      }
      if (error instanceof PermissionFormatError) return undefined;
      return error === undefined
        ? "expected invalid-pattern, the pattern parsed"
        : `unexpected ${describeError(error)}`;
    }
    case "invalid-permission":
    case "valid-permission": {
      if (!hasPermission || hasPattern) throw new CaseError(`expect ${expect} takes a permission only`);
      const error = throws(() => parsePermissionId(permission as string));
      if (expect === "valid-permission") {
        return error === undefined ? undefined : `expected valid, got ${describeError(error)}`;
      }
      if (error instanceof PermissionFormatError) return undefined;
      return error === undefined
        ? "expected invalid-permission, the id parsed"
        : `unexpected ${describeError(error)}`;
    }
    default:
      throw new CaseError(`unknown expect ${describe(expect)}`);
  }
}

function bag(value: unknown, what: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw new CaseError(`${what} must be an object`);
  return value;
}

function runCondition(c: Case): string | undefined {
  const { document, expect } = c;
  if (expect !== true && expect !== false && expect !== "invalid") {
    throw new CaseError(`unknown expect ${describe(expect)}`);
  }
  const attributes = bag(c.attributes, "attributes");
  for (const key of Object.keys(attributes)) {
    if (key !== "subject" && key !== "resource" && key !== "context") {
      throw new CaseError(`unknown attributes bag ${describe(key)}`);
    }
  }
  let compiled;
  try {
    compiled = parseConditionDocument(document);
  } catch (error) {
    if (expect === "invalid" && error instanceof ConditionFormatError) return undefined;
    return `expected ${describe(expect)}, got ${describeError(error)}`;
  }
  if (expect === "invalid") return "expected invalid, the document parsed";
  const result = compiled.evaluate({
    subject: bag(attributes.subject, "attributes.subject"),
    resource: bag(attributes.resource, "attributes.resource"),
    context: bag(attributes.context, "attributes.context"),
  });
  return result === expect ? undefined : `expected ${expect}, got ${result}`;
}

function snapshotOf(c: Case): SubjectSnapshot {
  const subject = bag(c.subject, "subject");
  for (const key of Object.keys(subject)) {
    if (!["id", "orgId", "teamIds", "attributes"].includes(key)) {
      throw new CaseError(`unknown subject field ${describe(key)}`);
    }
  }
  if (typeof subject.id !== "string") throw new CaseError("subject.id must be a string");
  const grants = c.grants ?? [];
  if (!Array.isArray(grants)) throw new CaseError("grants must be a list");
  return {
    id: subject.id,
    orgId: (subject.orgId ?? null) as string | null,
    teamIds: (subject.teamIds ?? []) as string[],
    attributes: bag(subject.attributes, "subject.attributes"),
    grants: grants as Grant[],
  };
}

const CHECK_FIELDS = [
  "permission",
  "resourceOrgId",
  "resourceOwnerId",
  "resourceTeamIds",
  "resourceAttributes",
  "context",
];

function runEvaluate(c: Case): string | undefined {
  const expect = c.expect;
  if (!isObject(expect) || typeof expect.decision !== "string") {
    throw new CaseError("expect must be { decision, trace? }");
  }
  if (!["Allowed", "Denied", "DeniedByDefault"].includes(expect.decision)) {
    throw new CaseError(`unknown decision ${describe(expect.decision)}`);
  }
  if (expect.trace !== undefined && !Array.isArray(expect.trace)) {
    throw new CaseError("expect.trace must be a list");
  }
  const check = c.check;
  if (!isObject(check) || typeof check.permission !== "string") {
    throw new CaseError("check.permission is required");
  }
  for (const key of Object.keys(check)) {
    if (!CHECK_FIELDS.includes(key)) throw new CaseError(`unknown check field ${describe(key)}`);
  }
  const subject = compileSubject(snapshotOf(c));
  const plain = evaluate(subject, check as unknown as AccessCheck);
  const traced = evaluate(subject, check as unknown as AccessCheck, { trace: true });
  if (plain.decision !== traced.decision) {
    return `decision changed with the trace: ${plain.decision} without, ${traced.decision} with`;
  }
  if (plain.decision !== expect.decision) return `expected ${expect.decision}, got ${plain.decision}`;
  if (expect.trace !== undefined && describe(expect.trace) !== describe(traced.trace)) {
    return `expected trace ${describe(expect.trace)}, got ${describe(traced.trace)}`;
  }
  return undefined;
}

function runVisibility(c: Case): string | undefined {
  const { query, expect } = c;
  if (expect !== "Granted" && expect !== "Conditional" && expect !== "None") {
    throw new CaseError(`unknown expect ${describe(expect)}`);
  }
  if (!isObject(query) || typeof query.service !== "string" || typeof query.action !== "string") {
    throw new CaseError("query must be { service, action, scope }");
  }
  if (!isScope(query.scope)) throw new CaseError(`unknown query scope ${describe(query.scope)}`);
  const subject = compileSubject(snapshotOf(c));
  const result = visibility(subject, query.service, query.action, query.scope);
  return result === expect ? undefined : `expected ${expect}, got ${result}`;
}

const RUNNERS: Record<VectorKind, (c: Case) => string | undefined> = {
  pattern: runPattern,
  condition: runCondition,
  evaluate: runEvaluate,
  visibility: runVisibility,
};

/**
 * Validates a parsed vector file and runs every case. Malformed cases, duplicate
 * names and engine errors are reported as failed cases.
 *
 * @throws {VectorFileError} when the file itself is malformed.
 */
export function runVectorFile(json: unknown): VectorResult[] {
  if (!isObject(json)) throw new VectorFileError("A vector file must be an object { kind, version, cases }.");
  const { kind, version, cases } = json;
  if (typeof kind !== "string" || !Object.hasOwn(RUNNERS, kind)) {
    throw new VectorFileError(`Unknown vector kind ${describe(kind)}.`);
  }
  if (version !== 1) throw new VectorFileError(`Unsupported vector file version ${describe(version)}.`);
  if (!Array.isArray(cases)) throw new VectorFileError("A vector file needs a cases list.");
  for (const key of Object.keys(json)) {
    if (key !== "kind" && key !== "version" && key !== "cases") {
      throw new VectorFileError(`Unknown top-level field ${describe(key)}.`);
    }
  }
  const runner = RUNNERS[kind as VectorKind];
  const allowed = CASE_FIELDS[kind as VectorKind];
  const seen = new Set<string>();
  return cases.map((c, i): VectorResult => {
    const name = isObject(c) && typeof c.name === "string" && c.name !== "" ? c.name : `#${i}`;
    try {
      if (!isObject(c)) throw new CaseError("a case must be an object");
      if (name === `#${i}`) throw new CaseError("a case needs a non-empty name");
      if (seen.has(name)) throw new CaseError("duplicate case name");
      seen.add(name);
      for (const key of Object.keys(c)) {
        if (!allowed.includes(key)) throw new CaseError(`unknown case field ${describe(key)}`);
      }
      const message = runner(c);
      return message === undefined ? { name, ok: true } : { name, ok: false, message };
    } catch (error) {
      const message = error instanceof CaseError ? `malformed case: ${error.message}` : describeError(error);
      return { name, ok: false, message };
    }
  });
}
