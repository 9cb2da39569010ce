/**
 * The SQL role store: roles, their grants, and role assignments. Role creation
 * with grants and role deletion each run in one transaction.
 *
 * @module
 */
import { type Selectable, sql } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { ConflictError, NotFoundError, ValidationError } from "../../core/errors.ts";
import { type RandomSource, randomUuid } from "../../core/random.ts";
import {
  type Role,
  ROLE_VERSION_CHANGED,
  type RoleAssignment,
  type RolePrincipalKind,
  type RoleStore,
} from "../../core/storage/roles.ts";
import type { Database, Executor } from "../database.ts";
import {
  atomically,
  type ConstraintMap,
  grantMethods,
  guarded,
  insertGrants,
  isUuid,
  now,
  requireOrgInRealm,
  requireUuid,
} from "./directory-support.ts";

const ROLE_CONSTRAINTS: ConstraintMap = {
  unique: { roles_key: "role_key_taken" },
  foreign: { roles_realm_id_fkey: "Realm", roles_org_id_fkey: "Organization" },
};
const ASSIGNMENT_CONSTRAINTS: ConstraintMap = {
  unique: { role_assignments_unique: "role_assignment_exists" },
  foreign: {
    role_assignments_role_id_fkey: "Role",
    role_assignments_org_id_fkey: "Organization",
    role_assignments_realm_id_fkey: "Realm",
  },
};
const PRINCIPAL_KINDS: ReadonlySet<string> = new Set<RolePrincipalKind>(["User", "Group", "ServiceAccount"]);

