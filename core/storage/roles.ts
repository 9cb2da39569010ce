/**
 * Roles (realm-level or organization-level), their grants, and role assignments
 * (spec 2.5, 2.10). Grants are stored as given: patterns and conditions are
 * validated by `core/authz` when a snapshot is built, not here. Unknown-id and
 * conflict conventions: see `realms.ts`.
 *
 * @module
 */

/** A grant's effect. */
export type GrantEffect = "Allow" | "Deny";

/** A grant to store (for a role or a policy). */
export interface GrantInput {
  /** A permission pattern, stored as given. Must be non-empty (ValidationError). */
  readonly pattern: string;
  /** `Allow` or `Deny` (ValidationError otherwise). */
  readonly effect: GrantEffect;
  /** Pins the grant to one organization (a UUID). */
  readonly orgId?: string | null;
  /** Restricts the grant to teams. Default none. */
  readonly teamIds?: readonly string[];
  /** An ABAC condition document, stored as JSON as given; absent or null: none. */
  readonly condition?: unknown;
}

/** A stored grant. Exactly one of `roleId` and `policyId` is set. */
export interface Grant {
  /** The id. */
  readonly id: string;
  /** The role. */
  readonly roleId: string | null;
  /** The policy, or null. */
  readonly policyId: string | null;
  /** The permission pattern, as stored. */
  readonly pattern: string;
  /** Whether the grant allows or denies. */
  readonly effect: GrantEffect;
  /** The organization it concerns, or null. */
  readonly orgId: string | null;
  /** Team ids the grant is restricted to; empty: none. */
  readonly teamIds: readonly string[];
  /** The condition document, or null. */
  readonly condition: unknown | null;
  /** When it was created. */
  readonly createdAt: Date;
}

/** A role. */
export interface Role {
  /** The id. */
  readonly id: string;
  /** The realm it belongs to. */
  readonly realmId: string;
  /** Null for a realm-level role. */
  readonly orgId: string | null;
  /** Unique per (realm, organization or realm level). */
  readonly key: string;
  /** The name people see. */
  readonly displayName: string;
  /** Starts at 1; every update adds one (the admin API's ETag). */
  readonly version: number;
  /** When it was created. */
  readonly createdAt: Date;
}

/** Conflict reason of {@link RoleStore.update} when the role is no longer at the expected version. */
export const ROLE_VERSION_CHANGED = "role_version_changed";

/** A page of a list and the size of the whole list. */
export interface ListPage<T> {
  /** The items of the page. */
  readonly items: T[];
  /** How many items the whole list has. */
  readonly total: number;
}

/** Filter and page of {@link RoleStore.listPage}. */
export interface RoleListQuery {
  /** Undefined: every role; null: realm-level roles only; an id: that organization's roles. */
  readonly orgId?: string | null;
  /** With `orgId` undefined: organization-level roles only (of every organization). */
  readonly orgLevelOnly?: boolean;
  /** Keeps roles whose key contains this text (case-insensitive). */
  readonly search?: string;
  /** How many to skip. */
  readonly offset: number;
  /** At most this many. */
  readonly limit: number;
}

/** Whose assignments {@link RoleStore.listAssignmentsPage} lists, and which page. */
export interface AssignmentListQuery {
  /** The role. */
  readonly roleId?: string;
  /** Only the assignments of this principal. */
  readonly principal?: { readonly kind: RolePrincipalKind; readonly id: string };
  /** Undefined: every assignment; an id: only those in this organization. */
  readonly orgId?: string;
  /** How many to skip. */
  readonly offset: number;
  /** At most this many. */
  readonly limit: number;
}

/** Input of {@link RoleStore.create}. */
export interface CreateRoleInput {
  /** The realm it belongs to. */
  readonly realmId: string;
  /** Absent or null: a realm-level role. */
  readonly orgId?: string | null;
  /** Unique per (realm, organization or realm level). */
  readonly key: string;
  /** The name people see. */
  readonly displayName: string;
}

/** Who a role is assigned to. */
export type RolePrincipalKind = "User" | "Group" | "ServiceAccount";

/** A role assignment. */
export interface RoleAssignment {
  /** The id. */
  readonly id: string;
  /** The role's realm. */
  readonly realmId: string;
  /** The role. */
  readonly roleId: string;
  /** Whether the role goes to a user, a group or a service account. */
  readonly principalKind: RolePrincipalKind;
  /** The user, group or service account id. */
  readonly principalId: string;
  /** The organization the assignment applies in; null: realm-wide. */
  readonly orgId: string | null;
  /** When it was created. */
  readonly createdAt: Date;
}

