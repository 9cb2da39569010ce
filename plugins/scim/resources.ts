/**
 * SCIM resource representations: input normalized against the schema tables (attribute names in
 * their canonical case, values of their declared type; Entra ID's `"True"`/`"False"` strings for
 * booleans accepted; attributes svc does not know ignored, as RFC 7644 section 3.3 allows),
 * bounded (string lengths, values per multi-valued attribute), and output with `id`, `schemas`
 * and `meta` (`version` is a weak ETag of the row's version), projected by `attributes` /
 * `excludedAttributes`. Pure.
 *
 * @module
 */
import { invalidValue } from "./errors.ts";
import { parseAttrPath } from "./filter.ts";
import {
  type AttrDef,
  ENTERPRISE_SCHEMA,
  GROUP_KIND,
  resolveAttr,
  type ResourceKind,
  USER_KIND,
  USER_SCHEMA,
} from "./schema.ts";

/** Longest string value. */
export const MAX_STRING = 1024;
/** Most values of a multi-valued attribute (`members` excepted). */
export const MAX_VALUES = 50;
/** Most members a group has through SCIM. */
export const MAX_MEMBERS = 10_000;

/** Attributes a client never writes (ignored in a full representation). */
const READ_ONLY = new Set(["id", "meta", "schemas", "groups"]);

function coerce(def: AttrDef, value: unknown, where: string): unknown {
  if (value === null || value === undefined) return undefined;
  switch (def.type) {
    case "boolean":
      if (typeof value === "boolean") return value;
      if (typeof value === "string" && /^(true|false)$/i.test(value)) return value.toLowerCase() === "true";
      throw invalidValue(`${where} must be true or false.`);
    case "integer":
    case "decimal":
      if (typeof value === "number" && Number.isFinite(value)) return value;
      throw invalidValue(`${where} must be a number.`);
    case "complex": {
      if (typeof value !== "object" || Array.isArray(value)) {
        throw invalidValue(`${where} must be an object.`);
      }
      return normalizeAttrs(def.subAttributes ?? [], value as Record<string, unknown>, where);
    }
    default: {
      if (typeof value === "number" || typeof value === "boolean") value = String(value);
      if (typeof value !== "string") throw invalidValue(`${where} must be a string.`);
      if (value.length > MAX_STRING) throw invalidValue(`${where} is longer than ${MAX_STRING} characters.`);
      if (value.includes("\u0000")) throw invalidValue(`${where} must not contain U+0000.`);
      return value;
    }
  }
}

/** Normalizes one attribute's value (multi-valued: a list; a lone value is wrapped). */
export function normalizeValue(def: AttrDef, value: unknown, where: string): unknown {
  if (!def.multiValued) return coerce(def, value, where);
  if (value === null || value === undefined) return undefined;
  const list = Array.isArray(value) ? value : [value];
  const max = def.name === "members" ? MAX_MEMBERS : MAX_VALUES;
  if (list.length > max) throw invalidValue(`${where}: at most ${max} values.`);
  const out = list.map((item, i) => coerce(def, item, `${where}[${i}]`)).filter((v) => v !== undefined);
  if (def.type === "complex") {
    // At most one primary (RFC 7643 2.4): the last one marked wins.
    let primary = -1;
    out.forEach((v, i) => {
      if ((v as Record<string, unknown>).primary === true) primary = i;
    });
    out.forEach((v, i) => {
      const o = v as Record<string, unknown>;
      if (o.primary === true && i !== primary) delete o.primary;
    });
  }
  return out.length === 0 ? undefined : out;
}

/** Normalizes an object of `defs`' attributes: canonical names, typed values, unknown ones dropped. */
export function normalizeAttrs(
  defs: readonly AttrDef[],
  input: Record<string, unknown>,
  where = "",
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    const def = defs.find((d) => d.name.toLowerCase() === key.toLowerCase());
    if (def === undefined || READ_ONLY.has(def.name)) continue;
    const v = normalizeValue(def, value, where === "" ? def.name : `${where}.${def.name}`);
    if (
      v !== undefined &&
      !(typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length === 0)
    ) {
      out[def.name] = v;
    }
  }
  return out;
}

/**
 * A resource of `kind` as stored: the core attributes and each extension under its URN. Keys
 * that are attribute paths (`name.givenName`, `urn:…:User:department`), as some clients send in a
 * PATCH value, are placed where they point.
 */
export function normalizeResource(kind: ResourceKind, input: unknown): Record<string, unknown> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw invalidValue("The resource must be a JSON object.");
  }
  const core: Record<string, unknown> = {};
  const ext: Record<string, Record<string, unknown>> = {};
  for (const [key, value] of Object.entries(input as Record<string, unknown>)) {
    const extension = Object.keys(kind.extensions).find((urn) => urn.toLowerCase() === key.toLowerCase());
    if (extension !== undefined) {
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        throw invalidValue(`${extension} must be an object.`);
      }
      ext[extension] = { ...ext[extension], ...(value as Record<string, unknown>) };
      continue;
    }
    if (key.includes(".") || key.includes(":")) {
      let path;
      try {
        path = parseAttrPath(key, invalidValue);
      } catch {
        continue;
      }
      const found = resolveAttr(kind, path.schema, path.attr, path.sub);
      if (found === null) continue;
      const holder = found.extension === null ? core : (ext[found.extension] ??= {});
      if (found.sub === null) holder[found.def.name] = value;
      else {
        const parent = (holder[found.def.name] ??= {}) as Record<string, unknown>;
        parent[found.sub.name] = value;
      }
      continue;
    }
    core[key] = value;
  }
  const out = normalizeAttrs(kind.attributes, core);
  for (const [urn, attrs] of Object.entries(ext)) {
    const normalized = normalizeAttrs(kind.extensions[urn], attrs, urn);
    if (Object.keys(normalized).length > 0) out[urn] = normalized;
  }
  return out;
}

