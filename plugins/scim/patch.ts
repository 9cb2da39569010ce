/**
 * SCIM PATCH (RFC 7644 section 3.5.2) on a stored representation, in the forms Okta and Entra ID
 * send: `add`, `replace`, `remove` in any case (`Replace`); with a path (`active`,
 * `name.givenName`, `urn:…:enterprise:2.0:User:department`, `emails[type eq "work"].value`,
 * `members[value eq "…"]`) or without one (a value object whose keys are attributes or attribute
 * paths); Entra's `"active": "False"`; Entra's `remove` of `members` with a value list; an `add`
 * or `replace` through a filter `attr eq "x"` that matches nothing creates the value (Entra adds
 * a work email that way). The result is normalized again by the caller. Pure.
 *
 * @module
 */
import { invalidPath, invalidSyntax, invalidValue, mutability, noTarget } from "./errors.ts";
import { type Filter, getCI, matches, parsePatchPath } from "./filter.ts";
import { normalizeResource, normalizeValue } from "./resources.ts";
import { resolveAttr, type ResourceKind } from "./schema.ts";

/** Most operations in one PATCH. */
export const MAX_OPERATIONS = 100;

/** One operation as sent. */
export interface PatchOperation {
  readonly op: string;
  readonly path?: string;
  readonly value?: unknown;
}

const READ_ONLY = new Set(["id", "meta", "groups", "schemas"]);

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The identity of a multi-valued item for de-duplication: its `value` (and `type`), else its JSON. */
function identity(item: unknown): string {
  if (isObj(item) && item.value !== undefined) {
    return `${String(item.value).toLowerCase()}|${item.type ?? ""}`;
  }
  return JSON.stringify(item);
}

/** Adds `values` to a list, replacing items of the same identity. */
function union(list: unknown[], values: unknown[]): unknown[] {
  const out = [...list];
  for (const v of values) {
    const i = out.findIndex((o) => identity(o) === identity(v));
    if (i >= 0) out[i] = isObj(out[i]) && isObj(v) ? { ...out[i] as Obj, ...v } : v;
    else out.push(v);
  }
  return out;
}

/** A filter `attr eq "x"` (possibly and-ed) as the item it describes, for creating a missing value. */
function itemOfFilter(filter: Filter): Obj | null {
  if (filter.op === "eq" && filter.path.sub === null && typeof filter.value !== "object") {
    return { [filter.path.attr]: filter.value };
  }
  if (filter.op === "and") {
    const l = itemOfFilter(filter.left);
    const r = itemOfFilter(filter.right);
    return l && r ? { ...l, ...r } : null;
  }
  return null;
}

/** Applies `operations` to `resource` (not changed); answers the new, normalized resource. */
export function applyPatch(kind: ResourceKind, resource: Obj, operations: readonly PatchOperation[]): Obj {
  if (operations.length === 0) throw invalidSyntax("Operations must not be empty.");
  if (operations.length > MAX_OPERATIONS) throw invalidSyntax(`At most ${MAX_OPERATIONS} operations.`);
  let out: Obj = structuredClone(resource);
  for (const [i, operation] of operations.entries()) {
    const op = typeof operation.op === "string" ? operation.op.toLowerCase() : "";
    if (op !== "add" && op !== "replace" && op !== "remove") {
      throw invalidSyntax(`Operations[${i}].op must be add, replace or remove.`);
    }
    if (operation.path === undefined || operation.path === null || operation.path === "") {
      if (op === "remove") throw noTarget(`Operations[${i}]: remove needs a path.`);
      if (!isObj(operation.value)) {
        throw invalidValue(`Operations[${i}]: without a path, value is an object.`);
      }
      for (const [key, value] of Object.entries(operation.value)) {
        if (READ_ONLY.has(key.toLowerCase()) || key.toLowerCase() === "schemas") continue;
        out = applyOne(kind, out, op, key, value, i);
      }
    } else {
      if (typeof operation.path !== "string") throw invalidPath(`Operations[${i}].path must be a string.`);
      out = applyOne(kind, out, op, operation.path, operation.value, i);
    }
  }
  return normalizeResource(kind, out);
}

