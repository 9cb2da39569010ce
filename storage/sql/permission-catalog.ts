/**
 * The SQL permission catalog. Entries are tombstoned (`retired_at`), never deleted.
 * Syncs serialize on a transaction-scoped advisory lock so concurrent boots agree.
 *
 * @module
 */
import { sql } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { ValidationError } from "../../core/errors.ts";
import type { RandomSource } from "../../core/random.ts";
import type {
  CatalogSyncResult,
  DeclaredPermission,
  PermissionCatalogEntry,
  PermissionCatalogStore,
} from "../../core/storage/permission-catalog.ts";
import type { Database, Executor } from "../database.ts";
import { atomically, now } from "./directory-support.ts";
import { LockClass, lockForTransaction } from "./advisory-locks.ts";

/** A {@link PermissionCatalogStore} over the svc schema. */
export function createSqlPermissionCatalogStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): PermissionCatalogStore {
  async function apply(
    declaredInput: readonly (DeclaredPermission | string)[],
    retireUndeclared: boolean,
  ): Promise<CatalogSyncResult> {
    const declared = new Map<string, string | null | undefined>();
    for (const item of declaredInput) {
      const entry = typeof item === "string" ? { permissionId: item } : item;
      if (typeof entry.permissionId !== "string" || entry.permissionId.length === 0) {
        throw new ValidationError("A declared permission needs an id.", { field: "permissionId" });
      }
      const previous = declared.get(entry.permissionId);
      declared.set(entry.permissionId, entry.description !== undefined ? entry.description : previous);
    }
    const at = now(deps.clock);
    return await atomically(db, async (trx) => {
      await lockForTransaction(trx, LockClass.permissionCatalog, "");
      const ids = [...declared.keys()];
      let existingQuery = trx.selectFrom("permission_catalog").selectAll();
      if (!retireUndeclared) {
        if (ids.length === 0) return { added: [], restored: [], retired: [], unchanged: [] };
        existingQuery = existingQuery.where("permission_id", "in", ids);
      }
      const existing = new Map((await existingQuery.execute()).map((row) => [row.permission_id, row]));

      const added: string[] = [];
      const restored: string[] = [];
      const unchanged: string[] = [];
      for (const id of ids) {
        const row = existing.get(id);
        if (row === undefined) added.push(id);
        else if (row.retired_at !== null) restored.push(id);
        else unchanged.push(id);
      }
      if (added.length > 0) {
        await trx.insertInto("permission_catalog")
          .values(added.map((id) => ({
            permission_id: id,
            description: declared.get(id) ?? null,
            last_synced_at: at,
            retired_at: null,
          })))
          .onConflict((oc) => oc.column("permission_id").doNothing())
          .execute();
      }
      const seen = [...restored, ...unchanged];
      if (seen.length > 0) {
        await trx.updateTable("permission_catalog").set({ last_synced_at: at, retired_at: null })
          .where("permission_id", "in", seen).execute();
        for (const id of seen) {
          const description = declared.get(id);
          if (description !== undefined && description !== existing.get(id)?.description) {
            await trx.updateTable("permission_catalog").set({ description })
              .where("permission_id", "=", id).execute();
          }
        }
      }
      const retired: string[] = [];
      if (retireUndeclared) {
        for (const [id, row] of existing) if (row.retired_at === null && !declared.has(id)) retired.push(id);
        if (retired.length > 0) {
          await trx.updateTable("permission_catalog").set({ retired_at: at })
            .where("permission_id", "in", retired).execute();
        }
      }
      return {
        added: added.sort(),
        restored: restored.sort(),
        retired: retired.sort(),
        unchanged: unchanged.sort(),
      };
    });
  }

  return {
    sync: (declared) => apply(declared, true),
    upsert: (declared) => apply(declared, false),
    async retire(permissionIds) {
      const ids = [...new Set(permissionIds)];
      if (ids.length === 0) return [];
      const rows = await db.updateTable("permission_catalog").set({ retired_at: now(deps.clock) })
        .where("permission_id", "in", ids)
        .where("retired_at", "is", null)
        .returning("permission_id")
        .execute();
      return rows.map((r) => r.permission_id).sort();
    },
    async get(permissionId) {
      const row = await db.selectFrom("permission_catalog").selectAll()
        .where("permission_id", "=", permissionId).executeTakeFirst();
      return row === undefined ? null : entryFromRow(row);
    },
    async listActive() {
      const rows = await db.selectFrom("permission_catalog").selectAll()
        .where("retired_at", "is", null).orderBy(sql`permission_id collate "C"`).execute();
      return rows.map(entryFromRow);
    },
    async listAll() {
      const rows = await db.selectFrom("permission_catalog").selectAll().orderBy(
        sql`permission_id collate "C"`,
      ).execute();
      return rows.map(entryFromRow);
    },
  };
}

function entryFromRow(row: Database["permission_catalog"]): PermissionCatalogEntry {
  return {
    permissionId: row.permission_id,
    description: row.description,
    lastSyncedAt: row.last_synced_at,
    retiredAt: row.retired_at,
  };
}
