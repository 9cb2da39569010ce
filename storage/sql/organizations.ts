/**
 * The SQL organization store: organizations, organization domains, org memberships.
 *
 * @module
 */
import { sql } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { NotFoundError, ValidationError } from "../../core/errors.ts";
import { type RandomSource, randomUuid } from "../../core/random.ts";
import type {
  Organization,
  OrganizationDomain,
  OrganizationStore,
  OrgMembership,
  VerifiedDomainMatch,
} from "../contract/organizations.ts";
import type { Database, Executor } from "../database.ts";
import { type ConstraintMap, guarded, isUuid, now, pageOf, requireUuid } from "./directory-support.ts";

const ORG_CONSTRAINTS: ConstraintMap = {
  unique: { organizations_realm_id_name_key: "organization_name_taken" },
  foreign: { organizations_realm_id_fkey: "Realm" },
};
const DOMAIN_CONSTRAINTS: ConstraintMap = {
  unique: { organization_domains_org_id_kind_value_key: "organization_domain_exists" },
  foreign: { organization_domains_org_id_fkey: "Organization" },
};
const MEMBERSHIP_CONSTRAINTS: ConstraintMap = {
  unique: { org_memberships_pkey: "org_membership_exists" },
  foreign: { org_memberships_org_id_fkey: "Organization", org_memberships_user_id_fkey: "User" },
};

/** Domain values are compared and stored trimmed and lowercased. */
function normalizeDomainValue(value: string): string {
  return value.trim().toLowerCase();
}

