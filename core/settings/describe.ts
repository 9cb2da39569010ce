/**
 * A setting's type and bounds read from its valibot schema, for `svc help` and the generated
 * settings reference (docs/reference/settings.md): nothing is copied by hand, so the bounds shown
 * are the bounds the loader enforces (`test/cli/docs_reference_test.ts` checks them at the
 * boundary).
 *
 * @module
 */

/** The parts of a valibot schema or action this module reads. */
interface Node {
  readonly kind?: string;
  readonly type: string;
  readonly requirement?: unknown;
  readonly options?: readonly (Node | string)[];
  readonly wrapped?: Node;
  readonly item?: Node;
  readonly pipe?: readonly Node[];
}

/** A setting's type and bounds, as the docs show them. */
export interface SettingShape {
  /** `integer`, `boolean`, `string`, `one of: a, b`, `list of integers`, or a builder's `settingType` (`URL`…). */
  readonly type: string;
  /** The smallest accepted number, when the schema has one. */
  readonly min?: number;
  /** The largest accepted number, when the schema has one. */
  readonly max?: number;
  /** Other limits in words (`at most 20 items`, `1-200 characters`, `each 1-604800`). */
  readonly limits?: string;
}

/** The schema below optional, nullable and nullish wrappers. */
function unwrap(node: Node): Node {
  return (node.type === "optional" || node.type === "nullable" || node.type === "nullish" ||
      node.type === "exact_optional" || node.type === "undefinedable") && node.wrapped
    ? unwrap(node.wrapped)
    : node;
}

function actions(node: Node): readonly Node[] {
  return (node.pipe ?? []).filter((step) => step.kind === "validation");
}

function requirementOf(node: Node, type: string): number | undefined {
  const found = actions(node).find((a) => a.type === type);
  return typeof found?.requirement === "number" ? found.requirement : undefined;
}

/** The type a settings builder names with `settingType` (`URL`, `origin`…), if any. */
function namedType(node: Node): string | undefined {
  const named = (node.pipe ?? []).find((step) =>
    step.kind === "metadata" &&
    typeof (step as { metadata?: { settingType?: unknown } }).metadata?.settingType === "string"
  ) as { metadata: { settingType: string } } | undefined;
  return named?.metadata.settingType;
}

/** The base type of a schema (pipes, wrappers and string-or-number unions looked through). */
function baseType(node: Node): string {
  const n = unwrap(node);
  const named = namedType(n);
  if (named !== undefined) return named;
  if (actions(n).some((a) => a.type === "integer")) return "integer";
  switch (n.type) {
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "string":
      return "string";
    case "picklist": {
      const options = (n.options ?? []).map(String);
      // A flag given as a word in the environment: `true` / `false`.
      if (options.length === 2 && options.includes("true") && options.includes("false")) return "boolean";
      return `one of: ${options.join(", ")}`;
    }
    case "array":
      return `list of ${plural(n.item ? baseType(n.item) : "value")}`;
    case "union":
    case "variant": {
      // A union of a typed value and its text form (a number or its digits, a flag or its word).
      const types = new Set((n.options ?? []).map((o) => typeof o === "string" ? "string" : baseType(o)));
      for (const preferred of ["integer", "boolean", "number"]) if (types.has(preferred)) return preferred;
      return [...types].join(" or ");
    }
    default:
      return n.type;
  }
}

function plural(type: string): string {
  return /^[a-z]+$/.test(type) ? `${type}s` : type;
}

/** The bounds of a leaf in words, when it has other limits than min/max. */
function lengthLimits(node: Node, unit: string): string | undefined {
  const lo = requirementOf(node, "min_length");
  const hi = requirementOf(node, "max_length");
  const units = (n: number) => n === 1 ? unit.slice(0, -1) : unit;
  if (lo !== undefined && hi !== undefined) return `${lo}-${hi} ${units(hi)}`;
  if (hi !== undefined) return `at most ${hi} ${units(hi)}`;
  if (lo !== undefined) return `at least ${lo} ${units(lo)}`;
  return undefined;
}

/**
 * The type and bounds of a setting's schema: `min`/`max` from `minValue`/`maxValue`, lengths of
 * text and lists from `minLength`/`maxLength`, a list's item bounds as `each min-max`.
 */
export function settingShape(schema: unknown): SettingShape {
  const node = unwrap(schema as Node);
  const type = baseType(node);
  const min = requirementOf(node, "min_value");
  const max = requirementOf(node, "max_value");
  const limits: string[] = [];
  if (node.type === "array") {
    const item = node.item ? unwrap(node.item) : undefined;
    const lo = item ? requirementOf(item, "min_value") : undefined;
    const hi = item ? requirementOf(item, "max_value") : undefined;
    if (lo !== undefined || hi !== undefined) limits.push(`each ${range(lo, hi)}`);
    const length = lengthLimits(node, "items");
    if (length) limits.push(length);
  } else if (node.type === "string") {
    const length = lengthLimits(node, "characters");
    if (length) limits.push(length);
  }
  return {
    type,
    ...(min !== undefined ? { min } : {}),
    ...(max !== undefined ? { max } : {}),
    ...(limits.length > 0 ? { limits: limits.join(", ") } : {}),
  };
}

function range(min: number | undefined, max: number | undefined): string {
  if (min !== undefined && max !== undefined) return `${min}-${max}`;
  return min !== undefined ? `at least ${min}` : `at most ${max}`;
}

/** The bounds of a shape in words (`60-86400`, `at least 1`, `at most 20 items`), or "" when none. */
export function shapeBounds(shape: SettingShape): string {
  const parts: string[] = [];
  if (shape.min !== undefined || shape.max !== undefined) parts.push(range(shape.min, shape.max));
  if (shape.limits) parts.push(shape.limits);
  return parts.join(", ");
}

/** One row of `svc help`'s settings and of docs/reference/settings.md. */
export interface SettingRow {
  /** The environment variable. */
  readonly name: string;
  /** The value's type (see {@link SettingShape}). */
  readonly type: string;
  /** The bounds in words, "" when none. */
  readonly bounds: string;
  /** The type and bounds as read from the schema; absent for variables that set no config field. */
  readonly shape?: SettingShape;
  /** The default as text. */
  readonly defaultText: string;
  /** What it means. */
  readonly doc: string;
}
