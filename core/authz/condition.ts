/**
 * Condition documents (version 1): validated once and compiled into closures.
 *
 * Semantics (see the authorization semantics page, section 2): cross-type
 * comparisons are false and never coerced; a missing attribute (or a `ref` that
 * resolves to nothing) makes every leaf false, `ne` included, and `not` flips it;
 * ordering operators compare two numbers or two strings (by UTF-16 code units) and
 * never throw; equality is deep for arrays and objects. Attribute resolution walks
 * plain objects only, through own keys.
 *
 * @module
 */
import { ConditionFormatError } from "./errors.ts";

/** The nine leaf operators. */
export type ConditionOperator = "eq" | "ne" | "in" | "contains" | "gt" | "gte" | "lt" | "lte" | "exists";

/** The operators, in a fixed order. */
export const CONDITION_OPERATORS: readonly ConditionOperator[] = Object.freeze(
  ["eq", "ne", "in", "contains", "gt", "gte", "lt", "lte", "exists"] as const,
);

/** A leaf: compares the attribute at `attr` with `value` (a literal or `{ ref: path }`). */
export interface ConditionLeaf {
  /** The operator. */
  op: ConditionOperator;
  /** An attribute path: `subject.`, `resource.` or `context.` then dot-separated keys. */
  attr: string;
  /** A JSON literal or `{ ref: path }`; ignored (and optional) for `exists`. */
  value?: unknown;
}

/** A condition node: a combinator or a leaf. */
export type ConditionNode =
  | { allOf: ConditionNode[] }
  | { anyOf: ConditionNode[] }
  | { not: ConditionNode }
  | ConditionLeaf;

/** A version 1 condition document. */
export interface ConditionDocument {
  /** Always 1. */
  version: 1;
  /** The root node. */
  condition: ConditionNode;
}

/** The three attribute bags a condition reads. Each should be a plain object. */
export interface ConditionBags {
  /** `{ id, orgId, teamIds, ...attributes }` of the subject. */
  readonly subject: unknown;
  /** `{ orgId, ownerId, teamIds, ...resourceAttributes }` of the resource. */
  readonly resource: unknown;
  /** The check's context attributes. */
  readonly context: unknown;
}

/**
 * The evaluator's allocation-free view of the three bags. `resource` holds the raw
 * resource attributes; when `check` is set, the keys `orgId`, `ownerId` and `teamIds`
 * not overridden by an own resource attribute come from the check, exactly as if the
 * bag `{ orgId, ownerId, teamIds, ...resourceAttributes }` had been built.
 * @internal
 */
export interface ConditionEnv {
  /** The subject bag. */
  subject: unknown;
  /** The resource bag, or the raw resource attributes when `check` is set. */
  resource: unknown;
  /** The context bag. */
  context: unknown;
  /** The check whose resource fields back `resource`, or null. */
  check: ResourceFields | null;
}

/** The resource fields of an access check that the resource bag exposes. @internal */
export interface ResourceFields {
  /** `resource.orgId` (absent: null). */
  readonly resourceOrgId?: string | null;
  /** `resource.ownerId` (absent: null). */
  readonly resourceOwnerId?: string | null;
  /** `resource.teamIds` (absent: empty). */
  readonly resourceTeamIds?: readonly string[] | null;
}

/** A validated, compiled condition document. */
export interface CompiledCondition {
  /** A deep copy of the validated document. */
  readonly document: ConditionDocument;
  /** Evaluates the condition against the bags; never throws. */
  evaluate(bags: ConditionBags): boolean;
  /** Evaluates the condition against an evaluator environment; never throws. @internal */
  evaluateEnv(env: ConditionEnv): boolean;
}

type Predicate = (env: ConditionEnv) => boolean;
type Resolver = (env: ConditionEnv) => unknown;

/** Sentinel for a missing attribute. */
const MISSING: unique symbol = Symbol("missing");
const MAX_DEPTH = 64;

const K_STRING = 0, K_NUMBER = 1, K_BOOLEAN = 2, K_NULL = 3, K_ARRAY = 4, K_OBJECT = 5, K_OTHER = 6;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function kindOf(value: unknown): number {
  switch (typeof value) {
    case "string":
      return K_STRING;
    case "number":
      return K_NUMBER;
    case "boolean":
      return K_BOOLEAN;
    case "object":
      if (value === null) return K_NULL;
      if (Array.isArray(value)) return K_ARRAY;
      return isPlainObject(value) ? K_OBJECT : K_OTHER;
    default:
      return K_OTHER;
  }
}

const EQUAL = 1, UNEQUAL = 0, UNDECIDED = -1;
const MAX_EQUALITY_DEPTH = 256;

