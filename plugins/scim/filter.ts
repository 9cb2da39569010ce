/**
 * SCIM filters (RFC 7644 section 3.4.2.2): a tokenizer and a recursive-descent parser of the
 * filter grammar, with `not` binding tighter than `and`, and `and` tighter than `or`; grouping
 * with parentheses; attribute paths with an optional schema URN and a sub-attribute; value-path
 * filters (`emails[type eq "work" and value co "@example.com"]`); and PATCH paths (section 3.5.2:
 * `attrPath`, `valuePath` and `valuePath.subAttr`). Cost is bounded: a filter is at most
 * {@link MAX_FILTER_LENGTH} characters, nests at most {@link MAX_FILTER_DEPTH} deep and has at most
 * {@link MAX_FILTER_NODES} comparisons. Every refusal is a 400 `invalidFilter` (`invalidPath`
 * for PATCH paths). Pure: no I/O.
 *
 * @module
 */
import { invalidFilter, invalidPath, type ScimError } from "./errors.ts";

/** Longest filter accepted, in characters. */
export const MAX_FILTER_LENGTH = 2000;
/** Deepest nesting of groups, `not` and value paths. */
export const MAX_FILTER_DEPTH = 10;
/** Most comparisons (attribute expressions) in one filter. */
export const MAX_FILTER_NODES = 50;

/** The comparison operators. */
export const COMPARE_OPS = ["eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le"] as const;
export type CompareOp = typeof COMPARE_OPS[number];

/** An attribute path: `[schema:]attr[.sub]`. */
export interface AttrPath {
  /** The schema URN the path names, or null. */
  readonly schema: string | null;
  readonly attr: string;
  readonly sub: string | null;
}

/** A comparison value. */
export type CompValue = string | number | boolean | null;

/** A parsed filter. */
export type Filter =
  | { readonly op: "and" | "or"; readonly left: Filter; readonly right: Filter }
  | { readonly op: "not"; readonly filter: Filter }
  | { readonly op: "pr"; readonly path: AttrPath }
  | { readonly op: CompareOp; readonly path: AttrPath; readonly value: CompValue }
  | { readonly op: "valuePath"; readonly path: AttrPath; readonly filter: Filter };

/** A PATCH path: an attribute, optionally filtered (`emails[type eq "work"]`) with a sub-attribute after. */
export interface PatchPath {
  readonly path: AttrPath;
  /** The value filter of a multi-valued attribute, or null. */
  readonly filter: Filter | null;
  /** The sub-attribute after a value filter (`emails[…].value`), or null. */
  readonly subAfterFilter: string | null;
}

type Token =
  | { readonly t: "word"; readonly v: string; readonly at: number }
  | { readonly t: "string"; readonly v: string; readonly at: number }
  | { readonly t: "number"; readonly v: number; readonly at: number }
  | { readonly t: "(" | ")" | "[" | "]"; readonly at: number };

const WORD = /[A-Za-z0-9:._$\-]/;
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/;

/** Splits a filter into tokens. */
export function tokenize(text: string, fail: (m: string) => ScimError = invalidFilter): Token[] {
  if (text.length > MAX_FILTER_LENGTH) {
    throw fail(`The filter is longer than ${MAX_FILTER_LENGTH} characters.`);
  }
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
      continue;
    }
    if (c === "(" || c === ")" || c === "[" || c === "]") {
      tokens.push({ t: c, at: i });
      i++;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (j >= text.length) throw fail(`Unterminated string at character ${i + 1}.`);
      let value: unknown;
      try {
        value = JSON.parse(text.slice(i, j + 1));
      } catch {
        throw fail(`Invalid string at character ${i + 1}.`);
      }
      if (typeof value !== "string" || value.includes("\u0000")) {
        throw fail(`Invalid string at character ${i + 1}.`);
      }
      tokens.push({ t: "string", v: value, at: i });
      i = j + 1;
      continue;
    }
    if (c === "-" || (c >= "0" && c <= "9")) {
      const m = NUMBER.exec(text.slice(i));
      if (m !== null && (i + m[0].length >= text.length || !WORD.test(text[i + m[0].length]))) {
        tokens.push({ t: "number", v: Number(m[0]), at: i });
        i += m[0].length;
        continue;
      }
    }
    if (WORD.test(c)) {
      let j = i;
      while (j < text.length && WORD.test(text[j])) j++;
      tokens.push({ t: "word", v: text.slice(i, j), at: i });
      i = j;
      continue;
    }
    throw fail(`Unexpected character ${JSON.stringify(c)} at character ${i + 1}.`);
  }
  return tokens;
}

const ATTR_NAME = /^[A-Za-z$][A-Za-z0-9_$-]*$/;

/** Parses `[urn:…:]attr[.sub]` (a word token). */
export function parseAttrPath(word: string, fail: (m: string) => ScimError = invalidFilter): AttrPath {
  let schema: string | null = null;
  let rest = word;
  if (/^urn:/i.test(word)) {
    const cut = word.lastIndexOf(":");
    schema = word.slice(0, cut);
    rest = word.slice(cut + 1);
  }
  const parts = rest.split(".");
  if (parts.length > 2 || !parts.every((p) => ATTR_NAME.test(p))) {
    throw fail(`${JSON.stringify(word)} is not an attribute path.`);
  }
  return { schema, attr: parts[0], sub: parts[1] ?? null };
}

