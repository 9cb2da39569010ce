/**
 * The one way a store runs several statements atomically.
 *
 * @module
 */
import type { Kysely, Transaction } from "kysely";
import type { Database, Executor } from "../database.ts";

/**
 * Runs `fn` in a transaction. When `db` already is a transaction, `fn` runs in it (the
 * caller's transaction gives the atomicity and a failure aborts it).
 */
export async function atomically<T>(
  db: Executor,
  fn: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  if (db.isTransaction) return await fn(db as Transaction<Database>);
  return await (db as Kysely<Database>).transaction().execute(fn);
}
