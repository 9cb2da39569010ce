/**
 * The read side of authorization: everything a per-(user, organization) subject snapshot
 * is built from, in one load. Roles, groups and policies are flattened here into grant
 * rows that name their origin; validation and compilation happen in `core/authz`.
 *
 * @module
 */

/** One grant row as stored, with the attribution of how it reaches the user. */
export interface SubjectGrantRow {
  /** The stored pattern text (not yet validated). */
  readonly pattern: string;
  /** The stored effect text (not yet validated). */
  readonly effect: string;
  /**
   * The organization the grant is pinned to: the grant's own, else its assignment's, else
   * its role's or policy's organization; null for realm-wide grants.
   */
  readonly orgId: string | null;
  /** Team restriction, possibly empty. */
  readonly teamIds: readonly string[];
  /** The stored condition document, or null. */
  readonly condition: unknown | null;
  /** Attribution: `role:<key>`, `policy:<name>`, with `@group:<key>` when through a group. */
  readonly source: string;
}

/** The stored facts about one subject (a user or a service account) for one organization context. */
export interface SubjectRows {
  /** The user it concerns. */
  readonly userId: string;
  /** The realm it belongs to. */
  readonly realmId: string;
  /** `Active` or `Suspended`. */
  readonly status: string;
  /** The user's ABAC attributes. */
  readonly attributes: Readonly<Record<string, unknown>>;
  /** Whether the user is a member of the requested organization (false when none was asked). */
  readonly isOrgMember: boolean;
  /** The user's teams in the requested organization (none without an organization). */
  readonly teamIds: readonly string[];
  /** Every grant that reaches the user through roles, groups and policies, in a stable order. */
  readonly grants: readonly SubjectGrantRow[];
  /**
   * With a realm-only load (no organization asked): every organization the subject may hold
   * grants pinned to (memberships; its and its groups' role assignments and policies; its
   * groups' organizations), sorted; absent when not loaded.
   */
  readonly orgContexts?: readonly string[];
}

/** Loads the rows of subject snapshots. */
export interface SubjectGrantSource {
  /**
   * Everything a snapshot of `userId` in organization `orgId` (null: realm only) is built from,
   * read in one consistent transaction; null when neither a user nor a service account has this
   * id. A service account is a subject too: its grants are those of its own role assignments.
   */
  loadSubject(userId: string, orgId: string | null): Promise<SubjectRows | null>;
}
