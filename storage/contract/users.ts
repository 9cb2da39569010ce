/**
 * Users. The email, trimmed and lowercased, is the realm-scoped natural key.
 * Unknown-id and conflict conventions: see `realms.ts`.
 *
 * @module
 */
import type { PageRequest } from "./organizations.ts";

/** User status values (spec 3). */
export type UserStatus = "Active" | "Suspended";

/** A user. */
export interface User {
  readonly id: string;
  readonly realmId: string;
  /** Trimmed and lowercased; unique per realm. */
  readonly email: string;
  readonly emailVerified: boolean;
  readonly displayName: string | null;
  readonly status: UserStatus;
  /** The user's ABAC attribute bag. */
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly isBreakGlass: boolean;
  readonly anonymizedAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Input of {@link UserStore.create}. */
export interface CreateUserInput {
  readonly realmId: string;
  /** Trimmed and lowercased before storing; must not be empty (ValidationError). */
  readonly email: string;
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
  readonly displayName?: string | null;
  readonly emailVerified?: boolean;
  readonly status?: UserStatus;
  /** Replaces the whole attribute bag (see {@link UserStore.mergeAttributes} to merge). */
  readonly attributes?: Record<string, unknown>;
}

/** The natural-key form of an email: trimmed and lowercased. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

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
  /** Changes a user and bumps `updatedAt`. NotFoundError: unknown user. */
  update(id: string, changes: UpdateUserInput): Promise<User>;
  /** Merges keys into the attribute bag (given keys overwrite), atomically. NotFoundError: unknown user. */
  mergeAttributes(id: string, attributes: Record<string, unknown>): Promise<User>;
  /** The users of a realm, by creation time then id. */
  listByRealm(realmId: string, page?: PageRequest): Promise<User[]>;
  /**
   * Erasure: replaces the email with `<id>@erased.invalid`, clears the display name, the
   * attribute bag and the verified flag, suspends the user and sets `anonymizedAt`. The row
   * (and its id, which ledgers refer to) stays. NotFoundError: unknown user.
   */
  anonymize(id: string): Promise<User>;
}