/** A user resource: `userName` required; the email svc keys the account by. */
export function checkUser(resource: Record<string, unknown>): { userName: string; email: string } {
  const userName = resource.userName;
  if (typeof userName !== "string" || userName.trim() === "") throw invalidValue("userName is required.");
  const emails = (resource.emails ?? []) as { value?: string; primary?: boolean }[];
  const email = emails.find((e) => e.primary === true && e.value)?.value ??
    emails.find((e) => e.value)?.value ?? (userName.includes("@") ? userName : undefined);
  if (email === undefined || !/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 320) {
    throw invalidValue("A user needs an email address: emails[primary] or a userName that is one.");
  }
  return { userName, email: email.toLowerCase() };
}

/** A group resource: `displayName` required. */
export function checkGroup(resource: Record<string, unknown>): { displayName: string } {
  const displayName = resource.displayName;
  if (typeof displayName !== "string" || displayName.trim() === "") {
    throw invalidValue("displayName is required.");
  }
  if (displayName.length > 200) throw invalidValue("displayName is longer than 200 characters.");
  return { displayName };
}

/** The display name svc keeps for a user. */
export function svcDisplayName(resource: Record<string, unknown>): string | null {
  const name = resource.name as Record<string, string> | undefined;
  const joined = [name?.givenName, name?.familyName].filter((p) => p).join(" ");
  const shown = (resource.displayName as string | undefined) ?? name?.formatted ?? (joined || null);
  return shown === null ? null : shown.slice(0, 200);
}

/** The `meta.version` of a row version (a weak ETag). */
export const etagOf = (version: number): string => `W/"${version}"`;

/** The full representation of a stored resource. */
export function representation(
  kind: ResourceKind,
  row: { id: string; resource: Record<string, unknown>; version: number; createdAt: Date; updatedAt: Date },
  baseUrl: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const schemas = [kind.schema, ...Object.keys(kind.extensions).filter((urn) => urn in row.resource)];
  return {
    schemas,
    id: row.id,
    ...row.resource,
    ...extra,
    meta: {
      resourceType: kind.name,
      created: row.createdAt.toISOString(),
      lastModified: row.updatedAt.toISOString(),
      location: `${baseUrl}${kind.endpoint}/${row.id}`,
      version: etagOf(row.version),
    },
  };
}

/** Parses an `attributes` / `excludedAttributes` list into `[urn|null, attr, sub|null]` keys. */
function projectionPaths(
  kind: ResourceKind,
  text: string,
): { ext: string | null; attr: string; sub: string | null }[] {
  const parts = text.split(",").map((p) => p.trim()).filter((p) => p !== "");
  if (parts.length > 50) throw invalidValue("At most 50 attributes.");
  return parts.flatMap((part) => {
    const path = parseAttrPath(part, invalidValue);
    // A bare extension URN (`urn:…:enterprise:2.0:User`) names the whole extension.
    const whole = Object.keys(kind.extensions).find((urn) => urn.toLowerCase() === part.toLowerCase());
    if (whole !== undefined) return [{ ext: whole, attr: "*", sub: null }];
    const found = resolveAttr(kind, path.schema, path.attr, path.sub);
    if (found === null) return [];
    return [{ ext: found.extension, attr: found.def.name, sub: found.sub?.name ?? null }];
  });
}

/** Applies `attributes` or `excludedAttributes` (RFC 7644 3.4.2.5) to a representation. */
export function project(
  kind: ResourceKind,
  full: Record<string, unknown>,
  attributes: string | undefined,
  excluded: string | undefined,
): Record<string, unknown> {
  if (attributes !== undefined && attributes !== "") {
    const keep = projectionPaths(kind, attributes);
    const out: Record<string, unknown> = { schemas: full.schemas, id: full.id };
    for (const p of keep) {
      const source = p.ext === null ? full : full[p.ext] as Record<string, unknown> | undefined;
      if (source === undefined) continue;
      const target = p.ext === null ? out : (out[p.ext] ??= {}) as Record<string, unknown>;
      if (p.attr === "*") {
        Object.assign(target, source);
        continue;
      }
      const value = source[p.attr];
      if (value === undefined) continue;
      if (p.sub === null) target[p.attr] = value;
      else if (Array.isArray(value)) {
        target[p.attr] = value.map((item) => ({ [p.sub!]: (item as Record<string, unknown>)[p.sub!] }));
      } else if (typeof value === "object" && value !== null) {
        const sub = (value as Record<string, unknown>)[p.sub];
        if (sub !== undefined) target[p.attr] = { ...(target[p.attr] as object ?? {}), [p.sub]: sub };
      }
    }
    return out;
  }
  if (excluded !== undefined && excluded !== "") {
    const out = structuredClone(full);
    for (const p of projectionPaths(kind, excluded)) {
      if (p.ext === null && (p.attr === "id" || p.attr === "schemas")) continue;
      const holder = p.ext === null ? out : out[p.ext] as Record<string, unknown> | undefined;
      if (holder === undefined) continue;
      if (p.attr === "*") delete out[p.ext!];
      else if (p.sub === null) delete holder[p.attr];
      else if (Array.isArray(holder[p.attr])) {
        for (const item of holder[p.attr] as Record<string, unknown>[]) delete item[p.sub];
      } else if (typeof holder[p.attr] === "object" && holder[p.attr] !== null) {
        delete (holder[p.attr] as Record<string, unknown>)[p.sub];
      }
    }
    return out;
  }
  return full;
}

export { ENTERPRISE_SCHEMA, GROUP_KIND, USER_KIND, USER_SCHEMA };
