/**
 * The SQL realm store.
 *
 * @module
 */
import type { Clock } from "../../core/clock.ts";
import { type RandomSource, randomUuid } from "../../core/random.ts";
import type { Realm, RealmStore } from "../contract/realms.ts";
import type { Database, Executor } from "../database.ts";
import { type ConstraintMap, guarded, isUuid, now } from "./directory-support.ts";

const CONSTRAINTS: ConstraintMap = {
  unique: { realms_name_key: "realm_name_taken", realms_one_default: "default_realm_exists" },
};

/** A {@link RealmStore} over the svc schema. */
export function createSqlRealmStore(db: Executor, deps: { clock: Clock; random: RandomSource }): RealmStore {
  return {
    async create(input) {
      const row = await guarded(CONSTRAINTS, () =>
        db.insertInto("realms").values({
          id: randomUuid(deps.random),
          name: input.name,
          display_name: input.displayName,
          is_default: input.isDefault ?? false,
          created_at: now(deps.clock),
        }).returningAll().executeTakeFirstOrThrow());
      return realmFromRow(row);
    },
    async get(id) {
      if (!isUuid(id)) return null;
      const row = await db.selectFrom("realms").selectAll().where("id", "=", id).executeTakeFirst();
      return row === undefined ? null : realmFromRow(row);
    },
    async getByName(name) {
      const row = await db.selectFrom("realms").selectAll().where("name", "=", name).executeTakeFirst();
      return row === undefined ? null : realmFromRow(row);
    },
    async getDefault() {
      const row = await db.selectFrom("realms").selectAll().where("is_default", "=", true).executeTakeFirst();
      return row === undefined ? null : realmFromRow(row);
    },
    async list() {
      const rows = await db.selectFrom("realms").selectAll().orderBy("created_at").orderBy("id").execute();
      return rows.map(realmFromRow);
    },
  };
}

function realmFromRow(row: Database["realms"]): Realm {
  return {
    id: row.id,
    name: row.name,
    displayName: row.display_name,
    isDefault: row.is_default,
    createdAt: row.created_at,
  };
}
