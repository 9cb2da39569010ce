/**
 * Definition sync at boot: publishes the declared permissions (svc's own plus the
 * operator's) into the permission catalog, tombstoning those no longer declared, and
 * makes the declared realm-level roles of the default realm match the configuration.
 * Safe when several instances boot at once: a lost creation race re-reads the winner.
 *
 * @module
 */
import { ConflictError } from "../errors.ts";
import type { CatalogSyncResult, PermissionCatalogStore } from "../../storage/contract/permission-catalog.ts";
import type { Realm, RealmStore } from "../../storage/contract/realms.ts";
import type { Grant, GrantInput, RoleStore } from "../../storage/contract/roles.ts";
import type { DeclaredGrant, DefinitionPlan } from "./declarations.ts";
import { canonicalJson } from "../canonical-json.ts";

/** The stores definition sync writes to. */
export interface DefinitionStores {
  catalog: PermissionCatalogStore;
  realms: RealmStore;
  roles: RoleStore;
}

/** What a sync changed. */
export interface DefinitionSyncReport {
  /** The catalog changes. */
  readonly catalog: CatalogSyncResult;
  /** The default realm (created on first boot). */
  readonly defaultRealm: Realm;
  /** Keys of the declared roles created now. */
  readonly rolesCreated: string[];
  /** Keys of the declared roles whose name or grants changed. */
  readonly rolesUpdated: string[];
}

/** The default realm's name when svc creates it on first boot. */
export const DEFAULT_REALM_NAME = "default";

/**
 * Runs definition sync.
 *
 * @example
 * ```ts
 * const report = await syncDefinitions(planDefinitions(config.authz), { catalog, realms, roles });
 * report.catalog.retired; // permission ids no longer declared, now tombstoned
 * ```
 */
export async function syncDefinitions(
  plan: DefinitionPlan,
  stores: DefinitionStores,
): Promise<DefinitionSyncReport> {
  const catalog = await stores.catalog.sync(
    plan.permissions.map((p) => ({ permissionId: p.id, description: p.description || null })),
  );
  const defaultRealm = await ensureDefaultRealm(stores.realms);
  const rolesCreated: string[] = [];
  const rolesUpdated: string[] = [];
  for (const declared of plan.roles) {
    const desired = declared.grants.map(toGrantInput);
    let role = await stores.roles.getByKey(defaultRealm.id, declared.key, null);
    if (role === null) {
      try {
        await stores.roles.createWithGrants(
          { realmId: defaultRealm.id, orgId: null, key: declared.key, displayName: declared.displayName },
          desired,
        );
        rolesCreated.push(declared.key);
        continue;
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
        role = await stores.roles.getByKey(defaultRealm.id, declared.key, null);
        if (role === null) throw error;
      }
    }
    let changed = false;
    if (role.displayName !== declared.displayName) {
      await stores.roles.update(role.id, { displayName: declared.displayName });
      changed = true;
    }
    const existing = await stores.roles.listGrants(role.id);
    const wanted = new Map(desired.map((g) => [grantIdentity(g), g]));
    const have = new Map(existing.map((g) => [grantIdentity(g), g]));
    for (const [identity, grant] of have) {
      if (!wanted.has(identity)) {
        await stores.roles.removeGrant(role.id, grant.id);
        changed = true;
      }
    }
    for (const [identity, grant] of wanted) {
      if (have.has(identity)) continue;
      try {
        await stores.roles.addGrant(role.id, grant);
        changed = true;
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error; // another instance added it first
      }
    }
    if (changed) rolesUpdated.push(declared.key);
  }
  return { catalog, defaultRealm, rolesCreated, rolesUpdated };
}

async function ensureDefaultRealm(realms: RealmStore): Promise<Realm> {
  const existing = await realms.getDefault();
  if (existing !== null) return existing;
  try {
    return await realms.create({ name: DEFAULT_REALM_NAME, displayName: "Default", isDefault: true });
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    const winner = await realms.getDefault();
    if (winner === null) throw error;
    return winner;
  }
}

function toGrantInput(grant: DeclaredGrant): GrantInput {
  return {
    pattern: grant.pattern,
    effect: grant.effect,
    teamIds: grant.teamIds ?? [],
    condition: grant.condition ?? null,
  };
}

/** Everything that makes two grants of a role the same grant. */
function grantIdentity(grant: GrantInput | Grant): string {
  return canonicalJson([
    grant.pattern,
    grant.effect,
    grant.orgId ?? null,
    [...(grant.teamIds ?? [])].sort(),
    grant.condition ?? null,
  ]);
}
