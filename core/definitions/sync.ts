/**
 * Definition sync at boot: publishes the declared permissions (svc's own plus the
 * operator's) into the permission catalog, tombstoning those no longer declared, and
 * makes the declared realm-level roles of the default realm match the configuration.
 * Safe when several instances boot at once: a lost creation race re-reads the winner.
 *
 * Given the whole storage, every change of the default realm or of a declared role is an
 * admin mutation like any other: it is appended to the realm's audit chain (actor kind
 * `System`, actor id `svc:definitions`) in the change's own transaction (issue 19: every admin
 * mutation, whatever makes it, is in the chain). The catalog belongs to no realm and has no chain.
 *
 * @module
 */
import { ConflictError } from "../errors.ts";
import type { CatalogSyncResult, PermissionCatalogStore } from "../storage/permission-catalog.ts";
import type { Realm, RealmStore } from "../storage/realms.ts";
import type { Grant, GrantInput, RoleStore } from "../storage/roles.ts";
import type { DeclaredGrant, DefinitionPlan } from "./declarations.ts";
import { canonicalJson } from "../canonical-json.ts";
import { type AuditActor, type AuditRecord, runAdminMutation } from "../audit/mutation.ts";
import type { Storage } from "../storage/storage.ts";

/** The stores definition sync writes to. */
export interface DefinitionStores {
  /** The permission catalog, synced to the plan's permissions. */
  catalog: PermissionCatalogStore;
  /** Realms: where the default realm is found or created. */
  realms: RealmStore;
  /** Roles of the default realm, made to match the declared ones. */
  roles: RoleStore;
  /**
   * The storage the stores above belong to: when given, realm and role changes are audited
   * (see the module documentation).
   */
  storage?: Storage;
}

/** The actor id of definition sync's audit entries (actor kind `System`). */
export const DEFINITIONS_ACTOR_ID = "svc:definitions";

const ACTOR: AuditActor = { id: DEFINITIONS_ACTOR_ID, kind: "System" };

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
 * import {
 *   createSqlStorage,
 *   cryptoRandom,
 *   loadConfig,
 *   openDatabase,
 *   planDefinitions,
 *   syncDefinitions,
 *   systemClock,
 * } from "@svc/svc";
 *
 * const database = await openDatabase({ kind: "embedded" }); // PGlite in memory
 * await database.ensureSchema();
 * const storage = createSqlStorage(database, { clock: systemClock, random: cryptoRandom });
 *
 * const { config } = loadConfig({ env: {} });
 * const report = await syncDefinitions(planDefinitions(config.authz), {
 *   catalog: storage.permissionCatalog,
 *   realms: storage.realms,
 *   roles: storage.roles,
 *   storage, // the realm and role changes join the realm's audit chain
 * });
 * report.defaultRealm.name; // → "default" (created on first boot)
 * report.catalog.retired; // permission ids no longer declared, now tombstoned
 * await database.close();
 * ```
 */
export async function syncDefinitions(
  plan: DefinitionPlan,
  stores: DefinitionStores,
): Promise<DefinitionSyncReport> {
  const catalog = await stores.catalog.sync(
    plan.permissions.map((p) => ({ permissionId: p.id, description: p.description || null })),
  );
  const defaultRealm = await ensureDefaultRealm(stores);
  const rolesCreated: string[] = [];
  const rolesUpdated: string[] = [];
  for (const declared of plan.roles) {
    const change = await syncRole(stores, defaultRealm.id, declared);
    if (change === "created") rolesCreated.push(declared.key);
    if (change === "updated") rolesUpdated.push(declared.key);
  }
  return { catalog, defaultRealm, rolesCreated, rolesUpdated };
}

type DeclaredRole = DefinitionPlan["roles"][number];

/** Makes one declared role match its declaration; a lost race with another instance reads again. */
async function syncRole(
  stores: DefinitionStores,
  realmId: string,
  declared: DeclaredRole,
): Promise<"created" | "updated" | null> {
  for (let attempt = 1;; attempt++) {
    try {
      if (stores.storage === undefined) return (await reconcileRole(stores.roles, realmId, declared)).change;
      const { value } = await runAdminMutation(
        { storage: stores.storage },
        realmId,
        ACTOR,
        async ({ tx }) => {
          const { change, audit } = await reconcileRole(tx.roles, realmId, declared);
          return { value: change, audit };
        },
      );
      return value;
    } catch (error) {
      // Another instance created the role or added a grant first (its transaction is gone).
      if (!(error instanceof ConflictError) || attempt >= 3) throw error;
    }
  }
}

/** The grants of a role as its audit snapshot shows them. */
function grantSnapshot(grant: GrantInput | Grant) {
  return {
    pattern: grant.pattern,
    effect: grant.effect,
    teamIds: [...(grant.teamIds ?? [])],
    condition: grant.condition ?? null,
  };
}

async function reconcileRole(
  roles: RoleStore,
  realmId: string,
  declared: DeclaredRole,
): Promise<{ change: "created" | "updated" | null; audit: AuditRecord | null }> {
  const desired = declared.grants.map(toGrantInput);
  const role = await roles.getByKey(realmId, declared.key, null);
  if (role === null) {
    const created = await roles.createWithGrants(
      { realmId, orgId: null, key: declared.key, displayName: declared.displayName },
      desired,
    );
    return {
      change: "created",
      audit: {
        action: "role.create",
        target: created.role.id,
        after: { key: declared.key, displayName: declared.displayName, grants: desired.map(grantSnapshot) },
      },
    };
  }
  const existing = await roles.listGrants(role.id);
  const before = { key: role.key, displayName: role.displayName, grants: existing.map(grantSnapshot) };
  let changed = false;
  if (role.displayName !== declared.displayName) {
    await roles.update(role.id, { displayName: declared.displayName });
    changed = true;
  }
  const wanted = new Map(desired.map((g) => [grantIdentity(g), g]));
  const have = new Map(existing.map((g) => [grantIdentity(g), g]));
  for (const [identity, grant] of have) {
    if (!wanted.has(identity)) {
      await roles.removeGrant(role.id, grant.id);
      changed = true;
    }
  }
  for (const [identity, grant] of wanted) {
    if (have.has(identity)) continue;
    await roles.addGrant(role.id, grant);
    changed = true;
  }
  if (!changed) return { change: null, audit: null };
  return {
    change: "updated",
    audit: {
      action: "role.update",
      target: role.id,
      before,
      after: { key: role.key, displayName: declared.displayName, grants: desired.map(grantSnapshot) },
    },
  };
}

/** The default realm, created (audited) when missing; a lost creation race re-reads the winner. */
export async function ensureDefaultRealm(
  stores: Pick<DefinitionStores, "realms" | "storage">,
): Promise<Realm> {
  const existing = await stores.realms.getDefault();
  if (existing !== null) return existing;
  const input = { name: DEFAULT_REALM_NAME, displayName: "Default", isDefault: true };
  try {
    if (stores.storage === undefined) return await stores.realms.create(input);
    return await stores.storage.transaction(async (tx) => {
      const realm = await tx.realms.create(input);
      await tx.adminAudit.append(realm.id, {
        action: "realm.create",
        actorId: ACTOR.id,
        actorKind: ACTOR.kind,
        target: realm.id,
        after: input,
      });
      return realm;
    });
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    const winner = await stores.realms.getDefault();
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
