/**
 * Conformance harness of the directory stores: every suite runs against both
 * drivers. One database is opened per driver per test file (PGlite creation is
 * slow) and shared by its cases, which therefore use unique keys and ids; each case
 * is a step of the driver's test, so the database opens and closes inside one test.
 */
import type { Kysely } from "kysely";
import { ManualClock } from "../../../core/clock.ts";
import { cryptoRandom, randomUuid } from "../../../core/random.ts";
import type { Organization } from "../../../core/storage/organizations.ts";
import type { Realm } from "../../../core/storage/realms.ts";
import type { User } from "../../../core/storage/users.ts";
import type { Database } from "../../../storage/database.ts";
import { createSqlAppCatalogStore } from "../../../storage/sql/app-catalog.ts";
import { createSqlGroupStore } from "../../../storage/sql/groups.ts";
import { createSqlOrganizationStore } from "../../../storage/sql/organizations.ts";
import { createSqlPermissionCatalogStore } from "../../../storage/sql/permission-catalog.ts";
import { createSqlPolicyStore } from "../../../storage/sql/policies.ts";
import { createSqlRealmStore } from "../../../storage/sql/realms.ts";
import { createSqlRoleStore } from "../../../storage/sql/roles.ts";
import { createSqlTeamStore } from "../../../storage/sql/teams.ts";
import { createSqlUserStore } from "../../../storage/sql/users.ts";
import { drivers } from "../../support/db.ts";

/** What a conformance case gets. */
export interface Ctx {
  readonly driver: string;
  readonly db: Kysely<Database>;
  readonly clock: ManualClock;
  readonly stores: ReturnType<typeof storesOver>;
  /** A string unique in this run, for names and keys. */
  unique(prefix?: string): string;
  /** A fresh UUID that names nothing. */
  uuid(): string;
  /** A fresh (non-default) realm. */
  realm(): Promise<Realm>;
  /** A fresh organization (in a fresh realm unless given). */
  org(realmId?: string): Promise<Organization>;
  /** A fresh user of a realm. */
  user(realmId: string): Promise<User>;
}

/** Every directory store over one executor. */
export function storesOver(db: Kysely<Database>, clock: ManualClock) {
  const deps = { clock, random: cryptoRandom };
  return {
    realms: createSqlRealmStore(db, deps),
    organizations: createSqlOrganizationStore(db, deps),
    users: createSqlUserStore(db, deps),
    teams: createSqlTeamStore(db, deps),
    groups: createSqlGroupStore(db, deps),
    roles: createSqlRoleStore(db, deps),
    policies: createSqlPolicyStore(db, deps),
    permissionCatalog: createSqlPermissionCatalogStore(db, deps),
    appCatalog: createSqlAppCatalogStore(db, deps),
  };
}

let sequence = 0;

/** A conformance case. */
export type Case = (ctx: Ctx) => Promise<void>;

/**
 * Registers one test per driver; each suite is a step, each case a nested step.
 * `suites` maps a suite (aggregate) name to its cases.
 */
export function conformance(suites: Record<string, Record<string, Case>>): void {
  for (const driver of drivers) {
    const names = Object.keys(suites).join(", ");
    Deno.test(`${driver.name}: ${names}`, async (t) => {
      const database = await driver.open();
      try {
        const clock = new ManualClock(Date.UTC(2026, 0, 1));
        const stores = storesOver(database.db, clock);
        const unique = (prefix = "x") => `${prefix}-${Date.now().toString(36)}-${(sequence++).toString(36)}`;
        const ctx: Ctx = {
          driver: driver.name,
          db: database.db,
          clock,
          stores,
          unique,
          uuid: () => randomUuid(cryptoRandom),
          realm: () => stores.realms.create({ name: unique("realm"), displayName: "Realm" }),
          org: async (realmId) =>
            await stores.organizations.create({
              realmId: realmId ?? (await ctx.realm()).id,
              name: unique("org"),
              displayName: "Org",
            }),
          user: (realmId) => stores.users.create({ realmId, email: `${unique("user")}@example.com` }),
        };
        for (const [suite, cases] of Object.entries(suites)) {
          await t.step(suite, async (t) => {
            for (const [name, run] of Object.entries(cases)) {
              await t.step(name, () => run(ctx));
            }
          });
        }
      } finally {
        await database.close();
      }
    });
  }
}

/** Asserts that `promise` rejects with a svc error of this code (and conflict reason). */
export async function rejectsWith(
  promise: Promise<unknown>,
  code: string,
  reason?: string,
): Promise<void> {
  try {
    await promise;
  } catch (error) {
    const e = error as { code?: unknown; details?: { reason?: unknown } };
    if (e.code !== code) throw new Error(`expected code ${code}, got ${String(e.code)}: ${error}`);
    if (reason !== undefined && e.details?.reason !== reason) {
      throw new Error(`expected reason ${reason}, got ${String(e.details?.reason)}`);
    }
    return;
  }
  throw new Error(`expected a rejection with code ${code}`);
}
