/**
 * The SQL subject-grant source: one repeatable-read transaction reads the subject and every
 * grant reaching it. A user's grants come through role assignments (direct or through a
 * group) and policies, with their teams and groups in the organization; a service account's
 * through its own role assignments only (it has no memberships, groups or policies).
 *
 * @module
 */
import { sql } from "kysely";
import { ValidationError } from "../../core/errors.ts";
import type { SubjectGrantRow, SubjectGrantSource, SubjectRows } from "../../core/storage/subject-grants.ts";
import type { Executor } from "../database.ts";
import { isUuid } from "../../core/ids.ts";
import { asObject, parseJson } from "./directory-support.ts";

/**
 * Every organization a subject (user or service account) may hold grants pinned to: its
 * memberships, its groups' organizations, and the organizations of the role assignments, roles,
 * policies and grants reaching it (its own and its groups'). Sorted, lower case. One query.
 */
export async function orgContextsOfSubject(db: Executor, subjectId: string): Promise<string[]> {
  if (!isUuid(subjectId)) return [];
  const { rows } = await sql<{ org_id: string }>`
    WITH principals AS (
      SELECT ${subjectId}::uuid AS id
      UNION ALL SELECT group_id FROM group_members WHERE user_id = ${subjectId}::uuid
    )
    SELECT org_id FROM org_memberships WHERE user_id = ${subjectId}::uuid
    UNION SELECT g.org_id FROM group_members gm JOIN groups g ON g.id = gm.group_id
      WHERE gm.user_id = ${subjectId}::uuid AND g.org_id IS NOT NULL
    UNION SELECT coalesce(ra.org_id, r.org_id) FROM role_assignments ra JOIN roles r ON r.id = ra.role_id
      WHERE ra.principal_id IN (SELECT id FROM principals) AND coalesce(ra.org_id, r.org_id) IS NOT NULL
    UNION SELECT gr.org_id FROM role_assignments ra JOIN grants gr ON gr.role_id = ra.role_id
      WHERE ra.principal_id IN (SELECT id FROM principals) AND gr.org_id IS NOT NULL
    UNION SELECT coalesce(gr.org_id, p.org_id) FROM policies p LEFT JOIN grants gr ON gr.policy_id = p.id
      WHERE p.principal_id IN (SELECT id FROM principals) AND coalesce(gr.org_id, p.org_id) IS NOT NULL
    ORDER BY 1`.execute(db);
  return rows.map((row) => String(row.org_id).toLowerCase());
}

/** A {@link SubjectGrantSource} over the svc schema. */
export function createSqlSubjectGrantSource(db: Executor): SubjectGrantSource {
  return {
    async loadSubject(userId, orgId) {
      if (!isUuid(userId)) return null;
      if (orgId !== null && !isUuid(orgId)) {
        throw new ValidationError("orgId must be an organization id (a UUID).", { field: "orgId" });
      }
      // A realm-only load also names the organizations the subject may hold pinned grants in
      // (the authority rule reads them from the cached snapshot).
      const run = async (tx: Executor) => {
        const rows = await loadSubject(tx, userId, orgId);
        if (rows === null || orgId !== null) return rows;
        return { ...rows, orgContexts: await orgContextsOfSubject(tx, userId) };
      };
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
  if (user === undefined) return await loadServiceAccount(db, userId, orgId);

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

  const roleGrants = await roleGrantRows(
    db,
    user.realm_id,
    orgId,
    principal("ra.principal_kind", "ra.principal_id"),
  );

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

  const grants = [
    ...grantRows("role", roleGrants, groupKeyById),
    ...grantRows("policy", policyGrants, groupKeyById),
  ];

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

/**
 * The rows of a service account: its role assignments (realm-wide ones, plus those in `orgId`),
 * no attributes, teams or memberships. Null when no service account has this id. A disabled
 * account has status `Disabled` (it cannot authenticate anyway).
 */
async function loadServiceAccount(
  db: Executor,
  id: string,
  orgId: string | null,
): Promise<SubjectRows | null> {
  const account = await db.selectFrom("service_accounts")
    .select(["id", "realm_id", "disabled"])
    .where("id", "=", id)
    .executeTakeFirst();
  if (account === undefined) return null;
  const rows = await roleGrantRows(
    db,
    account.realm_id,
    orgId,
    // deno-lint-ignore no-explicit-any
    (eb: any) => eb.and([eb("ra.principal_kind", "=", "ServiceAccount"), eb("ra.principal_id", "=", id)]),
  );
  return {
    userId: account.id,
    realmId: account.realm_id,
    status: account.disabled ? "Disabled" : "Active",
    attributes: {},
    isOrgMember: false,
    teamIds: [],
    grants: grantRows("role", rows, new Map()),
  };
}

/** Every grant of the roles assigned to the principals `principal` selects, in the realm and `orgId`. */
// deno-lint-ignore no-explicit-any
async function roleGrantRows(
  db: Executor,
  realmId: string,
  orgId: string | null,
  principal: (eb: any) => any,
) {
  return await db.selectFrom("role_assignments as ra")
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
    .where("r.realm_id", "=", realmId)
    .where("ra.realm_id", "=", realmId)
    .where(principal)
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
}

/** Grant rows with their attribution (`role:<key>`, `policy:<name>`, `@group:<key>` when through a group). */
function grantRows(
  owner: "role" | "policy",
  rows: readonly {
    ownerKey: string;
    principalKind: string;
    principalId: string;
    orgId: string | null;
    pattern: string;
    effect: string;
    teamIds: string[] | null;
    condition: unknown;
  }[],
  groupKeyById: ReadonlyMap<string, string>,
): SubjectGrantRow[] {
  return rows.map((row) => {
    const via = row.principalKind === "Group"
      ? `@group:${groupKeyById.get(row.principalId) ?? row.principalId}`
      : "";
    return {
      pattern: row.pattern,
      effect: row.effect,
      orgId: row.orgId,
      teamIds: row.teamIds ?? [],
      condition: parseJson(row.condition),
      source: `${owner}:${row.ownerKey}${via}`,
    };
  });
}