/**
 * Deep comparison of two values of the same kind: EQUAL, UNEQUAL or UNDECIDED (nested
 * deeper than MAX_EQUALITY_DEPTH, e.g. a cycle). UNDECIDED makes both `eq` and `ne` false.
 */
function compareSameKind(a: unknown, b: unknown, kind: number, depth: number): number {
  if (kind < K_ARRAY) return a === b ? EQUAL : UNEQUAL;
  if (depth > MAX_EQUALITY_DEPTH) return UNDECIDED;
  if (kind === K_ARRAY) {
    const x = a as unknown[], y = b as unknown[];
    if (x.length !== y.length) return UNEQUAL;
    let result = EQUAL;
    for (let i = 0; i < x.length; i++) {
      const r = compareValues(x[i], y[i], depth + 1);
      if (r === UNEQUAL) return UNEQUAL;
      if (r === UNDECIDED) result = UNDECIDED;
    }
    return result;
  }
  const x = a as Record<string, unknown>, y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  if (keys.length !== Object.keys(y).length) return UNEQUAL;
  let result = EQUAL;
  for (const key of keys) {
    if (!Object.hasOwn(y, key)) return UNEQUAL;
    const r = compareValues(x[key], y[key], depth + 1);
    if (r === UNEQUAL) return UNEQUAL;
    if (r === UNDECIDED) result = UNDECIDED;
  }
  return result;
}

/** "Same type and deeply equal" as a tri-state; values outside the six JSON types never compare. */
function compareValues(a: unknown, b: unknown, depth: number): number {
  const kind = kindOf(a), other = kindOf(b);
  if (kind === K_OTHER || other === K_OTHER) return UNDECIDED;
  if (kind !== other) return UNEQUAL;
  return compareSameKind(a, b, kind, depth);
}

/** `eq`: same type and deeply equal. */
function deepEqual(a: unknown, b: unknown): boolean {
  return compareValues(a, b, 0) === EQUAL;
}

