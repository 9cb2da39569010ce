/**
 * Raw SQL for plugins' own tables (spec 2.9: plugins bring their tables, prefixed by their
 * name), bound like every store: inside `storage.transaction(…)` it runs in that transaction, so
 * a plugin's admin change and its audit entry commit together.
 *
 * @module
 */

/** Raw SQL (`$1`, `$2` … placeholders). */
export interface RawSqlStore {
  /** Runs one statement and answers its rows. */
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]>;
}
