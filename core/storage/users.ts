/**
 * Users. The email, normalized (`normalizeEmail`), is the realm-scoped natural key.
 * Unknown-id and conflict conventions: see `realms.ts`.
 *
 * @module
 */
import { normalizeEmail as normalizeEmailAddress } from "../accounts/email.ts";
import type { PageRequest } from "./organizations.ts";

/** User status values (spec 3). */
export type UserStatus = "Active" | "Suspended";

/** A user. */
export interface User {
  /** The id. */
  readonly id: string;
  /** The realm it belongs to. */
  readonly realmId: string;
  /** Trimmed and lowercased; unique per realm. */
  readonly email: string;
  /** Whether the email address was verified. */
  readonly emailVerified: boolean;
  /** The name people see. */
  readonly displayName: string | null;
  /** `Active`, or `Suspended` (cannot sign in). */
  readonly status: UserStatus;
  /** The user's ABAC attribute bag. */
  readonly attributes: Readonly<Record<string, unknown>>;
  /** Whether this is the realm's break-glass account (at most one per realm). */
  readonly isBreakGlass: boolean;
  /** When the user was erased ({@link UserStore.anonymize}); null otherwise. */
  readonly anonymizedAt: Date | null;
  /** When it was created. */
  readonly createdAt: Date;
  /** When it last changed. */
  readonly updatedAt: Date;
  /** Starts at 1; every change of the row adds one (the admin API's `ETag`). */
  readonly version: number;
}

/** Input of {@link UserStore.create}. */
export interface CreateUserInput {
  /** The realm it belongs to. */
  readonly realmId: string;
  /** Trimmed and lowercased before storing; must not be empty (ValidationError). */
  readonly email: string;
  /** The name people see. */
  readonly displayName?: string | null;
  /** Default false. */
  readonly emailVerified?: boolean;
  /** Default `Active`. */
  readonly status?: UserStatus;
  /** Default `{}`. */
  readonly attributes?: Record<string, unknown>;
  /** Default false. */
  readonly isBreakGlass?: boolean;
}

/** Changes of {@link UserStore.update}; absent fields are kept. */
export interface UpdateUserInput {
  /** Trimmed and lowercased; ConflictError `user_email_taken` when another user of the realm has it. */
  readonly email?: string;
  /** The name people see. */
  readonly displayName?: string | null;
  /** Whether the email address was verified. */
  readonly emailVerified?: boolean;
  /** The new status. */
  readonly status?: UserStatus;
  /** Replaces the whole attribute bag (see {@link UserStore.mergeAttributes} to merge). */
  readonly attributes?: Record<string, unknown>;
}

/** Options of {@link UserStore.update}. */
export interface UpdateUserOptions {
  /**
   * Applies the change only if the user's version still equals this one, checked in the same
   * statement that writes (of two writers holding one version, one wins): ConflictError
   * reason `user_version_stale` otherwise.
   */
  readonly expectedVersion?: number;
}

/** A search of the users of a realm ({@link UserStore.search}). */
export interface UserSearch {
  /**
   * Case-insensitive prefix of the email or of the display name (`%`, `_` and `\` match
   * themselves). Absent or empty: every user.
   */
  readonly q?: string;
  /** Only users with this status. */
  readonly status?: UserStatus;
  /** Only members of this organization. */
  readonly memberOf?: string;
  /** How many matches to skip. */
  readonly offset: number;
  /** At most this many. */
  readonly limit: number;
}

/** One page of a search and the number of users matching it. */
export interface UserPage {
  /** The users of the page. */
  readonly items: User[];
  /** How many users match in all. */
  readonly total: number;
}

/**
 * The natural-key form of an email (NFKC, trimmed, lowercased, IDNA ASCII domain without a
 * trailing dot): `core/accounts/email.ts`, the one normalization every entry point uses.
 */
export const normalizeEmail: (email: string) => string = normalizeEmailAddress;

/** Storage of users. */
export interface UserStore {
  /**
   * Creates a user. NotFoundError: unknown realm. ValidationError: empty email.
   * ConflictError reason: `user_email_taken`.
   */
  create(input: CreateUserInput): Promise<User>;
  /** The user with this id, or null. */
  get(id: string): Promise<User | null>;
  /** The user of this realm with this email (compared trimmed and lowercased), or null. */
  findByEmail(realmId: string, email: string): Promise<User | null>;
  /** The users of this realm with any of these emails (compared trimmed and lowercased), in one query. */
  findManyByEmail(realmId: string, emails: readonly string[]): Promise<User[]>;
  /**
   * Creates several users of one realm in one statement (bulk imports), in input order. Same
   * checks as {@link UserStore.create}; ConflictError `user_email_taken` fails the whole statement.
   */
  createMany(inputs: readonly CreateUserInput[]): Promise<User[]>;
  /**
   * Changes a user, bumps `updatedAt` and `version` in one statement (see
   * {@link UpdateUserOptions.expectedVersion}). NotFoundError: unknown user.
   */
  update(id: string, changes: UpdateUserInput, options?: UpdateUserOptions): Promise<User>;
  /**
   * Merges keys into the attribute bag (given keys overwrite), atomically, bumping `version`.
   * NotFoundError: unknown user.
   */
  mergeAttributes(id: string, attributes: Record<string, unknown>): Promise<User>;
  /** The users of a realm, by creation time then id. */
  listByRealm(realmId: string, page?: PageRequest): Promise<User[]>;
  /**
   * One page of the realm's users matching `search`, by creation time then id, and how many
   * match. A deep offset costs an index-only skip to the page's first key, then a seek.
   */
  search(realmId: string, search: UserSearch): Promise<UserPage>;
  /**
   * The user's credential stamp (issue 19 item 6): an opaque value that changes on every
   * password change, carried in reset links and compared on use. Null for an unknown user.
   */
  credentialStamp(id: string): Promise<string | null>;
  /**
   * Replaces the credential stamp with a fresh random one, in one statement; with `expected`,
   * only if the stamp still equals it (compare-and-swap: of two links minted under one stamp,
   * one wins). Returns whether it applied.
   */
  rotateCredentialStamp(id: string, expected?: string): Promise<boolean>;
  /**
   * Erasure: replaces the email with `<id>@erased.invalid`, clears the display name, the
   * attribute bag and the verified flag, suspends the user and sets `anonymizedAt`. The row
   * (and its id, which ledgers refer to) stays. NotFoundError: unknown user.
   */
  anonymize(id: string): Promise<User>;
}
