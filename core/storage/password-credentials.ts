/**
 * Password credentials (spec 2.3): each row carries an algorithm tag (`argon2id`,
 * `pbkdf2-sha256`, `bcrypt`, `framework-identity-v3`) and the hash in that algorithm's
 * native text format. Rows are unique per (user, algorithm).
 *
 * @module
 */

/** A stored password credential. */
export interface PasswordCredentialRecord {
  /** The id. */
  readonly id: string;
  /** The user it concerns. */
  readonly userId: string;
  /** The algorithm tag. */
  readonly algorithm: string;
  /** The hash, in the algorithm's native format (PHC string for argon2id and pbkdf2). */
  readonly hash: string;
  /** When it was created. */
  readonly createdAt: Date;
  /** When it last changed. */
  readonly updatedAt: Date;
}

/** A hash with its algorithm tag. */
export interface PasswordHash {
  /** The algorithm tag, for example `argon2id`. */
  readonly algorithm: string;
  /** The hash, in the algorithm's native format. */
  readonly hash: string;
}

/**
 * Password-credential storage. Every write that changes the password (`replace`, an `upsert`
 * that inserts or changes a hash, `deleteAllForUser` that deleted something) rotates the user's
 * credential stamp in the same transaction; a rehash (same password) does not.
 */
export interface PasswordCredentialStore {
  /** The user's credential (the most recently updated when several exist), or null. */
  get(userId: string): Promise<PasswordCredentialRecord | null>;
  /** Every credential row of the user, newest first. */
  list(userId: string): Promise<PasswordCredentialRecord[]>;
  /** Every credential row of these users, in one query (bulk imports). */
  listForUsers(userIds: readonly string[]): Promise<PasswordCredentialRecord[]>;
  /**
   * Inserts credentials of users who have none under that tag, in one statement, and rotates
   * their credential stamps (bulk imports). With `freshUsers`, the users were created in this
   * same transaction with fresh random stamps (`UserStore.createMany`): no reset link can have
   * been minted under them, so the rotation is skipped. A row that exists fails the statement.
   */
  insertMany(
    rows: readonly { readonly userId: string; readonly value: PasswordHash }[],
    options?: { readonly freshUsers?: boolean },
  ): Promise<void>;
  /**
   * Inserts or updates the row for (user, algorithm), leaving rows under other tags alone.
   * For idempotent imports. `created` tells whether a row was inserted.
   */
  upsert(
    userId: string,
    value: PasswordHash,
  ): Promise<{ credential: PasswordCredentialRecord; created: boolean }>;
  /**
   * Sets the user's password: afterwards exactly this one credential exists (spec 5.5),
   * whatever the user had before, in one statement. Creates one for a password-less user.
   */
  replace(userId: string, value: PasswordHash): Promise<PasswordCredentialRecord>;
  /**
   * Rehash-on-login: replaces the credential only if the stored one still equals
   * `expected` (compare-and-swap), so a concurrent password change is never overwritten.
   * Returns whether it applied.
   */
  rehash(userId: string, expected: PasswordHash, next: PasswordHash): Promise<boolean>;
  /** Deletes every password credential of the user; returns how many. */
  deleteAllForUser(userId: string): Promise<number>;
}
