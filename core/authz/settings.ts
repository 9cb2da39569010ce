/**
 * The settings of authorization (`SvcConfig.authz`: the subject-snapshot cache and the permissions
 * and roles declared in the config file): its valibot section, its written-out types and its
 * `SVC_AUTHZ_*` variables. `core/config/schema.ts` composes it into the whole configuration.
 *
 * @module
 */
import * as v from "valibot";
import { type Exactly, int, nonEmpty, rule } from "../settings/fields.ts";
import type { EnvSetting } from "../settings/env.ts";

/** A permission declared in configuration (`authz.permissions`). */
export interface DeclaredPermissionConfig {
  /** The permission id, such as `docs:org:read`. */
  id: string;
  /** What it allows, for people. */
  description?: string;
}

/** A grant of a role declared in configuration. */
export interface DeclaredGrantConfig {
  /** A permission pattern, such as `docs:org:*`. */
  pattern: string;
  /** Allow (default) or Deny. */
  effect: "Allow" | "Deny";
  /** Teams the grant is limited to. */
  teamIds?: string[];
  /** A condition document (checked by definition sync). */
  condition?: unknown;
}

/** A realm-level role of the default realm, declared in configuration (`authz.roles`). */
export interface DeclaredRoleConfig {
  /** The role key, 1 to 100 of `[a-z0-9_:-]`. */
  key: string;
  /** The role's display name. */
  displayName: string;
  /** The role's grants. */
  grants: DeclaredGrantConfig[];
}

/** A declared role as a config file gives it. */
export interface DeclaredRoleInput {
  /** The role key, 1 to 100 of `[a-z0-9_:-]`. */
  key: string;
  /** The role's display name. */
  displayName: string;
  /** The role's grants. */
  grants?: { pattern: string; effect?: "Allow" | "Deny"; teamIds?: string[]; condition?: unknown }[];
}

/** `SvcConfig.authz`: subject snapshots and declared permissions and roles. */
export type AuthzConfig = {
  snapshotCacheTtlSeconds: number;
  snapshotCacheMaxEntries: number;
  permissions: DeclaredPermissionConfig[];
  roles: DeclaredRoleConfig[];
};

/** `SvcConfigInput.authz`: subject snapshots and declared permissions and roles, as a config file gives it. */
export type AuthzConfigInput = {
  snapshotCacheTtlSeconds?: number;
  snapshotCacheMaxEntries?: number;
  permissions?: DeclaredPermissionConfig[];
  roles?: DeclaredRoleInput[];
};

/** The `authz` section of the configuration. */
export const authzSettingsSchema = v.optional(
  v.strictObject({
    snapshotCacheTtlSeconds: v.optional(int(0, 86400, "seconds"), 60),
    snapshotCacheMaxEntries: v.optional(int(0, 10_000_000), 10_000),
    permissions: v.optional(
      v.array(declaredPermission(), rule("is not a list", "a list of permissions")),
      [],
    ),
    roles: v.optional(v.array(declaredRole(), rule("is not a list", "a list of roles")), []),
  }),
  {},
);

/** The `SVC_*` variables of `authz`. */
export const AUTHZ_ENV_SETTINGS: readonly EnvSetting[] = [
  {
    name: "SVC_AUTHZ_SNAPSHOT_CACHE_TTL_SECONDS",
    path: "authz.snapshotCacheTtlSeconds",
    kind: "int",
    doc: "lifetime of a cached subject snapshot (0 disables the cache)",
  },
  {
    name: "SVC_AUTHZ_SNAPSHOT_CACHE_MAX_ENTRIES",
    path: "authz.snapshotCacheMaxEntries",
    kind: "int",
    doc: "subject snapshots kept (LRU; 0 disables the cache)",
  },
];

/** A permission declared in configuration; the grammar is checked by definition sync at boot. */
function declaredPermission() {
  return v.strictObject({
    id: nonEmpty("a permission id such as docs:org:read"),
    description: v.optional(v.string(rule("is not text", "a description"))),
  }, rule("is not an object", "an object with the fields id and description"));
}

/** A grant of a declared role. */
function declaredGrant() {
  return v.strictObject({
    pattern: nonEmpty("a permission pattern such as docs:org:*"),
    effect: v.optional(v.picklist(["Allow", "Deny"], rule("is not an effect", '"Allow" or "Deny"')), "Allow"),
    teamIds: v.optional(
      v.array(v.string(rule("is not text", "a team id")), rule("is not a list", "a list of team ids")),
    ),
    condition: v.optional(v.unknown()),
  }, rule("is not an object", "an object with the fields pattern, effect, teamIds and condition"));
}

/** A realm-level role of the default realm, declared in configuration and synced at boot. */
function declaredRole() {
  return v.strictObject({
    key: v.pipe(
      v.string(rule("is not text", "a role key of [a-z0-9_:-]")),
      v.regex(/^[a-z0-9_:-]{1,100}$/, rule("is not a role key", "1 to 100 of [a-z0-9_:-]")),
    ),
    displayName: nonEmpty("the role's display name"),
    grants: v.optional(v.array(declaredGrant(), rule("is not a list", "a list of grants")), []),
  }, rule("is not an object", "an object with the fields key, displayName and grants"));
}

// The written-out types are exactly what the schema infers: `deno check` fails otherwise.
const _authzOutput: Exactly<v.InferOutput<typeof authzSettingsSchema>, AuthzConfig> = true;
const _authzInput: Exactly<v.InferInput<typeof authzSettingsSchema>, AuthzConfigInput | undefined> = true;
