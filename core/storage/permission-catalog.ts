/**
 * The permission catalog (spec 2.9): every permission id the deployment declares.
 * Entries are tombstoned (`retiredAt` set), never deleted. Ids are stored as given:
 * format validation happens before (definition sync fails boot on a bad id).
 *
 * @module
 */

/** A catalog entry. */
export interface PermissionCatalogEntry {
  /** The permission id, as declared. */
  readonly permissionId: string;
  /** A description for people. */
  readonly description: string | null;
  /** When a sync or upsert last declared it. */
  readonly lastSyncedAt: Date;
  /** Set when no longer declared (tombstone); null while active. */
  readonly retiredAt: Date | null;
}

/** A declared permission. */
export interface DeclaredPermission {
  /** The permission id (validated before). */
  readonly permissionId: string;
  /** Absent: keep the stored description. */
  readonly description?: string | null;
}

/** What a sync or upsert changed, each list sorted. */
export interface CatalogSyncResult {
  /** Ids inserted. */
  readonly added: string[];
  /** Ids re-declared after being retired (un-retired). */
  readonly restored: string[];
  /** Ids tombstoned because they were no longer declared (sync only). */
  readonly retired: string[];
  /** Ids already active and declared again (their lastSyncedAt moved). */
  readonly unchanged: string[];
}

/** Storage of the permission catalog. */
export interface PermissionCatalogStore {
  /**
   * Makes the catalog match a full declaration, in one transaction: inserts new ids,
   * un-retires re-declared ones, tombstones active ids no longer declared. Every
   * declared id gets `lastSyncedAt` = now. Duplicates in the input count once (the
   * last description wins).
   */
  sync(declared: readonly (DeclaredPermission | string)[]): Promise<CatalogSyncResult>;
  /** Like {@link sync} for a partial declaration: inserts and un-retires, never retires. */
  upsert(declared: readonly (DeclaredPermission | string)[]): Promise<CatalogSyncResult>;
  /** Tombstones the given ids; unknown and already retired ids are ignored. Answers the ids retired now, sorted. */
  retire(permissionIds: readonly string[]): Promise<string[]>;
  /** The entry (active or retired) with this id, or null. */
  get(permissionId: string): Promise<PermissionCatalogEntry | null>;
  /** Active entries, by permission id. */
  listActive(): Promise<PermissionCatalogEntry[]>;
  /** Every entry, retired ones included, by permission id. */
  listAll(): Promise<PermissionCatalogEntry[]>;
}
