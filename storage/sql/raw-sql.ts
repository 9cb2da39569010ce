/**
 * The SQL {@link RawSqlStore}: one compiled raw statement on the store's executor.
 *
 * @module
 */
import { CompiledQuery } from "kysely";
import type { RawSqlStore } from "../../core/storage/raw-sql.ts";
import type { Executor } from "../database.ts";

/** A {@link RawSqlStore} over an executor (the database or a transaction). */
export function createSqlRawStore(db: Executor): RawSqlStore {
  return {
    async query<R>(text: string, params: readonly unknown[] = []): Promise<R[]> {
      const result = await db.executeQuery<R>(CompiledQuery.raw(text, [...params]));
      return [...result.rows];
    },
  };
}
