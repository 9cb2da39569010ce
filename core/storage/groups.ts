/**
 * Groups at realm level (`orgId` null) or organization level, and their members.
 * Unknown-id and conflict conventions: see `realms.ts`.
 *
 * @module
 */

/** A group. */
export interface Group {
  /** The id. */
  readonly id: string;
  /** The realm it belongs to. */
  readonly realmId: string;
  /** Null for a realm-level group. */
  readonly orgId: string | null;
  /** Unique per (realm, organization or realm level). */
  readonly key: string;
  /** The name people see. */
  readonly displayName: string;
  /** When it was created. */
  readonly createdAt: Date;
}

/** Input of {@link GroupStore.create}. */
export interface CreateGroupInput {
  /** The realm it belongs to. */
  readonly realmId: string;
  /** Absent or null: a realm-level group. */
  readonly orgId?: string | null;
  /** Unique per (realm, organization or realm level). */
  readonly key: string;
  /** The name people see. */
  readonly displayName: string;
}

/** A user's membership of a group. */
export interface GroupMember {
  /** The group it concerns. */
  readonly groupId: string;
  /** The user it concerns. */
  readonly userId: string;
  /** When it was created. */
  readonly createdAt: Date;
}

/**
 * Which levels a listing covers: `undefined` every level, `null` realm level only,
 * an organization id realm level plus that organization.
 */
export type LevelFilter = { readonly orgId?: string | null };

/** Storage of groups and group members. */
export interface GroupStore {
  /**
   * Creates a group. NotFoundError: unknown realm or organization. ValidationError:
   * organization of another realm. ConflictError reason: `group_key_taken`.
   */
  create(input: CreateGroupInput): Promise<Group>;
  /** The group with this id, or null. */
  get(id: string): Promise<Group | null>;
  /** The group with this key at realm level (orgId absent or null) or in one organization, or null. */
  getByKey(realmId: string, key: string, orgId?: string | null): Promise<Group | null>;
  /**
   * The groups of a realm, by creation time then id. `orgId` undefined: every group;
   * null: realm-level groups only; an id: exactly that organization's groups.
   */
  list(realmId: string, options?: { orgId?: string | null }): Promise<Group[]>;
  /** Changes a group's display name. NotFoundError: unknown group. */
  update(id: string, changes: { readonly displayName?: string }): Promise<Group>;
  /** Deletes a group and its memberships; false when there was none. */
  delete(id: string): Promise<boolean>;
  /**
   * Adds a user to a group. NotFoundError: unknown group or user. ValidationError: user of
   * another realm. ConflictError reason: `group_member_exists`.
   */
  addMember(groupId: string, userId: string): Promise<GroupMember>;
  /** Removes a group membership; false when there was none. */
  removeMember(groupId: string, userId: string): Promise<boolean>;
  /** The members of a group, by membership creation time then user id. */
  listMembers(groupId: string): Promise<GroupMember[]>;
  /** The groups a user belongs to (see {@link LevelFilter}), by group creation time then id. */
  listGroupsOfUser(userId: string, filter?: LevelFilter): Promise<Group[]>;
}
