/**
 * The SQL realm store.
 *
 * @module
 */
import type { Selectable, Updateable } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { ConflictError, NotFoundError } from "../../core/errors.ts";
import { type RandomSource, randomUuid } from "../../core/random.ts";
import type { Realm, RealmStore } from "../../core/storage/realms.ts";
import type { Database, Executor } from "../database.ts";
import { atomically, type ConstraintMap, guarded, isUuid, now, requireUuid } from "./directory-support.ts";
import { LockClass, lockForTransaction } from "./advisory-locks.ts";

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
    async update(id, changes) {
      requireUuid(id, "Realm");
      return await atomically(db, async (trx) => {
        // Realm updates queue behind each other, so each one reads the default after the last switch.
        await lockForTransaction(trx, LockClass.realms, "");
        const current = await trx.selectFrom("realms").selectAll().where("id", "=", id).executeTakeFirst();
        if (current === undefined) throw new NotFoundError("Realm not found.");
        if (changes.isDefault === false && current.is_default) {
          throw new ConflictError(
            "The default realm stays the default until another realm is made the default.",
            {
              reason: "default_realm_required",
            },
          );
        }
        if (changes.isDefault === true && !current.is_default) {
          // Clear, then set, in one transaction: readers outside it see the old default or the new one.
          await trx.updateTable("realms").set({ is_default: false }).where("is_default", "=", true).execute();
        }
        const set: Updateable<Database["realms"]> = {};
        if (changes.displayName !== undefined) set.display_name = changes.displayName;
        if (changes.isDefault === true) set.is_default = true;
        if (changes.selfSignUp !== undefined) set.self_sign_up = changes.selfSignUp;
        if (changes.branding !== undefined) {
          set.brand_product_name = changes.branding.productName;
          set.brand_color = changes.branding.color;
          set.brand_logo_url = changes.branding.logoUrl;
        }
        if (Object.keys(set).length === 0) return realmFromRow(current);
        const row = await guarded(
          CONSTRAINTS,
          () =>
            trx.updateTable("realms").set(set).where("id", "=", id).returningAll().executeTakeFirstOrThrow(),
        );
        return realmFromRow(row);
      });
    },
  };
}

/** A `realms` row as a {@link Realm}. */
export function realmFromRow(row: Selectable<Database["realms"]>): Realm {
  return {
    id: row.id,
    name: row.name,
    displayName: row.display_name,
    isDefault: row.is_default,
    selfSignUp: row.self_sign_up,
    branding: { productName: row.brand_product_name, color: row.brand_color, logoUrl: row.brand_logo_url },
    createdAt: row.created_at,
  };
}
