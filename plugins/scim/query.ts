/**
 * SCIM filters and sorting compiled to SQL on the plugin's tables with kysely (used as a query
 * builder only: the compiled text and parameters run through the plugin's SQL, in a transaction
 * where one is open). Every value is a bound parameter. `userName eq "…"` compiles to
 * `lower(user_name) = lower($n)` within the connection, which the unique index
 * `scim_users_user_name (connection_id, lower(user_name))` answers; other attributes of the
 * stored representation are read from its JSON (`resource`), multi-valued ones through
 * `EXISTS (… jsonb_array_elements …)`.
 *
 * @module
 */
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type RawBuilder,
  sql,
} from "kysely";
import { invalidFilter, invalidValue } from "./errors.ts";
import type { AttrPath, CompareOp, CompValue, Filter } from "./filter.ts";
import { type AttrDef, resolveAttr, type ResourceKind } from "./schema.ts";

/** A query builder that never connects: it only compiles. */
// deno-lint-ignore no-explicit-any
export const builder: Kysely<any> = new Kysely({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

type Expr = RawBuilder<unknown>;

/** Columns that hold an attribute outright (per resource kind). */
const USER_COLUMNS: Record<string, { col: string; type: AttrDef["type"]; exact: boolean }> = {
  "id": { col: "user_id::text", type: "string", exact: false },
  "username": { col: "user_name", type: "string", exact: false },
  "externalid": { col: "external_id", type: "string", exact: true },
  "displayname": { col: "display_name", type: "string", exact: false },
  "active": { col: "active", type: "boolean", exact: false },
  "meta.created": { col: "created_at", type: "dateTime", exact: false },
  "meta.lastmodified": { col: "updated_at", type: "dateTime", exact: false },
};
const GROUP_COLUMNS: Record<string, { col: string; type: AttrDef["type"]; exact: boolean }> = {
  "id": { col: "group_id::text", type: "string", exact: false },
  "displayname": { col: "display_name", type: "string", exact: false },
  "externalid": { col: "external_id", type: "string", exact: true },
  "meta.created": { col: "created_at", type: "dateTime", exact: false },
  "meta.lastmodified": { col: "updated_at", type: "dateTime", exact: false },
};

function columnsOf(kind: ResourceKind) {
  return kind.name === "User" ? USER_COLUMNS : GROUP_COLUMNS;
}

/** A JSON text path literal `{a,b,c}` (names come from the schema table, never from input). */
function jsonPath(keys: readonly string[]): Expr {
  return sql.lit(`{${keys.join(",")}}`);
}

function compareText(op: CompareOp, left: Expr, value: string, exact: boolean): Expr {
  const l = exact ? left : sql`lower(${left})`;
  const r = exact ? sql`${value}::text` : sql`lower(${value}::text)`;
  switch (op) {
    case "eq":
      return sql`${l} = ${r}`;
    case "ne":
      return sql`${l} IS DISTINCT FROM ${r}`;
    case "co":
      return sql`strpos(${l}, ${r}) > 0`;
    case "sw":
      return sql`starts_with(${l}, ${r})`;
    case "ew":
      return sql`right(${l}, char_length(${r})) = ${r}`;
    // Ordering by code point (as the RFC's lexical comparison), whatever the database's collation.
    case "gt":
      return sql`${l} COLLATE "C" > ${r}`;
    case "ge":
      return sql`${l} COLLATE "C" >= ${r}`;
    case "lt":
      return sql`${l} COLLATE "C" < ${r}`;
    case "le":
      return sql`${l} COLLATE "C" <= ${r}`;
  }
}

const ORDER: Partial<Record<CompareOp, string>> = { eq: "=", ne: "<>", gt: ">", ge: ">=", lt: "<", le: "<=" };

function comparison(
  op: CompareOp,
  left: Expr,
  type: AttrDef["type"],
  value: CompValue,
  exact: boolean,
  isText: boolean,
): Expr {
  if (value === null) {
    if (op === "eq") return sql`${left} IS NULL`;
    if (op === "ne") return sql`${left} IS NOT NULL`;
    throw invalidFilter(`null compares with eq or ne only.`);
  }
  if (type === "boolean") {
    if (typeof value !== "boolean" || (op !== "eq" && op !== "ne")) {
      throw invalidFilter("A boolean attribute compares with eq or ne and true or false.");
    }
    const b = isText ? sql`(${left}) = ${String(value)}` : sql`${left} = ${value}`;
    return op === "eq" ? b : sql`NOT COALESCE(${b}, false)`;
  }
  if (type === "dateTime") {
    if (typeof value !== "string" || Number.isNaN(Date.parse(value))) {
      throw invalidFilter("A dateTime attribute compares with a date and time string.");
    }
    const o = ORDER[op];
    if (o === undefined) throw invalidFilter(`${op} does not apply to a dateTime attribute.`);
    const l = isText ? sql`(${left})::timestamptz` : left;
    return sql`${l} ${sql.raw(o)} ${new Date(value).toISOString()}::timestamptz`;
  }
  if (typeof value !== "string") throw invalidFilter("A string attribute compares with a string.");
  return compareText(op, left, value, exact);
}

/** Compiles a filter on `kind`'s table (alias-free columns, JSON in `resource`). */
export function compileFilter(kind: ResourceKind, filter: Filter): Expr {
  const columns = columnsOf(kind);
  const attrOf = (path: AttrPath) => {
    const found = resolveAttr(kind, path.schema, path.attr, path.sub);
    if (found === null) {
      throw invalidFilter(`${path.attr}${path.sub ? `.${path.sub}` : ""} is not an attribute.`);
    }
    return found;
  };
  const top = (f: Filter): Expr => {
    switch (f.op) {
      case "and":
        return sql`(${top(f.left)} AND ${top(f.right)})`;
      case "or":
        return sql`(${top(f.left)} OR ${top(f.right)})`;
      case "not":
        return sql`NOT COALESCE(${top(f.filter)}, false)`;
      case "valuePath": {
        const { extension, def } = attrOf(f.path);
        if (def.type !== "complex") throw invalidFilter(`${def.name} has no sub-attributes to filter.`);
        const keys = extension === null ? [def.name] : [extension, def.name];
        const inner = element(def, f.filter, sql`e.v`);
        if (def.multiValued) {
          return sql`EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(resource #> ${
            jsonPath(keys)
          }) = 'array' THEN resource #> ${jsonPath(keys)} ELSE '[]'::jsonb END) AS e(v) WHERE ${inner})`;
        }
        return sql`COALESCE((SELECT ${inner} FROM (SELECT resource #> ${jsonPath(keys)} AS v) AS e), false)`;
      }
      default: {
        const { extension, def, sub } = attrOf(f.path);
        const key = `${extension === null ? "" : `${extension}:`}${def.name}${sub ? `.${sub.name}` : ""}`
          .toLowerCase();
        const column = extension === null ? columns[key] : undefined;
        if (column !== undefined) {
          if (f.op === "pr") return sql`(${sql.raw(column.col)} IS NOT NULL)`;
          // No COALESCE here: a null is false in WHERE and `not` coalesces, and the bare
          // comparison is what the indexes answer (`lower(user_name) = lower($n)`).
          return comparison(f.op, sql.raw(column.col), column.type, f.value, column.exact, false);
        }
        if (def.name === "meta" || def.name === "id") throw invalidFilter(`${key} is not filterable.`);
        const keys = extension === null ? [def.name] : [extension, def.name];
        if (def.multiValued && f.op === "pr" && sub === null) {
          return sql`COALESCE(jsonb_array_length(CASE WHEN jsonb_typeof(resource #> ${
            jsonPath(keys)
          }) = 'array' THEN resource #> ${jsonPath(keys)} ELSE '[]'::jsonb END) > 0, false)`;
        }
        if (def.multiValued) {
          // `emails co "x"` means its values; `emails.type eq "work"` the sub-attribute.
          const subDef = sub ?? def.subAttributes?.find((d) => d.name === "value") ?? null;
          if (def.type === "complex" && subDef === null) throw invalidFilter(`${def.name} has no value.`);
          const sought = f.op === "ne" ? { ...f, op: "eq" } as Filter : f;
          const inner = def.type === "complex"
            ? element(
              def,
              { ...sought, path: { schema: null, attr: subDef!.name, sub: null } } as Filter,
              sql`e.v`,
            )
            : leaf(sought, sql`(e.v #>> '{}')`, def);
          const exists = sql`EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(resource #> ${
            jsonPath(keys)
          }) = 'array' THEN resource #> ${jsonPath(keys)} ELSE '[]'::jsonb END) AS e(v) WHERE ${inner})`;
          // `ne`: no value equals.
          return f.op === "ne" ? sql`NOT ${exists}` : exists;
        }
        const path = sub === null ? keys : [...keys, sub.name];
        return leaf(f, sql`(resource #>> ${jsonPath(path)})`, sub ?? def);
      }
    }
  };
  /** A filter on one value of a complex attribute (JSON `el`); paths name sub-attributes. */
  const element = (parent: AttrDef, f: Filter, el: Expr): Expr => {
    switch (f.op) {
      case "and":
        return sql`(${element(parent, f.left, el)} AND ${element(parent, f.right, el)})`;
      case "or":
        return sql`(${element(parent, f.left, el)} OR ${element(parent, f.right, el)})`;
      case "not":
        return sql`NOT COALESCE(${element(parent, f.filter, el)}, false)`;
      case "valuePath":
        throw invalidFilter("A value filter does not nest.");
      default: {
        const name = f.path.sub ?? f.path.attr;
        const sub = parent.subAttributes?.find((d) => d.name.toLowerCase() === name.toLowerCase());
        if (sub === undefined) throw invalidFilter(`${parent.name}.${name} is not an attribute.`);
        return leaf(f, sql`(${el} ->> ${sub.name})`, sub);
      }
    }
  };
  /** A comparison or `pr` on a JSON text value. */
  const leaf = (f: Filter, text: Expr, def: AttrDef): Expr => {
    if (f.op === "pr") return sql`COALESCE(${text} <> '', false)`;
    if (!("value" in f)) throw invalidFilter("Unexpected filter.");
    return sql`COALESCE(${comparison(f.op, text, def.type, f.value, def.caseExact ?? false, true)}, ${
      f.op === "ne"
    })`;
  };
  return top(filter);
}

/** The SQL to order by `sortBy` (a single-valued attribute), or refusal. */
export function compileSort(kind: ResourceKind, path: AttrPath): Expr {
  const found = resolveAttr(kind, path.schema, path.attr, path.sub);
  if (found === null) throw invalidValue(`sortBy: ${path.attr} is not an attribute.`);
  const { extension, def, sub } = found;
  const key = `${def.name}${sub ? `.${sub.name}` : ""}`.toLowerCase();
  const column = extension === null ? columnsOf(kind)[key] : undefined;
  if (column !== undefined) {
    return column.type === "string" ? sql`lower(${sql.raw(column.col)})` : sql.raw(column.col);
  }
  if (def.multiValued) {
    // RFC 7644 3.4.2.3: a multi-valued attribute sorts by its primary value (else its first).
    const keys = extension === null ? [def.name] : [extension, def.name];
    return sql`lower(COALESCE((SELECT e.v ->> 'value' FROM jsonb_array_elements(CASE WHEN jsonb_typeof(resource #> ${
      jsonPath(keys)
    }) = 'array' THEN resource #> ${
      jsonPath(keys)
    } ELSE '[]'::jsonb END) AS e(v) ORDER BY (e.v ->> 'primary') = 'true' DESC NULLS LAST LIMIT 1), ''))`;
  }
  if (def.type === "complex" && sub === null) throw invalidValue(`sortBy: ${def.name} is complex.`);
  const keys = [...(extension === null ? [] : [extension]), def.name, ...(sub ? [sub.name] : [])];
  return sql`lower(resource #>> ${jsonPath(keys)})`;
}
