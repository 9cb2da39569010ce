/**
 * Raw-SQL seeding of directory rows for tests that need a realm, users, organizations,
 * teams, groups, roles, policies and grants without going through the admin stores.
 */
import type { Kysely } from "kysely";
import type { Database } from "../../storage/database.ts";

let sequence = 0;
/** A fresh random UUID. */
export const uuid = (): string => crypto.randomUUID();
/** Strictly increasing timestamps, so that stable orders are predictable. */
const at = (): Date => new Date(Date.UTC(2026, 0, 1) + (sequence++) * 1000);

/** A grant as seeded. */
export interface SeedGrant {
  pattern: string;
  effect?: "Allow" | "Deny";
  orgId?: string | null;
  teamIds?: string[];
  condition?: unknown;
}

/** Seeding helpers bound to one database. */
export function seeder(db: Kysely<Database>) {
  const insertGrants = async (owner: { roleId?: string; policyId?: string }, grants: SeedGrant[]) => {
    for (const g of grants) {
      await db.insertInto("grants").values({
        id: uuid(),
        role_id: owner.roleId ?? null,
        policy_id: owner.policyId ?? null,
        pattern: g.pattern,
        effect: g.effect ?? "Allow",
        org_id: g.orgId ?? null,
        team_ids: g.teamIds ?? [],
        condition: g.condition === undefined ? null : JSON.stringify(g.condition),
        created_at: at(),
      }).execute();
    }
  };
  return {
    async realm(name = `realm-${uuid().slice(0, 8)}`): Promise<string> {
      const id = uuid();
      await db.insertInto("realms").values({
        id,
        name,
        display_name: name,
        is_default: false,
        created_at: at(),
      })
        .execute();
      return id;
    },
    async user(realmId: string, attributes: Record<string, unknown> = {}): Promise<string> {
      const id = uuid();
      await db.insertInto("users").values({
        id,
        realm_id: realmId,
        email: `${id}@example.test`,
        email_verified: true,
        display_name: null,
        status: "Active",
        attributes: JSON.stringify(attributes),
        is_break_glass: false,
        anonymized_at: null,
        created_at: at(),
        updated_at: at(),
      }).execute();
      return id;
    },
    async org(realmId: string, members: string[] = []): Promise<string> {
      const id = uuid();
      await db.insertInto("organizations").values({
        id,
        realm_id: realmId,
        name: `org-${id.slice(0, 8)}`,
        display_name: "Org",
        status: "Active",
        default_identity_provider_id: null,
        created_at: at(),
      }).execute();
      for (const user of members) {
        await db.insertInto("org_memberships").values({ org_id: id, user_id: user, created_at: at() })
          .execute();
      }
      return id;
    },
    async team(realmId: string, orgId: string, members: string[] = []): Promise<string> {
      const id = uuid();
      await db.insertInto("teams").values({
        id,
        realm_id: realmId,
        org_id: orgId,
        name: "team",
        created_at: at(),
      })
        .execute();
      for (const user of members) {
        await db.insertInto("team_members").values({ team_id: id, user_id: user, created_at: at() })
          .execute();
      }
      return id;
    },
    async group(
      realmId: string,
      key: string,
      members: string[] = [],
      orgId: string | null = null,
    ): Promise<string> {
      const id = uuid();
      await db.insertInto("groups").values({
        id,
        realm_id: realmId,
        org_id: orgId,
        key,
        display_name: key,
        created_at: at(),
      }).execute();
      for (const user of members) {
        await db.insertInto("group_members").values({ group_id: id, user_id: user, created_at: at() })
          .execute();
      }
      return id;
    },
    async role(
      realmId: string,
      key: string,
      grants: SeedGrant[],
      orgId: string | null = null,
    ): Promise<string> {
      const id = uuid();
      await db.insertInto("roles").values({
        id,
        realm_id: realmId,
        org_id: orgId,
        key,
        display_name: key,
        created_at: at(),
      }).execute();
      await insertGrants({ roleId: id }, grants);
      return id;
    },
    async addGrants(roleId: string, grants: SeedGrant[]): Promise<void> {
      await insertGrants({ roleId }, grants);
    },
    async assign(
      realmId: string,
      roleId: string,
      principal: { kind: "User" | "Group"; id: string },
      orgId: string | null = null,
    ): Promise<void> {
      await db.insertInto("role_assignments").values({
        id: uuid(),
        realm_id: realmId,
        role_id: roleId,
        principal_kind: principal.kind,
        principal_id: principal.id,
        org_id: orgId,
        created_at: at(),
      }).execute();
    },
    async policy(
      realmId: string,
      name: string,
      principal: { kind: "User" | "Group"; id: string },
      grants: SeedGrant[],
      orgId: string | null = null,
    ): Promise<string> {
      const id = uuid();
      await db.insertInto("policies").values({
        id,
        realm_id: realmId,
        org_id: orgId,
        name,
        principal_kind: principal.kind,
        principal_id: principal.id,
        created_at: at(),
      }).execute();
      await insertGrants({ policyId: id }, grants);
      return id;
    },
  };
}
