/**
 * The SQL organization store: organizations, organization domains, org memberships.
 *
 * @module
 */
import { type Selectable, sql } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { ConflictError, NotFoundError, ValidationError } from "../../core/errors.ts";
import { type RandomSource, randomUuid } from "../../core/random.ts";
import type {
  Organization,
  OrganizationDomain,
  OrganizationStore,
  OrgMembership,
  VerifiedDomainMatch,
} from "../../core/storage/organizations.ts";
import type { Database, Executor } from "../database.ts";
import { orgContextsOfSubject } from "./subject-grants.ts";
import {
  atomically,
  type ConstraintMap,
  guarded,
  isUuid,
  now,
  pageOf,
  requireUuid,
} from "./directory-support.ts";
import { LockClass, lockForTransaction } from "./advisory-locks.ts";

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

/** A LIKE pattern matching `text` anywhere, with `%`, `_` and `\\` matching themselves. */
function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

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
    async search(realmId, query = {}) {
      const { offset, limit } = pageOf(query);
      if (!isUuid(realmId)) return { items: [], total: 0 };
      let base = db.selectFrom("organizations").where("realm_id", "=", realmId);
      const search = query.search?.trim();
      if (search) {
        const pattern = containsPattern(search);
        base = base.where((eb) =>
          eb.or([eb("name", "ilike", pattern), eb("display_name", "ilike", pattern)])
        );
      }
      const counted = await base.select((eb) => eb.fn.countAll<string | number>().as("count"))
        .executeTakeFirstOrThrow();
      let page = base.selectAll().orderBy("created_at").orderBy("id").offset(offset);
      if (limit !== undefined) page = page.limit(limit);
      const rows = limit === 0 ? [] : await page.execute();
      return { items: rows.map(orgFromRow), total: Number(counted.count) };
    },
    async update(id, changes, options = {}) {
      requireUuid(id, "Organization");
      const set: Record<string, unknown> = {};
      if (changes.displayName !== undefined) set.display_name = changes.displayName;
      if (changes.status !== undefined) set.status = changes.status;
      if (changes.defaultIdentityProviderId !== undefined) {
        set.default_identity_provider_id = changes.defaultIdentityProviderId;
      }
      const expected = options.expectedVersion;
      let row: Selectable<Database["organizations"]> | undefined;
      if (Object.keys(set).length === 0) {
        row = await db.selectFrom("organizations").selectAll().where("id", "=", id).executeTakeFirst();
        if (row !== undefined && expected !== undefined && row.version !== expected) throw versionMismatch();
      } else {
        // The version check and the write are one statement: of two writers holding the same
        // version, exactly one wins.
        let update = db.updateTable("organizations")
          .set({ ...set, version: sql<number>`version + 1` })
          .where("id", "=", id);
        if (expected !== undefined) update = update.where("version", "=", expected);
        row = await update.returningAll().executeTakeFirst();
        if (row === undefined && expected !== undefined) {
          const exists = await db.selectFrom("organizations").select("id").where("id", "=", id)
            .executeTakeFirst();
          if (exists !== undefined) throw versionMismatch();
        }
      }
      if (row === undefined) throw new NotFoundError("Organization not found.");
      return orgFromRow(row);
    },
    async delete(id) {
      if (!isUuid(id)) return false;
      return await atomically(db, async (trx) => {
        // Rows that name the organization without a foreign key; the rest cascades.
        await trx.deleteFrom("grants").where("org_id", "=", id).execute();
        await trx.deleteFrom("webhook_endpoints").where("org_id", "=", id).execute();
        const result = await trx.deleteFrom("organizations").where("id", "=", id).executeTakeFirst();
        return Number(result.numDeletedRows) > 0;
      });
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
          verification_token: input.verificationToken ?? null,
        }).returningAll().executeTakeFirstOrThrow());
      return domainFromRow(row);
    },
    async getDomain(domainId) {
      if (!isUuid(domainId)) return null;
      const row = await db.selectFrom("organization_domains").selectAll().where("id", "=", domainId)
        .executeTakeFirst();
      return row === undefined ? null : domainFromRow(row);
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
      const at = now(deps.clock);
      const row = await atomically(db, async (trx) => {
        await lockForTransaction(trx, LockClass.membership, orgId);
        return await guarded(MEMBERSHIP_CONSTRAINTS, () =>
          trx.insertInto("org_memberships").values({
            org_id: orgId,
            user_id: userId,
            // Strictly after every existing membership of the organization (see the contract).
            created_at: sql<Date>`greatest(${at}::timestamptz, (
              SELECT max(created_at) + interval '1 microsecond' FROM org_memberships WHERE org_id = ${orgId}
            ))`,
          }).returningAll().executeTakeFirstOrThrow());
      });
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
    async listOrgContextsOfSubject(subjectId) {
      return await orgContextsOfSubject(db, subjectId);
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

function versionMismatch(): ConflictError {
  return new ConflictError("The organization changed since it was read.", {
    reason: "organization_version_mismatch",
  });
}

function orgFromRow(row: Selectable<Database["organizations"]>): Organization {
  return {
    id: row.id,
    realmId: row.realm_id,
    name: row.name,
    displayName: row.display_name,
    status: row.status,
    defaultIdentityProviderId: row.default_identity_provider_id,
    createdAt: row.created_at,
    version: row.version,
  };
}

function domainFromRow(row: Selectable<Database["organization_domains"]>): OrganizationDomain {
  return {
    id: row.id,
    orgId: row.org_id,
    kind: row.kind,
    value: row.value,
    verified: row.verified,
    createdAt: row.created_at,
    verificationToken: row.verification_token,
  };
}

function membershipFromRow(row: Database["org_memberships"]): OrgMembership {
  return { orgId: row.org_id, userId: row.user_id, createdAt: row.created_at };
}