class Parser {
  #i = 0;
  #nodes = 0;
  constructor(readonly tokens: Token[], readonly fail: (m: string) => ScimError) {}

  peek(): Token | undefined {
    return this.tokens[this.#i];
  }
  next(): Token | undefined {
    return this.tokens[this.#i++];
  }
  done(): boolean {
    return this.#i >= this.tokens.length;
  }
  keyword(word: string): boolean {
    const t = this.peek();
    if (t?.t === "word" && t.v.toLowerCase() === word) {
      this.#i++;
      return true;
    }
    return false;
  }
  expect(t: "(" | ")" | "[" | "]"): void {
    const got = this.next();
    if (got?.t !== t) {
      throw this.fail(`Expected "${t}"${got === undefined ? " at the end" : ` at character ${got.at + 1}`}.`);
    }
  }

  /** FILTER = term *("or" term) */
  or(depth: number): Filter {
    let left = this.and(depth);
    while (this.keyword("or")) left = { op: "or", left, right: this.and(depth) };
    return left;
  }
  /** term = factor *("and" factor) */
  and(depth: number): Filter {
    let left = this.factor(depth);
    while (this.keyword("and")) left = { op: "and", left, right: this.factor(depth) };
    return left;
  }
  /** factor = "not" "(" FILTER ")" / "(" FILTER ")" / attrExp / valuePath */
  factor(depth: number): Filter {
    if (depth > MAX_FILTER_DEPTH) throw this.fail(`The filter nests deeper than ${MAX_FILTER_DEPTH}.`);
    const t = this.peek();
    if (t === undefined) throw this.fail("The filter ends early.");
    if (t.t === "word" && t.v.toLowerCase() === "not" && this.tokens[this.#i + 1]?.t === "(") {
      this.#i++;
      this.expect("(");
      const filter = this.or(depth + 1);
      this.expect(")");
      return { op: "not", filter };
    }
    if (t.t === "(") {
      this.#i++;
      const filter = this.or(depth + 1);
      this.expect(")");
      return filter;
    }
    if (t.t !== "word") throw this.fail(`Expected an attribute at character ${t.at + 1}.`);
    this.#i++;
    const path = parseAttrPath(t.v, this.fail);
    if (this.peek()?.t === "[") {
      if (path.sub !== null) throw this.fail(`A value filter follows an attribute, not a sub-attribute.`);
      this.#i++;
      const filter = this.or(depth + 1);
      this.expect("]");
      return { op: "valuePath", path, filter };
    }
    if (++this.#nodes > MAX_FILTER_NODES) {
      throw this.fail(`The filter has more than ${MAX_FILTER_NODES} comparisons.`);
    }
    const opToken = this.next();
    if (opToken?.t !== "word") throw this.fail(`Expected an operator after ${JSON.stringify(t.v)}.`);
    const op = opToken.v.toLowerCase();
    if (op === "pr") return { op: "pr", path };
    if (!(COMPARE_OPS as readonly string[]).includes(op)) {
      throw this.fail(`${JSON.stringify(opToken.v)} is not a filter operator.`);
    }
    const valueToken = this.next();
    let value: CompValue;
    if (valueToken?.t === "string" || valueToken?.t === "number") value = valueToken.v;
    else if (valueToken?.t === "word" && ["true", "false", "null"].includes(valueToken.v.toLowerCase())) {
      const w = valueToken.v.toLowerCase();
      value = w === "null" ? null : w === "true";
    } else throw this.fail(`Expected a value after ${JSON.stringify(opToken.v)}.`);
    return { op: op as CompareOp, path, value };
  }
}

/** Parses a filter; 400 `invalidFilter` when it is not one (or is over a bound). */
export function parseFilter(text: string): Filter {
  const p = new Parser(tokenize(text), invalidFilter);
  if (p.done()) throw invalidFilter("The filter is empty.");
  const filter = p.or(0);
  if (!p.done()) throw invalidFilter(`Unexpected text at character ${p.peek()!.at + 1}.`);
  return filter;
}

/** Parses a PATCH operation's `path`; 400 `invalidPath` when it is not one. */
export function parsePatchPath(text: string): PatchPath {
  const tokens = tokenize(text, invalidPath);
  const p = new Parser(tokens, invalidPath);
  const first = p.next();
  if (first?.t !== "word") throw invalidPath("The path is not an attribute path.");
  const path = parseAttrPath(first.v, invalidPath);
  if (p.done()) return { path, filter: null, subAfterFilter: null };
  if (path.sub !== null) throw invalidPath("A value filter follows an attribute, not a sub-attribute.");
  p.expect("[");
  const filter = p.or(1);
  p.expect("]");
  let subAfterFilter: string | null = null;
  if (!p.done()) {
    const sub = p.next();
    if (sub?.t !== "word" || !/^\.[A-Za-z$][A-Za-z0-9_$-]*$/.test(sub.v) || !p.done()) {
      throw invalidPath("After a value filter comes at most .subAttribute.");
    }
    subAfterFilter = sub.v.slice(1);
  }
  return { path, filter, subAfterFilter };
}

/** Renders a filter back to text (canonical: lowercase operators, full parentheses). */
export function formatFilter(f: Filter): string {
  const path = (p: AttrPath) =>
    `${p.schema === null ? "" : `${p.schema}:`}${p.attr}${p.sub === null ? "" : `.${p.sub}`}`;
  switch (f.op) {
    case "and":
    case "or":
      return `(${formatFilter(f.left)} ${f.op} ${formatFilter(f.right)})`;
    case "not":
      return `not (${formatFilter(f.filter)})`;
    case "pr":
      return `${path(f.path)} pr`;
    case "valuePath":
      return `${path(f.path)}[${formatFilter(f.filter)}]`;
    default:
      return `${path(f.path)} ${f.op} ${JSON.stringify(f.value)}`;
  }
}

// ---------------------------------------------------------------------------
// In-memory evaluation (PATCH value filters, and the reference the SQL compiler is tested against)

/** Reads a property case-insensitively. */
export function getCI(obj: unknown, name: string): unknown {
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) return undefined;
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(obj)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

/** How a value compares: case-exact or not. */
export type CaseExactOf = (path: AttrPath) => boolean;

function compare(op: CompareOp, actual: unknown, expected: CompValue, caseExact: boolean): boolean {
  if (expected === null) {
    // `eq null` is "not present"; `ne null` is "present".
    const absent = actual === undefined || actual === null;
    return op === "eq" ? absent : op === "ne" ? !absent : false;
  }
  if (actual === undefined || actual === null) return op === "ne";
  if (typeof expected === "boolean") {
    const a = typeof actual === "string" ? actual.toLowerCase() === "true" : actual === true;
    if (typeof actual !== "boolean" && typeof actual !== "string") return op === "ne";
    return op === "eq" ? a === expected : op === "ne" ? a !== expected : false;
  }
  if (typeof expected === "number") {
    if (typeof actual !== "number") return op === "ne";
    switch (op) {
      case "eq":
        return actual === expected;
      case "ne":
        return actual !== expected;
      case "gt":
        return actual > expected;
      case "ge":
        return actual >= expected;
      case "lt":
        return actual < expected;
      case "le":
        return actual <= expected;
      default:
        return false;
    }
  }
  if (typeof actual !== "string") return op === "ne";
  const a = caseExact ? actual : actual.toLowerCase();
  const e = caseExact ? expected : expected.toLowerCase();
  switch (op) {
    case "eq":
      return a === e;
    case "ne":
      return a !== e;
    case "co":
      return a.includes(e);
    case "sw":
      return a.startsWith(e);
    case "ew":
      return a.endsWith(e);
    case "gt":
      return a > e;
    case "ge":
      return a >= e;
    case "lt":
      return a < e;
    case "le":
      return a <= e;
  }
}

function present(v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v === "string") return v !== "";
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === "object") return Object.keys(v).length > 0;
  return true;
}

/** The values an attribute path reaches in a resource (multi-valued attributes flattened). */
function valuesAt(resource: unknown, path: AttrPath): unknown[] {
  const holder = path.schema !== null && getCI(resource, path.schema) !== undefined
    ? getCI(resource, path.schema)
    : resource;
  const top = getCI(holder, path.attr);
  const items = Array.isArray(top) ? top : [top];
  if (path.sub === null) {
    // A multi-valued complex attribute compared directly means its `value`s.
    return items.map((item) =>
      item !== null && typeof item === "object" && !Array.isArray(item) ? getCI(item, "value") : item
    );
  }
  return items.map((item) => getCI(item, path.sub!));
}

/** Whether `resource` (or a value of a multi-valued attribute) matches `filter`. */
export function matches(filter: Filter, resource: unknown, caseExactOf: CaseExactOf = () => false): boolean {
  switch (filter.op) {
    case "and":
      return matches(filter.left, resource, caseExactOf) && matches(filter.right, resource, caseExactOf);
    case "or":
      return matches(filter.left, resource, caseExactOf) || matches(filter.right, resource, caseExactOf);
    case "not":
      return !matches(filter.filter, resource, caseExactOf);
    case "pr":
      return valuesAt(resource, filter.path).some(present);
    case "valuePath": {
      const holder = filter.path.schema !== null ? getCI(resource, filter.path.schema) ?? resource : resource;
      const top = getCI(holder, filter.path.attr);
      const items = Array.isArray(top) ? top : top === undefined ? [] : [top];
      return items.some((item) => matches(filter.filter, item, caseExactOf));
    }
    default: {
      const values = valuesAt(resource, filter.path);
      const exact = caseExactOf(filter.path);
      if (filter.op === "ne") return !values.some((v) => compare("eq", v, filter.value, exact));
      return values.some((v) => compare(filter.op as CompareOp, v, filter.value, exact));
    }
  }
}