function applyOne(
  kind: ResourceKind,
  resource: Obj,
  op: string,
  pathText: string,
  value: unknown,
  i: number,
): Obj {
  // A bare extension URN as path (or key): its attributes.
  const whole = Object.keys(kind.extensions).find((urn) => urn.toLowerCase() === pathText.toLowerCase());
  if (whole !== undefined) {
    if (op === "remove") {
      delete resource[whole];
      return resource;
    }
    if (!isObj(value)) throw invalidValue(`Operations[${i}]: ${whole} takes an object.`);
    resource[whole] = { ...(resource[whole] as Obj ?? {}), ...value };
    return resource;
  }
  const parsed = parsePatchPath(pathText);
  const found = resolveAttr(kind, parsed.path.schema, parsed.path.attr, parsed.path.sub);
  if (found === null) throw invalidPath(`Operations[${i}]: ${pathText} is not an attribute.`);
  const { def } = found;
  if (READ_ONLY.has(def.name) && found.extension === null) {
    throw mutability(`Operations[${i}]: ${def.name} is read-only.`);
  }
  const holder: Obj = found.extension === null ? resource : (resource[found.extension] ??= {}) as Obj;
  const where = `Operations[${i}]`;
  // Entra sends `manager` as a plain id.
  if (def.name === "manager" && found.sub === null && typeof value === "string") value = { value };

  if (parsed.filter !== null) {
    if (!def.multiValued || def.type !== "complex") {
      throw invalidPath(`${where}: ${def.name} takes no value filter.`);
    }
    const list = (Array.isArray(holder[def.name]) ? holder[def.name] : []) as Obj[];
    const hits = list.filter((item) => matches(parsed.filter!, item));
    const sub = parsed.subAfterFilter === null
      ? null
      : def.subAttributes?.find((d) => d.name.toLowerCase() === parsed.subAfterFilter!.toLowerCase());
    if (sub === undefined) {
      throw invalidPath(`${where}: ${def.name}.${parsed.subAfterFilter} is not an attribute.`);
    }
    if (op === "remove") {
      if (sub === null) holder[def.name] = list.filter((item) => !hits.includes(item));
      else for (const item of hits) delete item[sub.name];
      return resource;
    }
    if (hits.length === 0) {
      const created = itemOfFilter(parsed.filter);
      if (created === null) throw noTarget(`${where}: no value of ${def.name} matches.`);
      const item = sub === null
        ? { ...created, ...(isObj(value) ? value : {}) }
        : { ...created, [sub.name]: value };
      holder[def.name] = [...list, item];
      return resource;
    }
    for (const item of hits) {
      if (sub === null) {
        if (!isObj(value)) throw invalidValue(`${where}: ${def.name}[…] takes an object.`);
        if (op === "replace") {
          for (const k of Object.keys(item)) delete item[k];
        }
        Object.assign(item, value);
      } else item[sub.name] = value;
    }
    return resource;
  }

  if (found.sub !== null) {
    const sub = found.sub;
    if (def.multiValued) {
      // `emails.value` without a filter: every value's sub-attribute.
      const list = (Array.isArray(holder[def.name]) ? holder[def.name] : []) as Obj[];
      if (op === "remove") { for (const item of list) delete item[sub.name]; }
      else if (list.length === 0) holder[def.name] = [{ [sub.name]: value }];
      else for (const item of list) item[sub.name] = value;
      return resource;
    }
    const parent = (isObj(holder[def.name]) ? holder[def.name] : {}) as Obj;
    if (op === "remove") delete parent[sub.name];
    else parent[sub.name] = value;
    holder[def.name] = parent;
    return resource;
  }

  if (op === "remove") {
    if (def.multiValued && value !== undefined && value !== null) {
      // Entra: remove members by a value list.
      const drop = new Set((Array.isArray(value) ? value : [value]).map(identityOfRef));
      const list = (Array.isArray(holder[def.name]) ? holder[def.name] : []) as unknown[];
      holder[def.name] = list.filter((item) => !drop.has(identityOfRef(item)));
      return resource;
    }
    delete holder[def.name];
    return resource;
  }
  if (def.multiValued) {
    const values = normalizeValue(def, value, where) as unknown[] | undefined ?? [];
    const list = (Array.isArray(holder[def.name]) ? holder[def.name] : []) as unknown[];
    holder[def.name] = op === "add" ? union(list, values) : values;
    return resource;
  }
  if (def.type === "complex" && op === "add" && isObj(value) && isObj(holder[def.name])) {
    holder[def.name] = { ...holder[def.name] as Obj, ...value };
    return resource;
  }
  if (value === null) delete holder[def.name];
  else holder[def.name] = value;
  return resource;
}

/** The `value` of a reference item (`{value}`) or the item itself, for matching removals. */
function identityOfRef(item: unknown): string {
  const v = isObj(item) ? getCI(item, "value") : item;
  return String(v).toLowerCase();
}
