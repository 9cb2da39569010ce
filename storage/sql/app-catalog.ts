/**
 * The SQL app catalog.
 *
 * @module
 */
import { sql } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { ValidationError } from "../../core/errors.ts";
import type { RandomSource } from "../../core/random.ts";
import type { AppCatalogEntry, AppCatalogStore, RegisterAppInput } from "../../core/storage/app-catalog.ts";
import type { Database, Executor } from "../database.ts";
import { type ConstraintMap, guarded, now } from "./directory-support.ts";

const CONSTRAINTS: ConstraintMap = { unique: { app_catalog_pkey: "app_key_taken" } };

function checked(input: RegisterAppInput): RegisterAppInput {
  if (typeof input.appKey !== "string" || input.appKey.length === 0) {
    throw new ValidationError("An AppKey is required.", { field: "appKey" });
  }
  return input;
}

/** An {@link AppCatalogStore} over the svc schema. */
export function createSqlAppCatalogStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): AppCatalogStore {
  const get = async (appKey: string): Promise<AppCatalogEntry | null> => {
    const row = await db.selectFrom("app_catalog").selectAll().where("app_key", "=", appKey)
      .executeTakeFirst();
    return row === undefined ? null : entryFromRow(row);
  };
  return {
    async register(input) {
      const { appKey, displayName } = checked(input);
      const row = await guarded(CONSTRAINTS, () =>
        db.insertInto("app_catalog").values({
          app_key: appKey,
          display_name: displayName ?? null,
          created_at: now(deps.clock),
        }).returningAll().executeTakeFirstOrThrow());
      return entryFromRow(row);
    },
    async ensure(input) {
      const { appKey, displayName } = checked(input);
      await db.insertInto("app_catalog").values({
        app_key: appKey,
        display_name: displayName ?? null,
        created_at: now(deps.clock),
      }).onConflict((oc) => oc.column("app_key").doNothing()).execute();
      const entry = await get(appKey);
      if (entry === null) throw new Error("app catalog entry vanished after insert");
      return entry;
    },
    get,
    async list() {
      const rows = await db.selectFrom("app_catalog").selectAll().orderBy(sql`app_key collate "C"`).execute();
      return rows.map(entryFromRow);
    },
  };
}

function entryFromRow(row: Database["app_catalog"]): AppCatalogEntry {
  return { appKey: row.app_key, displayName: row.display_name, createdAt: row.created_at };
}
