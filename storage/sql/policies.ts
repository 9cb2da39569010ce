/**
 * The SQL policy store: policies of a user or a group, with their grants.
 *
 * @module
 */
import type { Clock } from "../../core/clock.ts";
import { ValidationError } from "../../core/errors.ts";
import { type RandomSource, randomUuid } from "../../core/random.ts";
import type { Policy, PolicyPrincipalKind, PolicyStore } from "../../core/storage/policies.ts";
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

const POLICY_CONSTRAINTS: ConstraintMap = {
  foreign: { policies_realm_id_fkey: "Realm", policies_org_id_fkey: "Organization" },
};
const PRINCIPAL_KINDS: ReadonlySet<string> = new Set<PolicyPrincipalKind>(["User", "Group"]);

/** A {@link PolicyStore} over the svc schema. */
export function createSqlPolicyStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): PolicyStore {
  const newId = () => randomUuid(deps.random);
  return {
    async create(input, grants = []) {
      requireUuid(input.realmId, "Realm");
      if (!PRINCIPAL_KINDS.has(input.principalKind)) {
        throw new ValidationError("principalKind is User or Group.", { field: "principalKind" });
      }
      if (!isUuid(input.principalId)) {
        throw new ValidationError("principalId must be a UUID.", { field: "principalId" });
      }
      const at = now(deps.clock);
      return await atomically(db, async (trx) => {
        const orgId = input.orgId ?? null;
        if (orgId !== null) await requireOrgInRealm(trx, orgId, input.realmId);
        const row = await guarded(POLICY_CONSTRAINTS, () =>
          trx.insertInto("policies").values({
            id: newId(),
            realm_id: input.realmId,
            org_id: orgId,
            name: input.name,
            principal_kind: input.principalKind,
            principal_id: input.principalId,
            created_at: at,
          }).returningAll().executeTakeFirstOrThrow());
        const policy = policyFromRow(row);
        const inserted = await insertGrants(trx, { policyId: policy.id }, grants, at, newId);
        return { policy, grants: inserted };
      });
    },
    async get(id) {
      if (!isUuid(id)) return null;
      const row = await db.selectFrom("policies").selectAll().where("id", "=", id).executeTakeFirst();
      return row === undefined ? null : policyFromRow(row);
    },
    async list(realmId) {
      if (!isUuid(realmId)) return [];
      const rows = await db.selectFrom("policies").selectAll().where("realm_id", "=", realmId)
        .orderBy("created_at").orderBy("id").execute();
      return rows.map(policyFromRow);
    },
    async listPage(realmId, query) {
      const ids = [realmId, query.orgId ?? undefined, query.principal?.id].filter((id) => id !== undefined);
      if (!ids.every((id) => isUuid(id!))) return { items: [], total: 0 };
      let filtered = db.selectFrom("policies").where("realm_id", "=", realmId);
      if (query.orgId === null) filtered = filtered.where("org_id", "is", null);
      else if (query.orgId !== undefined) filtered = filtered.where("org_id", "=", query.orgId);
      if (query.principal !== undefined) {
        filtered = filtered.where("principal_kind", "=", query.principal.kind)
          .where("principal_id", "=", query.principal.id);
      }
      const rows = await filtered.selectAll().orderBy("created_at").orderBy("id")
        .offset(query.offset).limit(query.limit).execute();
      const count = await filtered.select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirstOrThrow();
      return { items: rows.map(policyFromRow), total: Number(count.n) };
    },
    async listForPrincipal(principalKind, principalId, options) {
      const orgId = options?.orgId;
      if (!PRINCIPAL_KINDS.has(principalKind) || !isUuid(principalId) || (orgId != null && !isUuid(orgId))) {
        return [];
      }
      let query = db.selectFrom("policies").selectAll()
        .where("principal_kind", "=", principalKind)
        .where("principal_id", "=", principalId);
      if (orgId === null) query = query.where("org_id", "is", null);
      else if (orgId !== undefined) {
        query = query.where((eb) => eb.or([eb("org_id", "is", null), eb("org_id", "=", orgId)]));
      }
      const rows = await query.orderBy("created_at").orderBy("id").execute();
      return rows.map(policyFromRow);
    },
    async delete(id) {
      if (!isUuid(id)) return false;
      return await atomically(db, async (trx) => {
        await trx.deleteFrom("grants").where("policy_id", "=", id).execute();
        const result = await trx.deleteFrom("policies").where("id", "=", id).executeTakeFirst();
        return Number(result.numDeletedRows) > 0;
      });
    },
    ...grantMethods(db, "Policy", { clock: deps.clock, newId }),
  };
}

function policyFromRow(row: Database["policies"]): Policy {
  return {
    id: row.id,
    realmId: row.realm_id,
    orgId: row.org_id,
    name: row.name,
    principalKind: row.principal_kind,
    principalId: row.principal_id,
    createdAt: row.created_at,
  };
}
