/**
 * The SCIM schemas svc serves (RFC 7643 section 4 core User and Group, section 4.3 enterprise
 * user extension): attribute definitions used by `/Schemas`, the filter compiler, attribute
 * projection and PATCH. Only the attributes listed here are stored; others are refused
 * (`invalidPath` / `invalidFilter`), so every input's cost is bounded by this table.
 *
 * @module
 */

export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
export const ENTERPRISE_SCHEMA = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
export const LIST_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
export const PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

/** An attribute's type (RFC 7643 section 2.3). */
export type AttrType = "string" | "boolean" | "decimal" | "integer" | "dateTime" | "reference" | "complex";

/** An attribute definition. */
export interface AttrDef {
  readonly name: string;
  readonly type: AttrType;
  readonly multiValued?: boolean;
  readonly caseExact?: boolean;
  readonly mutability?: "readOnly" | "readWrite" | "immutable" | "writeOnly";
  readonly returned?: "always" | "default" | "never" | "request";
  readonly uniqueness?: "none" | "server" | "global";
  readonly required?: boolean;
  readonly subAttributes?: readonly AttrDef[];
  readonly description?: string;
}

const s = (name: string, extra: Partial<AttrDef> = {}): AttrDef => ({ name, type: "string", ...extra });
const multi = (name: string, subs: readonly AttrDef[]): AttrDef => ({
  name,
  type: "complex",
  multiValued: true,
  subAttributes: subs,
});
const typed = [s("value"), s("display"), s("type"), { name: "primary", type: "boolean" } as AttrDef];

/** The core User attributes (without `id`, `meta`, `schemas`). */
export const USER_ATTRIBUTES: readonly AttrDef[] = [
  s("userName", { required: true, uniqueness: "server" }),
  s("externalId", { caseExact: true }),
  {
    name: "name",
    type: "complex",
    subAttributes: [
      s("formatted"),
      s("familyName"),
      s("givenName"),
      s("middleName"),
      s("honorificPrefix"),
      s("honorificSuffix"),
    ],
  },
  s("displayName"),
  s("nickName"),
  s("profileUrl", { type: "reference" }),
  s("title"),
  s("userType"),
  s("preferredLanguage"),
  s("locale"),
  s("timezone"),
  { name: "active", type: "boolean" },
  multi("emails", typed),
  multi("phoneNumbers", typed),
  multi("ims", typed),
  multi("photos", typed),
  multi("addresses", [
    s("formatted"),
    s("streetAddress"),
    s("locality"),
    s("region"),
    s("postalCode"),
    s("country"),
    s("type"),
    { name: "primary", type: "boolean" },
  ]),
  {
    name: "groups",
    type: "complex",
    multiValued: true,
    mutability: "readOnly",
    subAttributes: [
      s("value", { mutability: "readOnly" }),
      s("$ref", { type: "reference" }),
      s("display"),
      s("type"),
    ],
  },
  multi("entitlements", typed),
  multi("roles", typed),
];

/** The enterprise user extension's attributes. */
export const ENTERPRISE_ATTRIBUTES: readonly AttrDef[] = [
  s("employeeNumber"),
  s("costCenter"),
  s("organization"),
  s("division"),
  s("department"),
  {
    name: "manager",
    type: "complex",
    subAttributes: [
      s("value"),
      s("$ref", { type: "reference" }),
      s("displayName", { mutability: "readOnly" }),
    ],
  },
];

/** The core Group attributes. */
export const GROUP_ATTRIBUTES: readonly AttrDef[] = [
  s("displayName", { required: true, uniqueness: "server" }),
  s("externalId", { caseExact: true }),
  multi("members", [
    s("value", { mutability: "immutable" }),
    s("$ref", { type: "reference" }),
    s("display"),
    s(
      "type",
    ),
  ]),
];

/** Attributes every resource has (RFC 7643 section 3.1). */
export const COMMON_ATTRIBUTES: readonly AttrDef[] = [
  s("id", { caseExact: true, mutability: "readOnly", returned: "always" }),
  {
    name: "meta",
    type: "complex",
    mutability: "readOnly",
    subAttributes: [
      s("resourceType"),
      { name: "created", type: "dateTime" },
      { name: "lastModified", type: "dateTime" },
      s("location", { type: "reference" }),
      s("version", { caseExact: true }),
    ],
  },
];

/** A resource type: its core schema, extensions and attribute tables. */
export interface ResourceKind {
  readonly name: "User" | "Group";
  readonly endpoint: "/Users" | "/Groups";
  readonly schema: string;
  readonly attributes: readonly AttrDef[];
  readonly extensions: Readonly<Record<string, readonly AttrDef[]>>;
}

export const USER_KIND: ResourceKind = {
  name: "User",
  endpoint: "/Users",
  schema: USER_SCHEMA,
  attributes: USER_ATTRIBUTES,
  extensions: { [ENTERPRISE_SCHEMA]: ENTERPRISE_ATTRIBUTES },
};

export const GROUP_KIND: ResourceKind = {
  name: "Group",
  endpoint: "/Groups",
  schema: GROUP_SCHEMA,
  attributes: GROUP_ATTRIBUTES,
  extensions: {},
};

/** An attribute found by a path: where it lives in the resource JSON and its definition. */
export interface ResolvedAttr {
  /** The extension's URN, or null for a core (or common) attribute. */
  readonly extension: string | null;
  readonly def: AttrDef;
  readonly sub: AttrDef | null;
}

const lowerEq = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * The attribute `attr` (and sub-attribute `sub`) of `kind` under `schema` (a URN prefix or null),
 * case-insensitively (RFC 7643 section 2.1); null when it is not one.
 */
export function resolveAttr(
  kind: ResourceKind,
  schema: string | null,
  attr: string,
  sub: string | null,
): ResolvedAttr | null {
  let extension: string | null = null;
  let table: readonly AttrDef[];
  if (schema === null || lowerEq(schema, kind.schema)) {
    table = [...COMMON_ATTRIBUTES, ...kind.attributes];
  } else {
    const found = Object.keys(kind.extensions).find((urn) => lowerEq(urn, schema));
    if (found === undefined) return null;
    extension = found;
    table = kind.extensions[found];
  }
  const def = table.find((d) => lowerEq(d.name, attr));
  if (def === undefined) return null;
  if (sub === null) return { extension, def, sub: null };
  const subDef = def.subAttributes?.find((d) => lowerEq(d.name, sub));
  if (subDef === undefined) return null;
  return { extension, def, sub: subDef };
}

/** The RFC 7643 section 7 representation of an attribute table, for `/Schemas`. */
export function schemaAttributes(defs: readonly AttrDef[]): Record<string, unknown>[] {
  return defs.map((d) => ({
    name: d.name,
    type: d.type,
    multiValued: d.multiValued ?? false,
    description: d.description ?? d.name,
    required: d.required ?? false,
    caseExact: d.caseExact ?? false,
    mutability: d.mutability ?? "readWrite",
    returned: d.returned ?? "default",
    uniqueness: d.uniqueness ?? "none",
    ...(d.type === "reference" ? { referenceTypes: ["external"] } : {}),
    ...(d.subAttributes === undefined ? {} : { subAttributes: schemaAttributes(d.subAttributes) }),
  }));
}