/** A {@link RoleStore} over the svc schema. */
export function createSqlRoleStore(db: Executor, deps: { clock: Clock; random: RandomSource }): RoleStore {
  const newId = () => randomUuid(deps.random);

  async function insertRole(
    trx: Executor,
    input: Parameters<RoleStore["create"]>[0],
    at: Date,
  ): Promise<Role> {
    requireUuid(input.realmId, "Realm");
    const orgId = input.orgId ?? null;
    if (orgId !== null) await requireOrgInRealm(trx, orgId, input.realmId);
    const row = await guarded(ROLE_CONSTRAINTS, () =>
      trx.insertInto("roles").values({
        id: newId(),
        realm_id: input.realmId,
        org_id: orgId,
        key: input.key,
        display_name: input.displayName,
        created_at: at,
      }).returningAll().executeTakeFirstOrThrow());
    return roleFromRow(row);
  }

  return {
    async create(input) {
      return await insertRole(db, input, now(deps.clock));
    },
    async createWithGrants(input, grants) {
      const at = now(deps.clock);
      return await atomically(db, async (trx) => {
        const role = await insertRole(trx, input, at);
        const inserted = await insertGrants(trx, { roleId: role.id }, grants, at, newId);
        return { role, grants: inserted };
      });
    },
    async get(id) {
      if (!isUuid(id)) return null;
      const row = await db.selectFrom("roles").selectAll().where("id", "=", id).executeTakeFirst();
      return row === undefined ? null : roleFromRow(row);
    },
    async getByKey(realmId, key, orgId) {
      if (!isUuid(realmId) || (orgId != null && !isUuid(orgId))) return null;
      const row = await db.selectFrom("roles").selectAll()
        .where("realm_id", "=", realmId)
        .where("key", "=", key)
        .where((eb) => orgId == null ? eb("org_id", "is", null) : eb("org_id", "=", orgId))
        .executeTakeFirst();
      return row === undefined ? null : roleFromRow(row);
    },
    async list(realmId, options) {
      const orgId = options?.orgId;
      if (!isUuid(realmId) || (orgId != null && !isUuid(orgId))) return [];
      let query = db.selectFrom("roles").selectAll().where("realm_id", "=", realmId);
      if (orgId === null) query = query.where("org_id", "is", null);
      else if (orgId !== undefined) query = query.where("org_id", "=", orgId);
      const rows = await query.orderBy("created_at").orderBy("id").execute();
      return rows.map(roleFromRow);
    },
    async listPage(realmId, query) {
      const orgId = query.orgId;
      if (!isUuid(realmId) || (orgId != null && !isUuid(orgId))) return { items: [], total: 0 };
      let filtered = db.selectFrom("roles").where("realm_id", "=", realmId);
      if (orgId === null) filtered = filtered.where("org_id", "is", null);
      else if (orgId !== undefined) filtered = filtered.where("org_id", "=", orgId);
      else if (query.orgLevelOnly) filtered = filtered.where("org_id", "is not", null);
      if (query.search !== undefined && query.search !== "") {
        filtered = filtered.where(sql<boolean>`strpos(lower(key), ${query.search.toLowerCase()}) > 0`);
      }
      const rows = await filtered.selectAll().orderBy("created_at").orderBy("id")
        .offset(query.offset).limit(query.limit).execute();
      const count = await filtered.select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirstOrThrow();
      return { items: rows.map(roleFromRow), total: Number(count.n) };
    },
    async update(id, changes, options) {
      requireUuid(id, "Role");
      const expected = options?.expectedVersion;
      // The version check and the write are one statement: of two writers holding the same
      // version, exactly one matches the row.
      const row = await db.updateTable("roles")
        .set((eb) => ({
          display_name: changes.displayName ?? eb.ref("display_name"),
          version: eb("version", "+", 1),
        }))
        .where("id", "=", id)
        .$if(expected !== undefined, (q) => q.where("version", "=", expected!))
        .returningAll().executeTakeFirst();
      if (row !== undefined) return roleFromRow(row);
      const exists = await db.selectFrom("roles").select("id").where("id", "=", id).executeTakeFirst();
      if (exists === undefined) throw new NotFoundError("Role not found.");
      throw new ConflictError("The role changed since it was read.", { reason: ROLE_VERSION_CHANGED });
    },
    async delete(id) {
      if (!isUuid(id)) return false;
      return await atomically(db, async (trx) => {
        await trx.deleteFrom("role_assignments").where("role_id", "=", id).execute();
        await trx.deleteFrom("grants").where("role_id", "=", id).execute();
        const result = await trx.deleteFrom("roles").where("id", "=", id).executeTakeFirst();
        return Number(result.numDeletedRows) > 0;
      });
    },

    ...grantMethods(db, "Role", { clock: deps.clock, newId }),

    async assign(input) {
      requireUuid(input.roleId, "Role");
      if (!PRINCIPAL_KINDS.has(input.principalKind)) {
        throw new ValidationError("principalKind is User, Group or ServiceAccount.", {
          field: "principalKind",
        });
      }
      if (!isUuid(input.principalId)) {
        throw new ValidationError("principalId must be a UUID.", { field: "principalId" });
      }
      const role = await db.selectFrom("roles").select(["realm_id", "org_id"]).where("id", "=", input.roleId)
        .executeTakeFirst();
      if (role === undefined) throw new NotFoundError("Role not found.");
      let orgId = input.orgId ?? null;
      if (role.org_id !== null) {
        if (orgId !== null && orgId !== role.org_id) {
          throw new ValidationError("An organization-level role is assigned only in its organization.", {
            field: "orgId",
          });
        }
        orgId = role.org_id;
      } else if (orgId !== null) {
        await requireOrgInRealm(db, orgId, role.realm_id);
      }
      const row = await guarded(ASSIGNMENT_CONSTRAINTS, () =>
        db.insertInto("role_assignments").values({
          id: newId(),
          realm_id: role.realm_id,
          role_id: input.roleId,
          principal_kind: input.principalKind,
          principal_id: input.principalId,
          org_id: orgId,
          created_at: now(deps.clock),
        }).returningAll().executeTakeFirstOrThrow());
      return assignmentFromRow(row);
    },
    async unassign(assignmentId) {
      if (!isUuid(assignmentId)) return false;
      const result = await db.deleteFrom("role_assignments").where("id", "=", assignmentId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async getAssignment(assignmentId) {
      if (!isUuid(assignmentId)) return null;
      const row = await db.selectFrom("role_assignments").selectAll().where("id", "=", assignmentId)
        .executeTakeFirst();
      return row === undefined ? null : assignmentFromRow(row);
    },
    async listAssignmentsForPrincipal(principalKind, principalId, options) {
      const orgId = options?.orgId;
      if (!PRINCIPAL_KINDS.has(principalKind) || !isUuid(principalId) || (orgId != null && !isUuid(orgId))) {
        return [];
      }
      let query = db.selectFrom("role_assignments").selectAll()
        .where("principal_kind", "=", principalKind)
        .where("principal_id", "=", principalId);
      if (orgId === null) query = query.where("org_id", "is", null);
      else if (orgId !== undefined) {
        query = query.where((eb) => eb.or([eb("org_id", "is", null), eb("org_id", "=", orgId)]));
      }
      const rows = await query.orderBy("created_at").orderBy("id").execute();
      return rows.map(assignmentFromRow);
    },
    async listAssignmentsOfRole(roleId) {
      if (!isUuid(roleId)) return [];
      const rows = await db.selectFrom("role_assignments").selectAll().where("role_id", "=", roleId)
        .orderBy("created_at").orderBy("id").execute();
      return rows.map(assignmentFromRow);
    },
    async listAssignmentsPage(realmId, query) {
      const ids = [realmId, query.roleId, query.principal?.id, query.orgId].filter((id) => id !== undefined);
      if (!ids.every((id) => isUuid(id!))) return { items: [], total: 0 };
      let filtered = db.selectFrom("role_assignments").where("realm_id", "=", realmId);
      if (query.roleId !== undefined) filtered = filtered.where("role_id", "=", query.roleId);
      if (query.principal !== undefined) {
        filtered = filtered.where("principal_kind", "=", query.principal.kind)
          .where("principal_id", "=", query.principal.id);
      }
      if (query.orgId !== undefined) filtered = filtered.where("org_id", "=", query.orgId);
      const rows = await filtered.selectAll().orderBy("created_at").orderBy("id")
        .offset(query.offset).limit(query.limit).execute();
      const count = await filtered.select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirstOrThrow();
      return { items: rows.map(assignmentFromRow), total: Number(count.n) };
    },
  };
}

function roleFromRow(row: Selectable<Database["roles"]>): Role {
  return {
    id: row.id,
    realmId: row.realm_id,
    orgId: row.org_id,
    key: row.key,
    displayName: row.display_name,
    version: Number(row.version),
    createdAt: row.created_at,
  };
}

function assignmentFromRow(row: Database["role_assignments"]): RoleAssignment {
  return {
    id: row.id,
    realmId: row.realm_id,
    roleId: row.role_id,
    principalKind: row.principal_kind,
    principalId: row.principal_id,
    orgId: row.org_id,
    createdAt: row.created_at,
  };
}
