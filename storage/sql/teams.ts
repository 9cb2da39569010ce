/**
 * The SQL team store: teams of an organization and their members.
 *
 * @module
 */
import type { Clock } from "../../core/clock.ts";
import { NotFoundError, ValidationError } from "../../core/errors.ts";
import { type RandomSource, randomUuid } from "../../core/random.ts";
import type { Team, TeamMember, TeamStore } from "../../core/storage/teams.ts";
import type { Database, Executor } from "../database.ts";
import { type ConstraintMap, guarded, isUuid, now, requireUuid } from "./directory-support.ts";

const TEAM_CONSTRAINTS: ConstraintMap = {
  unique: { teams_org_id_name_key: "team_name_taken" },
  foreign: { teams_org_id_fkey: "Organization", teams_realm_id_fkey: "Realm" },
};
const MEMBER_CONSTRAINTS: ConstraintMap = {
  unique: { team_members_pkey: "team_member_exists" },
  foreign: { team_members_team_id_fkey: "Team", team_members_user_id_fkey: "User" },
};

/** A {@link TeamStore} over the svc schema. */
export function createSqlTeamStore(db: Executor, deps: { clock: Clock; random: RandomSource }): TeamStore {
  return {
    async create(input) {
      requireUuid(input.orgId, "Organization");
      const org = await db.selectFrom("organizations").select("realm_id").where("id", "=", input.orgId)
        .executeTakeFirst();
      if (org === undefined) throw new NotFoundError("Organization not found.");
      const row = await guarded(TEAM_CONSTRAINTS, () =>
        db.insertInto("teams").values({
          id: randomUuid(deps.random),
          realm_id: org.realm_id,
          org_id: input.orgId,
          name: input.name,
          created_at: now(deps.clock),
        }).returningAll().executeTakeFirstOrThrow());
      return teamFromRow(row);
    },
    async get(id) {
      if (!isUuid(id)) return null;
      const row = await db.selectFrom("teams").selectAll().where("id", "=", id).executeTakeFirst();
      return row === undefined ? null : teamFromRow(row);
    },
    async listByOrg(orgId) {
      if (!isUuid(orgId)) return [];
      const rows = await db.selectFrom("teams").selectAll().where("org_id", "=", orgId)
        .orderBy("created_at").orderBy("id").execute();
      return rows.map(teamFromRow);
    },
    async update(id, changes) {
      requireUuid(id, "Team");
      const row = changes.name === undefined
        ? await db.selectFrom("teams").selectAll().where("id", "=", id).executeTakeFirst()
        : await guarded(
          TEAM_CONSTRAINTS,
          () =>
            db.updateTable("teams").set({ name: changes.name }).where("id", "=", id).returningAll()
              .executeTakeFirst(),
        );
      if (row === undefined) throw new NotFoundError("Team not found.");
      return teamFromRow(row);
    },
    async delete(id) {
      if (!isUuid(id)) return false;
      const result = await db.deleteFrom("teams").where("id", "=", id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async addMember(teamId, userId) {
      requireUuid(teamId, "Team");
      requireUuid(userId, "User");
      const team = await db.selectFrom("teams").select("realm_id").where("id", "=", teamId)
        .executeTakeFirst();
      const user = await db.selectFrom("users").select("realm_id").where("id", "=", userId)
        .executeTakeFirst();
      if (team === undefined) throw new NotFoundError("Team not found.");
      if (user === undefined) throw new NotFoundError("User not found.");
      if (team.realm_id !== user.realm_id) {
        throw new ValidationError("The user and the team belong to different realms.", { field: "userId" });
      }
      const row = await guarded(
        MEMBER_CONSTRAINTS,
        () =>
          db.insertInto("team_members").values({
            team_id: teamId,
            user_id: userId,
            created_at: now(deps.clock),
          })
            .returningAll().executeTakeFirstOrThrow(),
      );
      return memberFromRow(row);
    },
    async removeMember(teamId, userId) {
      if (!isUuid(teamId) || !isUuid(userId)) return false;
      const result = await db.deleteFrom("team_members")
        .where("team_id", "=", teamId).where("user_id", "=", userId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async listMembers(teamId) {
      if (!isUuid(teamId)) return [];
      const rows = await db.selectFrom("team_members").selectAll().where("team_id", "=", teamId)
        .orderBy("created_at").orderBy("user_id").execute();
      return rows.map(memberFromRow);
    },
    async listTeamIdsOfUser(userId, orgId) {
      if (!isUuid(userId) || !isUuid(orgId)) return [];
      const rows = await db.selectFrom("team_members as tm")
        .innerJoin("teams as t", "t.id", "tm.team_id")
        .select("t.id")
        .where("tm.user_id", "=", userId)
        .where("t.org_id", "=", orgId)
        .orderBy("t.id")
        .execute();
      return rows.map((r) => r.id);
    },
  };
}

function teamFromRow(row: Database["teams"]): Team {
  return { id: row.id, realmId: row.realm_id, orgId: row.org_id, name: row.name, createdAt: row.created_at };
}

function memberFromRow(row: Database["team_members"]): TeamMember {
  return { teamId: row.team_id, userId: row.user_id, createdAt: row.created_at };
}
