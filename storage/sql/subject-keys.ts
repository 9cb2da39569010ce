/**
 * The SQL subject-key store. `getOrCreate` is `INSERT … ON CONFLICT DO NOTHING` followed,
 * when another writer won, by a read of the winner's row (in a new statement, so under
 * READ COMMITTED it sees the committed row).
 *
 * @module
 */
import type { Selectable } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { StorageError, ValidationError } from "../../core/errors.ts";
import type { RandomSource } from "../../core/random.ts";
import type { SubjectKeyRecord, SubjectKeyStore } from "../../core/storage/subject-keys.ts";
import type { Executor, SubjectKeysTable } from "../database.ts";
import { isUuid } from "../../core/ids.ts";

function toRecord(row: Selectable<SubjectKeysTable>): SubjectKeyRecord {
  return { subjectId: row.subject_id, key: new Uint8Array(row.key), createdAt: row.created_at };
}

/** A {@link SubjectKeyStore} over the svc schema. */
export function createSqlSubjectKeyStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): SubjectKeyStore {
  return {
    async getOrCreate(subjectId, keyBytes) {
      if (keyBytes.length !== 32) throw new ValidationError("A subject key is 32 bytes (AES-256).");
      // A concurrent delete between the insert and the read can hide the row; retry then.
      for (let attempt = 0; attempt < 3; attempt++) {
        const inserted = await db.insertInto("subject_keys")
          .values({ subject_id: subjectId, key: keyBytes, created_at: new Date(deps.clock.now()) })
          .onConflict((oc) => oc.column("subject_id").doNothing())
          .returningAll().executeTakeFirst();
        if (inserted) return { key: toRecord(inserted), created: true };
        const existing = await db.selectFrom("subject_keys").selectAll()
          .where("subject_id", "=", subjectId).executeTakeFirst();
        if (existing) return { key: toRecord(existing), created: false };
      }
      throw new StorageError("The subject key could not be read or created.");
    },

    async get(subjectId) {
      if (!isUuid(subjectId)) return null;
      const row = await db.selectFrom("subject_keys").selectAll().where("subject_id", "=", subjectId)
        .executeTakeFirst();
      return row ? toRecord(row) : null;
    },

    async delete(subjectId) {
      if (!isUuid(subjectId)) return false;
      const result = await db.deleteFrom("subject_keys").where("subject_id", "=", subjectId)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}
