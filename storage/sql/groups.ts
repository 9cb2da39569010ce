/**
 * The SQL group store: realm-level and organization-level groups and their members.
 *
 * @module
 */
import type { Clock } from "../../core/clock.ts";
import { NotFoundError, ValidationError } from "../../core/errors.ts";
import { type RandomSource, randomUuid } from "../../core/random.ts";
import type { Group, GroupMember, GroupStore } from "../../core/storage/groups.ts";
import type { Database, Executor } from "../database.ts";
import {
  type ConstraintMap,
  guarded,
  isUuid,
  now,
  requireOrgInRealm,
  requireUuid,
} from "./directory-support.ts";

const GROUP_CONSTRAINTS: ConstraintMap = {
  unique: { groups_key: "group_key_taken" },
  foreign: { groups_realm_id_fkey: "Realm", groups_org_id_fkey: "Organization" },
};
const MEMBER_CONSTRAINTS: ConstraintMap = {
  unique: { group_members_pkey: "group_member_exists" },
  foreign: { group_members_group_id_fkey: "Group", group_members_user_id_fkey: "User" },
};

/** A {@link GroupStore} over the svc schema. */
export function createSqlGroupStore(db: Executor, deps: { clock: Clock; random: RandomSource }): GroupStore {
  return {
    async create(input) {
      requireUuid(input.realmId, "Realm");
      const orgId = input.orgId ?? null;
      if (orgId !== null) await requireOrgInRealm(db, orgId, input.realmId);
      const row = await guarded(GROUP_CONSTRAINTS, () =>
        db.insertInto("groups").values({
          id: randomUuid(deps.random),
          realm_id: input.realmId,
          org_id: orgId,
          key: input.key,
          display_name: input.displayName,
          created_at: now(deps.clock),
        }).returningAll().executeTakeFirstOrThrow());
      return groupFromRow(row);
    },
    async get(id) {
      if (!isUuid(id)) return null;
      const row = await db.selectFrom("groups").selectAll().where("id", "=", id).executeTakeFirst();
      return row === undefined ? null : groupFromRow(row);
    },
    async getByKey(realmId, key, orgId) {
      if (!isUuid(realmId) || (orgId != null && !isUuid(orgId))) return null;
      const row = await db.selectFrom("groups").selectAll()
        .where("realm_id", "=", realmId)
        .where("key", "=", key)
        .where((eb) => orgId == null ? eb("org_id", "is", null) : eb("org_id", "=", orgId))
        .executeTakeFirst();
      return row === undefined ? null : groupFromRow(row);
    },
    async list(realmId, options) {
      const orgId = options?.orgId;
      if (!isUuid(realmId) || (orgId != null && !isUuid(orgId))) return [];
      let query = db.selectFrom("groups").selectAll().where("realm_id", "=", realmId);
      if (orgId === null) query = query.where("org_id", "is", null);
      else if (orgId !== undefined) query = query.where("org_id", "=", orgId);
      const rows = await query.orderBy("created_at").orderBy("id").execute();
      return rows.map(groupFromRow);
    },
    async update(id, changes) {
      requireUuid(id, "Group");
      const row = changes.displayName === undefined
        ? await db.selectFrom("groups").selectAll().where("id", "=", id).executeTakeFirst()
        : await db.updateTable("groups").set({ display_name: changes.displayName }).where("id", "=", id)
          .returningAll().executeTakeFirst();
      if (row === undefined) throw new NotFoundError("Group not found.");
      return groupFromRow(row);
    },
    async delete(id) {
      if (!isUuid(id)) return false;
      const result = await db.deleteFrom("groups").where("id", "=", id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async addMember(groupId, userId) {
      requireUuid(groupId, "Group");
      requireUuid(userId, "User");
      const group = await db.selectFrom("groups").select("realm_id").where("id", "=", groupId)
        .executeTakeFirst();
      if (group === undefined) throw new NotFoundError("Group not found.");
      const user = await db.selectFrom("users").select("realm_id").where("id", "=", userId)
        .executeTakeFirst();
      if (user === undefined) throw new NotFoundError("User not found.");
      if (group.realm_id !== user.realm_id) {
        throw new ValidationError("The user and the group belong to different realms.", { field: "userId" });
      }
      const row = await guarded(
        MEMBER_CONSTRAINTS,
        () =>
          db.insertInto("group_members").values({
            group_id: groupId,
            user_id: userId,
            created_at: now(deps.clock),
          })
            .returningAll().executeTakeFirstOrThrow(),
      );
      return memberFromRow(row);
    },
    async removeMember(groupId, userId) {
      if (!isUuid(groupId) || !isUuid(userId)) return false;
      const result = await db.deleteFrom("group_members")
        .where("group_id", "=", groupId).where("user_id", "=", userId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async listMembers(groupId) {
      if (!isUuid(groupId)) return [];
      const rows = await db.selectFrom("group_members").selectAll().where("group_id", "=", groupId)
        .orderBy("created_at").orderBy("user_id").execute();
      return rows.map(memberFromRow);
    },
    async listGroupsOfUser(userId, filter) {
      const orgId = filter?.orgId;
      if (!isUuid(userId) || (orgId != null && !isUuid(orgId))) return [];
      let query = db.selectFrom("group_members as gm")
        .innerJoin("groups as g", "g.id", "gm.group_id")
        .selectAll("g")
        .where("gm.user_id", "=", userId);
      if (orgId === null) query = query.where("g.org_id", "is", null);
      else if (orgId !== undefined) {
        query = query.where((eb) => eb.or([eb("g.org_id", "is", null), eb("g.org_id", "=", orgId)]));
      }
      const rows = await query.orderBy("g.created_at").orderBy("g.id").execute();
      return rows.map(groupFromRow);
    },
  };
}

function groupFromRow(row: Database["groups"]): Group {
  return {
    id: row.id,
    realmId: row.realm_id,
    orgId: row.org_id,
    key: row.key,
    displayName: row.display_name,
    createdAt: row.created_at,
  };
}

function memberFromRow(row: Database["group_members"]): GroupMember {
  return { groupId: row.group_id, userId: row.user_id, createdAt: row.created_at };
}
