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

/** A validated, compiled condition document. */
export interface CompiledCondition {
  /** A deep copy of the validated document. */
  readonly document: ConditionDocument;
  /** Evaluates the condition against the bags; never throws. */
  evaluate(bags: ConditionBags): boolean;
}

type Predicate = (bags: ConditionBags) => boolean;
type Resolver = (bags: ConditionBags) => unknown;

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

function deepEqualSameKind(a: unknown, b: unknown, kind: number, depth: number): boolean {
  if (kind < K_ARRAY) return a === b;
  if (depth > MAX_DEPTH) return false;
  if (kind === K_ARRAY) {
    const x = a as unknown[], y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!deepEqual(x[i], y[i], depth + 1)) return false;
    return true;
  }
  const x = a as Record<string, unknown>, y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  if (keys.length !== Object.keys(y).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(y, key) || !deepEqual(x[key], y[key], depth + 1)) return false;
  }
  return true;
}

/** "Same type and deeply equal"; anything outside the six JSON types is never equal. */
function deepEqual(a: unknown, b: unknown, depth = 0): boolean {
  const kind = kindOf(a);
  if (kind === K_OTHER || kind !== kindOf(b)) return false;
  return deepEqualSameKind(a, b, kind, depth);
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
  const step = (bag: unknown, key: string): unknown => {
    if (!isPlainObject(bag) || !Object.hasOwn(bag, key)) return MISSING;
    const value = bag[key];
    return value === undefined ? MISSING : value;
  };
  let resolve: Resolver;
  if (keys.length === 1) {
    const key = keys[0];
    resolve = (bags) => step(bags[root], key);
  } else {
    resolve = (bags) => {
      let current: unknown = bags[root];
      for (let i = 0; i < keys.length; i++) {
        current = step(current, keys[i]);
        if (current === MISSING) return MISSING;
      }
      return current;
    };
  }
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
      return (bags) => {
        const a = attr(bags);
        if (a === MISSING) return false;
        const v = value(bags);
        return v !== MISSING && deepEqual(a, v);
      };
    case "ne":
      return (bags) => {
        const a = attr(bags);
        if (a === MISSING) return false;
        const v = value(bags);
        if (v === MISSING) return false;
        const kind = kindOf(a);
        return kind !== K_OTHER && kind === kindOf(v) && !deepEqualSameKind(a, v, kind, 0);
      };
    case "in":
      return (bags) => {
        const a = attr(bags);
        if (a === MISSING) return false;
        const v = value(bags);
        if (!Array.isArray(v)) return false;
        for (let i = 0; i < v.length; i++) if (deepEqual(a, v[i])) return true;
        return false;
      };
    case "contains":
      return (bags) => {
        const a = attr(bags);
        if (a === MISSING) return false;
        const v = value(bags);
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
      return (bags) => {
        const a = attr(bags);
        if (a === MISSING) return false;
        const v = value(bags);
        return v !== MISSING && compare(op, a, v);
      };
    case "exists":
      return (bags) => {
        const a = attr(bags);
        return a !== MISSING && a !== null;
      };
  }
}

const LEAF_KEYS = new Set(["op", "attr", "value"]);

function compileLeaf(node: Record<string, unknown>, path: string): { node: ConditionLeaf; predicate: Predicate } {
  for (const key of Object.keys(node)) {
    if (!LEAF_KEYS.has(key)) {
      throw new ConditionFormatError(`${path}.${key}`, `Unexpected key ${JSON.stringify(key)} in the leaf at ${path}.`);
    }
  }
  const op = node.op;
  if (typeof op !== "string" || !(CONDITION_OPERATORS as readonly string[]).includes(op)) {
    throw new ConditionFormatError(
      `${path}.op`,
      `Unknown operator ${JSON.stringify(op)} at ${path}.op; expected one of ${CONDITION_OPERATORS.join(", ")}.`,
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
  return { node: { op: operator, attr: attr.text, value: copy }, predicate: compileLeafOp(operator, attr.resolve, value) };
}

function compileNode(raw: unknown, path: string, depth: number): { node: ConditionNode; predicate: Predicate } {
  if (depth > MAX_DEPTH) {
    throw new ConditionFormatError(path, `The condition is nested more than ${MAX_DEPTH} levels deep at ${path}.`);
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
        `The node at ${path} mixes ${keys.map((key) => JSON.stringify(key)).join(", ")}; a combinator stands alone.`,
      );
    }
    const key = combinators[0];
    if (key === "not") {
      const child = compileNode(raw.not, `${path}.not`, depth + 1);
      const inner = child.predicate;
      return { node: { not: child.node }, predicate: (bags) => !inner(bags) };
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
        predicate: (bags) => {
          for (let i = 0; i < predicates.length; i++) if (!predicates[i](bags)) return false;
          return true;
        },
      };
    }
    if (predicates.length === 0) return { node: { anyOf: nodes }, predicate: () => false };
    if (predicates.length === 1) return { node: { anyOf: nodes }, predicate: predicates[0] };
    return {
      node: { anyOf: nodes },
      predicate: (bags) => {
        for (let i = 0; i < predicates.length; i++) if (predicates[i](bags)) return true;
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
    `Unknown combinator ${JSON.stringify(keys[0])} at ${path}; expected allOf, anyOf, not or a leaf {op, attr, value}.`,
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
    return this.#predicate(bags);
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