/** Validates a JSON value and returns a deep copy, or throws at `path`. */
function copyJson(value: unknown, path: string, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new ConditionFormatError(path, `The value at ${path} is nested too deeply.`);
  switch (kindOf(value)) {
    case K_STRING:
    case K_BOOLEAN:
    case K_NULL:
      return value;
    case K_NUMBER:
      if (!Number.isFinite(value)) {
        throw new ConditionFormatError(path, `The number at ${path} is not a finite JSON number.`);
      }
      return value;
    case K_ARRAY:
      return (value as unknown[]).map((item, i) => copyJson(item, `${path}[${i}]`, depth + 1));
    case K_OBJECT: {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        Object.defineProperty(out, key, {
          value: copyJson(item, `${path}.${key}`, depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    default:
      throw new ConditionFormatError(path, `The value at ${path} is not JSON.`);
  }
}

const EMPTY_TEAMS: readonly string[] = Object.freeze([]);

/** One step of attribute resolution: own keys of plain objects only. */
function step(bag: unknown, key: string): unknown {
  if (!isPlainObject(bag) || !Object.hasOwn(bag, key)) return MISSING;
  const value = bag[key];
  return value === undefined ? MISSING : value;
}

/** The first key under `resource.`: an own resource attribute, else the check's field. */
function resourceKey(env: ConditionEnv, key: string): unknown {
  const resource = env.resource;
  const check = env.check;
  if (check === null) return step(resource, key);
  if (isPlainObject(resource) && Object.hasOwn(resource, key)) {
    const value = resource[key];
    return value === undefined ? MISSING : value;
  }
  switch (key) {
    case "orgId":
      return check.resourceOrgId ?? null;
    case "ownerId":
      return check.resourceOwnerId ?? null;
    case "teamIds":
      return check.resourceTeamIds ?? EMPTY_TEAMS;
    default:
      return MISSING;
  }
}

function compilePath(path: unknown, at: string): { text: string; resolve: Resolver } {
  if (typeof path !== "string") {
    throw new ConditionFormatError(at, `The attribute path at ${at} must be a string.`);
  }
  const parts = path.split(".");
  const root = parts[0];
  if (root !== "subject" && root !== "resource" && root !== "context") {
    throw new ConditionFormatError(
      at,
      `The attribute path ${JSON.stringify(path)} at ${at} must start with subject., resource. or context.`,
    );
  }
  const keys = parts.slice(1);
  if (keys.length === 0 || keys.some((key) => key === "")) {
    throw new ConditionFormatError(
      at,
      `The attribute path ${JSON.stringify(path)} at ${at} needs one or more non-empty dot-separated keys.`,
    );
  }
  const first = keys[0];
  const head: Resolver = root === "resource"
    ? (env) => resourceKey(env, first)
    : root === "subject"
    ? (env) => step(env.subject, first)
    : (env) => step(env.context, first);
  if (keys.length === 1) return { text: path, resolve: head };
  const resolve: Resolver = (env) => {
    let current = head(env);
    for (let i = 1; i < keys.length; i++) {
      if (current === MISSING) return MISSING;
      current = step(current, keys[i]);
    }
    return current;
  };
  return { text: path, resolve };
}

function compare(op: ConditionOperator, a: unknown, b: unknown): boolean {
  const ta = typeof a;
  if ((ta !== "number" && ta !== "string") || ta !== typeof b) return false;
  const x = a as number | string, y = b as number | string;
  switch (op) {
    case "gt":
      return x > y;
    case "gte":
      return x >= y;
    case "lt":
      return x < y;
    default:
      return x <= y;
  }
}

function compileLeafOp(op: ConditionOperator, attr: Resolver, value: Resolver): Predicate {
  switch (op) {
    case "eq":
      return (env) => {
        const a = attr(env);
        if (a === MISSING) return false;
        const v = value(env);
        return v !== MISSING && deepEqual(a, v);
      };
    case "ne":
      return (env) => {
        const a = attr(env);
        if (a === MISSING) return false;
        const v = value(env);
        if (v === MISSING) return false;
        const kind = kindOf(a);
        // Same type (at the top) and not deeply equal; undecidable comparisons are false.
        return kind !== K_OTHER && kind === kindOf(v) && compareSameKind(a, v, kind, 0) === UNEQUAL;
      };
    case "in":
      return (env) => {
        const a = attr(env);
        if (a === MISSING) return false;
        const v = value(env);
        if (!Array.isArray(v)) return false;
        for (let i = 0; i < v.length; i++) if (deepEqual(a, v[i])) return true;
        return false;
      };
    case "contains":
      return (env) => {
        const a = attr(env);
        if (a === MISSING) return false;
        const v = value(env);
        if (v === MISSING) return false;
        if (Array.isArray(a)) {
          for (let i = 0; i < a.length; i++) if (deepEqual(a[i], v)) return true;
          return false;
        }
        return typeof a === "string" && typeof v === "string" && a.includes(v);
      };
    case "gt":
    case "gte":
    case "lt":
    case "lte":
      return (env) => {
        const a = attr(env);
        if (a === MISSING) return false;
        const v = value(env);
        return v !== MISSING && compare(op, a, v);
      };
    case "exists":
      return (env) => {
        const a = attr(env);
        return a !== MISSING && a !== null;
      };
  }
}

const LEAF_KEYS = new Set(["op", "attr", "value"]);

function compileLeaf(
  node: Record<string, unknown>,
  path: string,
): { node: ConditionLeaf; predicate: Predicate } {
  for (const key of Object.keys(node)) {
    if (!LEAF_KEYS.has(key)) {
      throw new ConditionFormatError(
        `${path}.${key}`,
        `Unexpected key ${JSON.stringify(key)} in the leaf at ${path}.`,
      );
    }
  }
  const op = node.op;
  if (typeof op !== "string" || !(CONDITION_OPERATORS as readonly string[]).includes(op)) {
    throw new ConditionFormatError(
      `${path}.op`,
      `Unknown operator ${JSON.stringify(op)} at ${path}.op; expected one of ${
        CONDITION_OPERATORS.join(", ")
      }.`,
    );
  }
  const operator = op as ConditionOperator;
  const attr = compilePath(node.attr, `${path}.attr`);
  if (operator === "exists") {
    return {
      node: { op: operator, attr: attr.text },
      predicate: compileLeafOp(operator, attr.resolve, () => MISSING),
    };
  }
  if (!Object.hasOwn(node, "value") || node.value === undefined) {
    throw new ConditionFormatError(`${path}.value`, `The ${operator} leaf at ${path} needs a value.`);
  }
  const raw = node.value;
  let value: Resolver;
  let copy: unknown;
  if (isPlainObject(raw) && Object.hasOwn(raw, "ref")) {
    const keys = Object.keys(raw);
    if (keys.length !== 1) {
      const extra = keys.find((key) => key !== "ref")!;
      throw new ConditionFormatError(
        `${path}.value.${extra}`,
        `A {ref} value at ${path}.value takes no other key than ref (found ${JSON.stringify(extra)}).`,
      );
    }
    const ref = compilePath(raw.ref, `${path}.value.ref`);
    value = ref.resolve;
    copy = { ref: ref.text };
  } else {
    const literal = copyJson(raw, `${path}.value`, 0);
    value = () => literal;
    copy = copyJson(literal, `${path}.value`, 0);
  }
  return {
    node: { op: operator, attr: attr.text, value: copy },
    predicate: compileLeafOp(operator, attr.resolve, value),
  };
}

function compileNode(
  raw: unknown,
  path: string,
  depth: number,
): { node: ConditionNode; predicate: Predicate } {
  if (depth > MAX_DEPTH) {
    throw new ConditionFormatError(
      path,
      `The condition is nested more than ${MAX_DEPTH} levels deep at ${path}.`,
    );
  }
  if (!isPlainObject(raw)) {
    throw new ConditionFormatError(path, `The node at ${path} must be an object.`);
  }
  const keys = Object.keys(raw);
  const combinators = keys.filter((key) => key === "allOf" || key === "anyOf" || key === "not");
  if (combinators.length > 0) {
    if (keys.length !== 1) {
      throw new ConditionFormatError(
        path,
        `The node at ${path} mixes ${
          keys.map((key) => JSON.stringify(key)).join(", ")
        }; a combinator stands alone.`,
      );
    }
    const key = combinators[0];
    if (key === "not") {
      const child = compileNode(raw.not, `${path}.not`, depth + 1);
      const inner = child.predicate;
      return { node: { not: child.node }, predicate: (env) => !inner(env) };
    }
    const list = raw[key];
    if (!Array.isArray(list)) {
      throw new ConditionFormatError(`${path}.${key}`, `${key} at ${path} must be a list of nodes.`);
    }
    const children = list.map((child, i) => compileNode(child, `${path}.${key}[${i}]`, depth + 1));
    const predicates = children.map((child) => child.predicate);
    const nodes = children.map((child) => child.node);
    if (key === "allOf") {
      if (predicates.length === 0) return { node: { allOf: nodes }, predicate: () => true };
      if (predicates.length === 1) return { node: { allOf: nodes }, predicate: predicates[0] };
      return {
        node: { allOf: nodes },
        predicate: (env) => {
          for (let i = 0; i < predicates.length; i++) if (!predicates[i](env)) return false;
          return true;
        },
      };
    }
    if (predicates.length === 0) return { node: { anyOf: nodes }, predicate: () => false };
    if (predicates.length === 1) return { node: { anyOf: nodes }, predicate: predicates[0] };
    return {
      node: { anyOf: nodes },
      predicate: (env) => {
        for (let i = 0; i < predicates.length; i++) if (predicates[i](env)) return true;
        return false;
      },
    };
  }
  if (Object.hasOwn(raw, "op") || Object.hasOwn(raw, "attr") || Object.hasOwn(raw, "value")) {
    return compileLeaf(raw, path);
  }
  if (keys.length === 0) {
    throw new ConditionFormatError(path, `The node at ${path} is empty.`);
  }
  throw new ConditionFormatError(
    `${path}.${keys[0]}`,
    `Unknown combinator ${
      JSON.stringify(keys[0])
    } at ${path}; expected allOf, anyOf, not or a leaf {op, attr, value}.`,
  );
}

class Compiled implements CompiledCondition {
  readonly document: ConditionDocument;
  readonly #predicate: Predicate;
  constructor(document: ConditionDocument, predicate: Predicate) {
    this.document = document;
    this.#predicate = predicate;
  }
  evaluate(bags: ConditionBags): boolean {
    return this.#predicate({
      subject: bags.subject,
      resource: bags.resource,
      context: bags.context,
      check: null,
    });
  }
  evaluateEnv(env: ConditionEnv): boolean {
    return this.#predicate(env);
  }
}

/**
 * Validates a version 1 condition document and compiles it.
 *
 * @throws {ConditionFormatError} with the `path` of the first bad node, for example
 *   `version`, `condition`, `condition.allOf[2].op` or `condition.not.value.ref`.
 */
export function parseConditionDocument(json: unknown): CompiledCondition {
  if (!isPlainObject(json)) {
    throw new ConditionFormatError("", "A condition document must be an object {version, condition}.");
  }
  for (const key of Object.keys(json)) {
    if (key !== "version" && key !== "condition") {
      throw new ConditionFormatError(key, `Unexpected key ${JSON.stringify(key)} in the condition document.`);
    }
  }
  if (json.version !== 1) {
    throw new ConditionFormatError(
      "version",
      `Unsupported condition document version ${JSON.stringify(json.version) ?? "(absent)"}; expected 1.`,
    );
  }
  if (!Object.hasOwn(json, "condition")) {
    throw new ConditionFormatError("condition", "The condition document has no condition.");
  }
  const { node, predicate } = compileNode(json.condition, "condition", 0);
  return new Compiled(Object.freeze({ version: 1, condition: node }), predicate);
}
