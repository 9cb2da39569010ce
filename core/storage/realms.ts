/**
 * Realms: the top-level tenants of svc (spec 2.10: display name, default flag).
 *
 * Conventions shared by every directory store (realms, organizations, users, teams,
 * groups, roles, policies, permission catalog, app catalog):
 * - Reads of an unknown id (including a string that is not a UUID) return `null`
 *   or an empty list; they never throw.
 * - Mutations that target an unknown id, or creations that reference an unknown
 *   parent (realm, organization, user, role…), throw `NotFoundError`.
 * - Removals answer `true` when a row went away and `false` when there was none.
 * - A duplicate key throws `ConflictError` (code `conflict`) whose `details.reason`
 *   is a stable snake_case code named on each method.
 * - Lists come in a stable order, named on each method.
 *
 * @module
 */

/**
 * A realm's branding of the hosted pages and mail; a null field falls back to the server's
 * `SVC_BRAND_*` setting.
 */
export interface RealmBranding {
  /** The product name shown on the pages and in mail. */
  readonly productName: string | null;
  /** `#rrggbb`. */
  readonly color: string | null;
  /** An https URL. */
  readonly logoUrl: string | null;
}

/** A realm. */
export interface Realm {
  /** The id. */
  readonly id: string;
  /** Unique machine name. */
  readonly name: string;
  /** The name people see. */
  readonly displayName: string;
  /** At most one realm is the default. */
  readonly isDefault: boolean;
  /** Whether people may create their own account on the hosted sign-up page (default false). */
  readonly selfSignUp: boolean;
  /** The realm's own branding of the hosted pages and mail (null fields: the server's). */
  readonly branding: RealmBranding;
  /** When it was created. */
  readonly createdAt: Date;
}

/** A realm without its own branding. */
export const NO_BRANDING: RealmBranding = Object.freeze({ productName: null, color: null, logoUrl: null });

/** Input of {@link RealmStore.create}. */
export interface CreateRealmInput {
  /** The name. */
  readonly name: string;
  /** The name people see. */
  readonly displayName: string;
  /** Default false. */
  readonly isDefault?: boolean;
}

/** Changes of {@link RealmStore.update}; absent fields are kept. */
export interface UpdateRealmInput {
  /** The name people see. */
  readonly displayName?: string;
  /**
   * `true` makes this realm the default, clearing the flag of the previous default in the same
   * transaction (exactly one default at every moment). `false` on the default realm is refused
   * (ConflictError `default_realm_required`); on another realm it changes nothing.
   */
  readonly isDefault?: boolean;
  /** Opens or closes self sign-up. */
  readonly selfSignUp?: boolean;
  /** Replaces the whole branding. */
  readonly branding?: RealmBranding;
}

/** Storage of realms. */
export interface RealmStore {
  /**
   * Creates a realm. ConflictError reasons: `realm_name_taken`, `default_realm_exists`
   * (a second realm flagged default).
   */
  create(input: CreateRealmInput): Promise<Realm>;
  /** The realm with this id, or null. */
  get(id: string): Promise<Realm | null>;
  /** The realm with this name, or null. */
  getByName(name: string): Promise<Realm | null>;
  /** The default realm, or null when none is flagged default. */
  getDefault(): Promise<Realm | null>;
  /** Every realm, by creation time then id. */
  list(): Promise<Realm[]>;
  /**
   * Changes a realm's display name, self sign-up or branding, or makes it the default (see
   * {@link UpdateRealmInput}), in
   * one transaction. NotFoundError: unknown realm. ConflictError reason: `default_realm_required`.
   */
  update(id: string, changes: UpdateRealmInput): Promise<Realm>;
}