/** Input of {@link RoleStore.assign}. */
export interface AssignRoleInput {
  /** The role. */
  readonly roleId: string;
  /** Whether the role goes to a user, a group or a service account. */
  readonly principalKind: RolePrincipalKind;
  /** A UUID; the principal itself is not looked up. */
  readonly principalId: string;
  /**
   * The organization the assignment applies in. For an organization-level role it
   * defaults to (and must equal) the role's organization.
   */
  readonly orgId?: string | null;
}

/** Storage of roles, role grants and role assignments. */
export interface RoleStore {
  /**
   * Creates a role without grants. NotFoundError: unknown realm or organization.
   * ValidationError: organization of another realm. ConflictError reason: `role_key_taken`.
   */
  create(input: CreateRoleInput): Promise<Role>;
  /**
   * Creates a role and its grants in one transaction: when any grant fails (for
   * example ConflictError `grant_exists` for two grants with the same logical
   * identity, or ValidationError), no role and no grant is left. Inside a caller's
   * transaction it runs in that transaction.
   */
  createWithGrants(
    input: CreateRoleInput,
    grants: readonly GrantInput[],
  ): Promise<{ role: Role; grants: Grant[] }>;
  /** The role with this id, or null. */
  get(id: string): Promise<Role | null>;
  /** The role with this key at realm level (orgId absent or null) or in one organization, or null. */
  getByKey(realmId: string, key: string, orgId?: string | null): Promise<Role | null>;
  /**
   * The roles of a realm, by creation time then id. `orgId` undefined: every role;
   * null: realm-level roles only; an id: exactly that organization's roles.
   */
  list(realmId: string, options?: { orgId?: string | null }): Promise<Role[]>;
  /** One page of a realm's roles (creation time, then id) and how many match in all. */
  listPage(realmId: string, query: RoleListQuery): Promise<ListPage<Role>>;
  /**
   * Changes the display name and bumps the version, in one statement. With `expectedVersion`,
   * the statement changes the role only at that version (concurrent writers cannot both win):
   * ConflictError reason `role_version_changed` otherwise. NotFoundError: unknown role.
   */
  update(
    id: string,
    changes: { displayName?: string },
    options?: { expectedVersion?: number },
  ): Promise<Role>;
  /** Deletes a role, its grant rows and every assignment of it, atomically; false when there was none. */
  delete(id: string): Promise<boolean>;

  /** Adds a grant to a role. NotFoundError: unknown role. ConflictError reason: `grant_exists`. */
  addGrant(roleId: string, grant: GrantInput): Promise<Grant>;
  /** Removes one grant of the role; false when the role has no such grant. */
  removeGrant(roleId: string, grantId: string): Promise<boolean>;
  /** The grants of a role, by creation time then id. */
  listGrants(roleId: string): Promise<Grant[]>;
  /**
   * The grant of a role with this logical identity (pattern, effect, condition), or
   * null. Conditions compare as JSON values (key order does not matter); a null or
   * absent condition matches only a grant without one.
   */
  findGrantByLogicalIdentity(
    roleId: string,
    pattern: string,
    effect: GrantEffect,
    condition: unknown,
  ): Promise<Grant | null>;

  /**
   * Assigns a role. NotFoundError: unknown role or organization. ValidationError:
   * organization of another realm, or not the role's own organization. ConflictError
   * reason: `role_assignment_exists`.
   */
  assign(input: AssignRoleInput): Promise<RoleAssignment>;
  /** Removes an assignment by id; false when there was none. */
  unassign(assignmentId: string): Promise<boolean>;
  /** The assignment with this id, or null. */
  getAssignment(assignmentId: string): Promise<RoleAssignment | null>;
  /**
   * The assignments of a principal, by creation time then id. `orgId` undefined: all;
   * null: realm-wide ones only; an id: realm-wide ones plus those in that organization.
   */
  listAssignmentsForPrincipal(
    principalKind: RolePrincipalKind,
    principalId: string,
    options?: { orgId?: string | null },
  ): Promise<RoleAssignment[]>;
  /** The assignments of a role, by creation time then id. */
  listAssignmentsOfRole(roleId: string): Promise<RoleAssignment[]>;
  /**
   * One page of the assignments of a role or of a principal (creation time, then id) in a
   * realm, and how many match in all.
   */
  listAssignmentsPage(realmId: string, query: AssignmentListQuery): Promise<ListPage<RoleAssignment>>;
}
