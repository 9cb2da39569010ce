/**
 * Teams inside an organization, and their members. Unknown-id and conflict
 * conventions: see `realms.ts`.
 *
 * @module
 */

/** A team. */
export interface Team {
  /** The id. */
  readonly id: string;
  /** The realm of the team's organization. */
  readonly realmId: string;
  /** The organization it concerns. */
  readonly orgId: string;
  /** Unique per organization. */
  readonly name: string;
  /** When it was created. */
  readonly createdAt: Date;
}

/** Input of {@link TeamStore.create}. */
export interface CreateTeamInput {
  /** The organization it concerns. */
  readonly orgId: string;
  /** The name. */
  readonly name: string;
}

/** A user's membership of a team. */
export interface TeamMember {
  /** The team it concerns. */
  readonly teamId: string;
  /** The user it concerns. */
  readonly userId: string;
  /** When it was created. */
  readonly createdAt: Date;
}

/** Storage of teams and team members. */
export interface TeamStore {
  /** Creates a team. NotFoundError: unknown organization. ConflictError reason: `team_name_taken`. */
  create(input: CreateTeamInput): Promise<Team>;
  /** The team with this id, or null. */
  get(id: string): Promise<Team | null>;
  /** The teams of an organization, by creation time then id. */
  listByOrg(orgId: string): Promise<Team[]>;
  /** Renames a team. NotFoundError: unknown team. ConflictError reason: `team_name_taken`. */
  update(id: string, changes: { readonly name?: string }): Promise<Team>;
  /** Deletes a team and its memberships; false when there was none. */
  delete(id: string): Promise<boolean>;
  /**
   * Adds a user to a team. NotFoundError: unknown team or user. ValidationError: user of
   * another realm. ConflictError reason: `team_member_exists`.
   */
  addMember(teamId: string, userId: string): Promise<TeamMember>;
  /** Removes a team membership; false when there was none. */
  removeMember(teamId: string, userId: string): Promise<boolean>;
  /** The members of a team, by membership creation time then user id. */
  listMembers(teamId: string): Promise<TeamMember[]>;
  /** The ids of the teams of `orgId` the user belongs to, sorted by id. */
  listTeamIdsOfUser(userId: string, orgId: string): Promise<string[]>;
}
