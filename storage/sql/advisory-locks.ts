/**
 * Transaction-scoped Postgres advisory locks, namespaced per schema. Advisory locks are
 * database-wide, so two svc deployments in different schemas of one database (or two test beds)
 * would otherwise wait on each other's locks: every key here is
 * `(class, hashtext(<schema> || '/' || <key>))`, where `<schema>` is the connection's current
 * schema (or the one named, while it may not exist yet). Every lock class svc takes is listed
 * here, so that no two uses share one.
 *
 * @module
 */
import { type Kysely, type RawBuilder, sql } from "kysely";

/** The lock classes (first key of Postgres's two-key form), one per use. */
export const LockClass = {
  /** svc's schema DDL and plugins' DDL at boot. */
  schema: 7_361_001,
  /** Per-actor impersonation starts. */
  impersonation: 7_361_002,
  /** The realms' first signing keys at boot. */
  signingKeys: 7_361_003,
  /** Per-user password-credential writes. */
  passwordCredentials: 7_361_101,
  /** Permission catalog syncs. */
  permissionCatalog: 7_361_102,
  /** Per-realm audit chain appends. */
  adminAudit: 7_361_201,
  /** Realm updates (switching the default realm). */
  realms: 7_361_301,
  /** Per-organization membership writes. */
  membership: 7_361_302,
} as const;

/**
 * The second key of a lock on `key`: `hashtext(<schema> || '/' || key)`, where `<schema>` is
 * `schema` when given, else `current_schema()` of the connection. Tests reading `pg_locks` compare
 * `objid` with it (as `::oid`).
 */
export function advisoryLockKey(key: string, schema?: string): RawBuilder<number> {
  const namespace = schema === undefined ? sql`current_schema()` : sql`${schema}::text`;
  return sql<number>`hashtext(${namespace} || '/' || ${key}::text)`;
}

/**
 * Takes the advisory lock `(lockClass, key)` of the connection's schema until the end of the
 * transaction `trx` runs. `schema` names the schema when it may not exist yet (its creation).
 */
export async function lockForTransaction(
  // deno-lint-ignore no-explicit-any
  trx: Kysely<any>,
  lockClass: number,
  key: string,
  schema?: string,
): Promise<void> {
  const { rows } = await sql<{ k: number | null }>`
    SELECT s.k, pg_advisory_xact_lock(${lockClass}::int4, s.k)::text AS locked
    FROM (SELECT ${advisoryLockKey(key, schema)} AS k) s`.execute(trx);
  // Without an existing schema the key is null, and pg_advisory_xact_lock(class, null) takes nothing.
  if (rows[0]?.k == null) throw new Error("advisory lock: the connection has no current schema");
}
