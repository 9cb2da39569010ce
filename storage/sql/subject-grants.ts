/**
 * The SQL subject-grant source: one repeatable-read transaction reads the user, their
 * teams and groups in the organization, and every grant reaching them through role
 * assignments (direct or through a group) and policies.
 *
 * @module
 */
import { sql } from "kysely";
import { ValidationError } from "../../core/errors.ts";
import type { SubjectGrantRow, SubjectGrantSource, SubjectRows } from "../contract/subject-grants.ts";
import type { Executor } from "../database.ts";
import { isUuid } from "../../core/ids.ts";
import { asObject, parseJson } from "./directory-support.ts";

/** A {@link SubjectGrantSource} over the svc schema. */
export function createSqlSubjectGrantSource(db: Executor): SubjectGrantSource {
  return {
    async loadSubject(userId, orgId) {
      if (!isUuid(userId)) return null;
      if (orgId !== null && !isUuid(orgId)) {
        throw new ValidationError("orgId must be an organization id (a UUID).", { field: "orgId" });
      }
      const run = (tx: Executor) => loadSubject(tx, userId, orgId);
      if ("isTransaction" in db && db.isTransaction) return await run(db);
      return await (db as Exclude<Executor, { isTransaction: true }>).transaction()
        .setIsolationLevel("repeatable read")
        .setAccessMode("read only")
        .execute(run);
    },
  };
}

async function loadSubject(db: Executor, userId: string, orgId: string | null): Promise<SubjectRows | null> {
  const user = await db.selectFrom("users")
    .select(["id", "realm_id", "status", "attributes"])
    .where("id", "=", userId)
    .executeTakeFirst();
  if (user === undefined) return null;

  let isOrgMember = false;
  let teamIds: string[] = [];
  if (orgId !== null) {
    const membership = await db.selectFrom("org_memberships").select("user_id")
      .where("org_id", "=", orgId).where("user_id", "=", userId).executeTakeFirst();
    isOrgMember = membership !== undefined;
    const teams = await db.selectFrom("team_members as tm")
      .innerJoin("teams as t", "t.id", "tm.team_id")
      .select("t.id")
      .where("tm.user_id", "=", userId)
      .where("t.org_id", "=", orgId)
      .orderBy("t.id")
      .execute();
    teamIds = teams.map((t) => t.id);
  }

  const groups = await db.selectFrom("group_members as gm")
    .innerJoin("groups as g", "g.id", "gm.group_id")
    .select(["g.id", "g.key"])
    .where("gm.user_id", "=", userId)
    .where("g.realm_id", "=", user.realm_id)
    .where((eb) =>
      orgId === null
        ? eb("g.org_id", "is", null)
        : eb.or([eb("g.org_id", "is", null), eb("g.org_id", "=", orgId)])
    )
    .orderBy("g.id")
    .execute();
  const groupKeyById = new Map(groups.map((g) => [g.id, g.key]));
  const groupIds = [...groupKeyById.keys()];

  const principal =
    (kindColumn: "ra.principal_kind" | "p.principal_kind", idColumn: "ra.principal_id" | "p.principal_id") =>
    // deno-lint-ignore no-explicit-any
    (eb: any) =>
      eb.or([
        eb.and([eb(kindColumn, "=", "User"), eb(idColumn, "=", userId)]),
        ...(groupIds.length > 0
          ? [eb.and([eb(kindColumn, "=", "Group"), eb(idColumn, "in", groupIds)])]
          : []),
      ]);

  const roleGrants = await db.selectFrom("role_assignments as ra")
    .innerJoin("roles as r", "r.id", "ra.role_id")
    .innerJoin("grants as gr", "gr.role_id", "r.id")
    .select([
      "r.key as ownerKey",
      "ra.principal_kind as principalKind",
      "ra.principal_id as principalId",
      sql<string | null>`coalesce(gr.org_id, ra.org_id, r.org_id)`.as("orgId"),
      "gr.pattern",
      "gr.effect",
      "gr.team_ids as teamIds",
      "gr.condition",
    ])
    .where("r.realm_id", "=", user.realm_id)
    .where("ra.realm_id", "=", user.realm_id)
    .where(principal("ra.principal_kind", "ra.principal_id"))
    .where((eb) =>
      orgId === null
        ? eb("ra.org_id", "is", null)
        : eb.or([eb("ra.org_id", "is", null), eb("ra.org_id", "=", orgId)])
    )
    .where((eb) =>
      orgId === null
        ? eb("r.org_id", "is", null)
        : eb.or([eb("r.org_id", "is", null), eb("r.org_id", "=", orgId)])
    )
    .orderBy("ra.created_at").orderBy("ra.id").orderBy("gr.created_at").orderBy("gr.id")
    .execute();

  const policyGrants = await db.selectFrom("policies as p")
    .innerJoin("grants as gr", "gr.policy_id", "p.id")
    .select([
      "p.name as ownerKey",
      "p.principal_kind as principalKind",
      "p.principal_id as principalId",
      sql<string | null>`coalesce(gr.org_id, p.org_id)`.as("orgId"),
      "gr.pattern",
      "gr.effect",
      "gr.team_ids as teamIds",
      "gr.condition",
    ])
    .where("p.realm_id", "=", user.realm_id)
    .where(principal("p.principal_kind", "p.principal_id"))
    .where((eb) =>
      orgId === null
        ? eb("p.org_id", "is", null)
        : eb.or([eb("p.org_id", "is", null), eb("p.org_id", "=", orgId)])
    )
    .orderBy("p.created_at").orderBy("p.id").orderBy("gr.created_at").orderBy("gr.id")
    .execute();

  const grants: SubjectGrantRow[] = [];
  const push = (owner: "role" | "policy", rows: typeof roleGrants) => {
    for (const row of rows) {
      const via = row.principalKind === "Group"
        ? `@group:${groupKeyById.get(row.principalId) ?? row.principalId}`
        : "";
      grants.push({
        pattern: row.pattern,
        effect: row.effect,
        orgId: row.orgId,
        teamIds: row.teamIds ?? [],
        condition: parseJson(row.condition),
        source: `${owner}:${row.ownerKey}${via}`,
      });
    }
  };
  push("role", roleGrants);
  push("policy", policyGrants);

  return {
    userId: user.id,
    realmId: user.realm_id,
    status: user.status,
    attributes: asObject(user.attributes),
    isOrgMember,
    teamIds,
    grants,
  };
}