/** An {@link OrganizationStore} over the svc schema. */
export function createSqlOrganizationStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): OrganizationStore {
  return {
    async create(input) {
      requireUuid(input.realmId, "Realm");
      const row = await guarded(ORG_CONSTRAINTS, () =>
        db.insertInto("organizations").values({
          id: randomUuid(deps.random),
          realm_id: input.realmId,
          name: input.name,
          display_name: input.displayName,
          status: input.status ?? "Active",
          default_identity_provider_id: input.defaultIdentityProviderId ?? null,
          created_at: now(deps.clock),
        }).returningAll().executeTakeFirstOrThrow());
      return orgFromRow(row);
    },
    async get(id) {
      if (!isUuid(id)) return null;
      const row = await db.selectFrom("organizations").selectAll().where("id", "=", id).executeTakeFirst();
      return row === undefined ? null : orgFromRow(row);
    },
    async getByName(realmId, name) {
      if (!isUuid(realmId)) return null;
      const row = await db.selectFrom("organizations").selectAll()
        .where("realm_id", "=", realmId).where("name", "=", name).executeTakeFirst();
      return row === undefined ? null : orgFromRow(row);
    },
    async listByRealm(realmId) {
      if (!isUuid(realmId)) return [];
      const rows = await db.selectFrom("organizations").selectAll()
        .where("realm_id", "=", realmId).orderBy("created_at").orderBy("id").execute();
      return rows.map(orgFromRow);
    },
    async update(id, changes) {
      requireUuid(id, "Organization");
      const set: Partial<Database["organizations"]> = {};
      if (changes.displayName !== undefined) set.display_name = changes.displayName;
      if (changes.status !== undefined) set.status = changes.status;
      if (changes.defaultIdentityProviderId !== undefined) {
        set.default_identity_provider_id = changes.defaultIdentityProviderId;
      }
      const row = Object.keys(set).length === 0
        ? await db.selectFrom("organizations").selectAll().where("id", "=", id).executeTakeFirst()
        : await db.updateTable("organizations").set(set).where("id", "=", id).returningAll()
          .executeTakeFirst();
      if (row === undefined) throw new NotFoundError("Organization not found.");
      return orgFromRow(row);
    },

    async addDomain(input) {
      requireUuid(input.orgId, "Organization");
      const value = normalizeDomainValue(input.value);
      if (value.length === 0 || input.kind.length === 0) {
        throw new ValidationError("A domain needs a kind and a value.", { field: value ? "kind" : "value" });
      }
      const row = await guarded(DOMAIN_CONSTRAINTS, () =>
        db.insertInto("organization_domains").values({
          id: randomUuid(deps.random),
          org_id: input.orgId,
          kind: input.kind,
          value,
          verified: input.verified ?? false,
          created_at: now(deps.clock),
        }).returningAll().executeTakeFirstOrThrow());
      return domainFromRow(row);
    },
    async setDomainVerified(domainId, verified) {
      requireUuid(domainId, "Organization domain");
      const row = await db.updateTable("organization_domains").set({ verified })
        .where("id", "=", domainId).returningAll().executeTakeFirst();
      if (row === undefined) throw new NotFoundError("Organization domain not found.");
      return domainFromRow(row);
    },
    async removeDomain(domainId) {
      if (!isUuid(domainId)) return false;
      const result = await db.deleteFrom("organization_domains").where("id", "=", domainId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async listDomains(orgId) {
      if (!isUuid(orgId)) return [];
      const rows = await db.selectFrom("organization_domains").selectAll()
        .where("org_id", "=", orgId).orderBy(sql`kind collate "C"`).orderBy(sql`value collate "C"`).orderBy(
          "id",
        ).execute();
      return rows.map(domainFromRow);
    },
    async findVerifiedDomain(kind, value, options) {
      const realmId = options?.realmId;
      if (realmId !== undefined && !isUuid(realmId)) return null;
      let query = db.selectFrom("organization_domains as d")
        .innerJoin("organizations as o", "o.id", "d.org_id")
        .selectAll("d")
        .select("o.realm_id")
        .where("d.kind", "=", kind)
        .where("d.value", "=", normalizeDomainValue(value))
        .where("d.verified", "=", true);
      if (realmId !== undefined) query = query.where("o.realm_id", "=", realmId);
      const row = await query.orderBy("d.created_at").orderBy("d.id").limit(1).executeTakeFirst();
      if (row === undefined) return null;
      const match: VerifiedDomainMatch = { ...domainFromRow(row), realmId: row.realm_id };
      return match;
    },

    async addMember(orgId, userId) {
      requireUuid(orgId, "Organization");
      requireUuid(userId, "User");
      const org = await db.selectFrom("organizations").select("realm_id").where("id", "=", orgId)
        .executeTakeFirst();
      const user = await db.selectFrom("users").select("realm_id").where("id", "=", userId)
        .executeTakeFirst();
      if (org === undefined) throw new NotFoundError("Organization not found.");
      if (user === undefined) throw new NotFoundError("User not found.");
      if (org.realm_id !== user.realm_id) {
        throw new ValidationError("The user and the organization belong to different realms.", {
          field: "userId",
        });
      }
      const row = await guarded(
        MEMBERSHIP_CONSTRAINTS,
        () =>
          db.insertInto("org_memberships").values({
            org_id: orgId,
            user_id: userId,
            created_at: now(deps.clock),
          })
            .returningAll().executeTakeFirstOrThrow(),
      );
      return membershipFromRow(row);
    },
    async removeMember(orgId, userId) {
      if (!isUuid(orgId) || !isUuid(userId)) return false;
      const result = await db.deleteFrom("org_memberships")
        .where("org_id", "=", orgId).where("user_id", "=", userId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async isMember(orgId, userId) {
      if (!isUuid(orgId) || !isUuid(userId)) return false;
      const row = await db.selectFrom("org_memberships").select("user_id")
        .where("org_id", "=", orgId).where("user_id", "=", userId).executeTakeFirst();
      return row !== undefined;
    },
    async listOrgsOfUser(userId) {
      if (!isUuid(userId)) return [];
      const rows = await db.selectFrom("org_memberships as m")
        .innerJoin("organizations as o", "o.id", "m.org_id")
        .selectAll("o")
        .where("m.user_id", "=", userId)
        .orderBy("m.created_at").orderBy("m.org_id")
        .execute();
      return rows.map(orgFromRow);
    },
    async listMembers(orgId, page) {
      const { offset, limit } = pageOf(page);
      if (!isUuid(orgId) || limit === 0) return [];
      let query = db.selectFrom("org_memberships").selectAll()
        .where("org_id", "=", orgId)
        .orderBy("created_at").orderBy("user_id")
        .offset(offset);
      if (limit !== undefined) query = query.limit(limit);
      return (await query.execute()).map(membershipFromRow);
    },
    async countMembers(orgId) {
      if (!isUuid(orgId)) return 0;
      const row = await db.selectFrom("org_memberships")
        .select((eb) => eb.fn.countAll<string | number>().as("count"))
        .where("org_id", "=", orgId).executeTakeFirstOrThrow();
      return Number(row.count);
    },
  };
}

function orgFromRow(row: Database["organizations"]): Organization {
  return {
    id: row.id,
    realmId: row.realm_id,
    name: row.name,
    displayName: row.display_name,
    status: row.status,
    defaultIdentityProviderId: row.default_identity_provider_id,
    createdAt: row.created_at,
  };
}

function domainFromRow(row: Database["organization_domains"]): OrganizationDomain {
  return {
    id: row.id,
    orgId: row.org_id,
    kind: row.kind,
    value: row.value,
    verified: row.verified,
    createdAt: row.created_at,
  };
}

function membershipFromRow(row: Database["org_memberships"]): OrgMembership {
  return { orgId: row.org_id, userId: row.user_id, createdAt: row.created_at };
}
