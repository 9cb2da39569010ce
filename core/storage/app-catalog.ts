/**
 * The app catalog (spec 2.9): the AppKeys tokens can be scoped to (through `aud`).
 *
 * @module
 */

/** An app catalog entry. */
export interface AppCatalogEntry {
  /** The AppKey, usable as a token's `aud`. */
  readonly appKey: string;
  /** The name people see. */
  readonly displayName: string | null;
  /** When it was created. */
  readonly createdAt: Date;
}

/** Input of {@link AppCatalogStore.register}. */
export interface RegisterAppInput {
  /** Non-empty (ValidationError). */
  readonly appKey: string;
  /** The name people see. */
  readonly displayName?: string | null;
}

/** Storage of the app catalog. */
export interface AppCatalogStore {
  /** Registers an AppKey. ConflictError reason: `app_key_taken`. */
  register(input: RegisterAppInput): Promise<AppCatalogEntry>;
  /** Registers an AppKey unless present; answers the stored entry either way (never changes it). */
  ensure(input: RegisterAppInput): Promise<AppCatalogEntry>;
  /** The entry with this key, or null. */
  get(appKey: string): Promise<AppCatalogEntry | null>;
  /** Every entry, by AppKey. */
  list(): Promise<AppCatalogEntry[]>;
}
