/**
 * Organizations, their domains and their memberships (spec 2.10). Unknown-id and
 * conflict conventions: see `realms.ts`.
 *
 * @module
 */

/** Offset/limit paging. `limit` undefined: no limit. Both must be non-negative integers (ValidationError). */
export interface PageRequest {
  /** How many items to skip. */
  readonly offset?: number;
  /** At most this many items. */
  readonly limit?: number;
}

/** Organization status. `Active` is the default; other values are stored as given. */
export type OrganizationStatus = string;

/** The domain kind that routes logins. */
export const EMAIL_DOMAIN = "EmailDomain";

/** An organization. */
export interface Organization {
  /** The id. */
  readonly id: string;
  /** The realm it belongs to. */
  readonly realmId: string;
  /** Unique per realm. */
  readonly name: string;
  /** The name people see. */
  readonly displayName: string;
  /** Lifecycle status, `Active` by default. */
  readonly status: OrganizationStatus;
  /** The id of the identity provider the organization's users sign in with by default, or null. */
  readonly defaultIdentityProviderId: string | null;
  /** When it was created. */
  readonly createdAt: Date;
  /** 1 at creation, bumped by every update that changes something. */
  readonly version: number;
}

/** Input of {@link OrganizationStore.create}. */
export interface CreateOrganizationInput {
  /** The realm it belongs to. */
  readonly realmId: string;
  /** The name. */
  readonly name: string;
  /** The name people see. */
  readonly displayName: string;
  /** Default `Active`. */
  readonly status?: OrganizationStatus;
  /** The id of the default identity provider; default none. */
  readonly defaultIdentityProviderId?: string | null;
}

/** Changes of {@link OrganizationStore.update}; absent fields are kept. */
export interface UpdateOrganizationInput {
  /** The name people see. */
  readonly displayName?: string;
  /** The new status. */
  readonly status?: OrganizationStatus;
  /** The id of the default identity provider; null clears it. */
  readonly defaultIdentityProviderId?: string | null;
}

/** Options of {@link OrganizationStore.update}. */
export interface UpdateOrganizationOptions {
  /**
   * Write only when the organization is at this version (checked and written in one statement):
   * otherwise ConflictError reason `organization_version_mismatch`.
   */
  readonly expectedVersion?: number;
}

/** A search of {@link OrganizationStore.search}: offset/limit paging and an optional filter. */
export interface OrganizationSearch extends PageRequest {
  /** Case-insensitive substring of the name or the display name. */
  readonly search?: string;
}

/** A page of organizations and the number of matches. */
export interface OrganizationPage {
  /** The organizations of the page. */
  readonly items: Organization[];
  /** How many organizations match in all. */
  readonly total: number;
}

/** A domain claimed by an organization, such as an `EmailDomain`. */
export interface OrganizationDomain {
  /** The id. */
  readonly id: string;
  /** The organization it concerns. */
  readonly orgId: string;
  /** For example `EmailDomain`. */
  readonly kind: string;
  /** Stored trimmed and lowercased. */
  readonly value: string;
  /** Whether control of the domain was proven; only verified domains route logins. */
  readonly verified: boolean;
  /** When it was created. */
  readonly createdAt: Date;
  /**
   * The token a DNS TXT record must carry to prove control of the domain, or null for rows
   * added without one. Public by design (it is published in DNS).
   */
  readonly verificationToken: string | null;
}

/** Input of {@link OrganizationStore.addDomain}. */
export interface AddOrganizationDomainInput {
  /** The organization it concerns. */
  readonly orgId: string;
  /** For example `EmailDomain`. */
  readonly kind: string;
  /** Trimmed and lowercased before storing. */
  readonly value: string;
  /** Default false. */
  readonly verified?: boolean;
  /** The DNS TXT proof token; default none. */
  readonly verificationToken?: string | null;
}

/** A verified domain with its organization's realm, as login routing needs it. */
export interface VerifiedDomainMatch extends OrganizationDomain {
  /** The realm it belongs to. */
  readonly realmId: string;
}

/** A user's membership of an organization. */
export interface OrgMembership {
  /** The organization it concerns. */
  readonly orgId: string;
  /** The user it concerns. */
  readonly userId: string;
  /** When it was created. */
  readonly createdAt: Date;
}

/** Storage of organizations, organization domains and org memberships. */
export interface OrganizationStore {
  /** Creates an organization. NotFoundError: unknown realm. ConflictError reason: `organization_name_taken`. */
  create(input: CreateOrganizationInput): Promise<Organization>;
  /** The organization with this id, or null. */
  get(id: string): Promise<Organization | null>;
  /** The organization of this realm with this name, or null. */
  getByName(realmId: string, name: string): Promise<Organization | null>;
  /** The organizations of a realm, by creation time then id. */
  listByRealm(realmId: string): Promise<Organization[]>;
  /**
   * One page of a realm's organizations (by creation time then id) whose name or display name
   * contains `search` (case-insensitive; `%` and `_` match themselves), and how many match.
   */
  search(realmId: string, query?: OrganizationSearch): Promise<OrganizationPage>;
  /**
   * Changes display name, status or default identity provider and bumps the version (no change:
   * nothing is written). NotFoundError: unknown organization. ConflictError reason:
   * `organization_version_mismatch` (see {@link UpdateOrganizationOptions}).
   */
  update(
    id: string,
    changes: UpdateOrganizationInput,
    options?: UpdateOrganizationOptions,
  ): Promise<Organization>;
  /**
   * Deletes an organization and everything scoped to it, in one transaction: its domains,
   * memberships, teams (and their members), organization-level groups (and members),
   * organization-level roles (their grants and assignments), assignments and policies scoped to
   * it, grants of realm-level roles and policies narrowed to it, and webhook endpoints scoped
   * to it. Users stay. False when there was none.
   */
  delete(id: string): Promise<boolean>;

  /**
   * Claims a domain for an organization (unverified unless told). NotFoundError: unknown
   * organization. ConflictError reason: `organization_domain_exists` (same org, kind, value).
   */
  addDomain(input: AddOrganizationDomainInput): Promise<OrganizationDomain>;
  /** The domain row with this id, or null. */
  getDomain(domainId: string): Promise<OrganizationDomain | null>;
  /** Sets the Verified flag of a domain row. NotFoundError: unknown domain id. */
  setDomainVerified(domainId: string, verified: boolean): Promise<OrganizationDomain>;
  /** Removes a domain row; false when there was none. */
  removeDomain(domainId: string): Promise<boolean>;
  /** The domains of an organization, by kind, value, then id. */
  listDomains(orgId: string): Promise<OrganizationDomain[]>;
  /**
   * The verified domain row of this kind and value (value compared trimmed and
   * lowercased), optionally within one realm; unverified rows are never returned.
   * When several organizations verified the same domain, the earliest row (creation
   * time, then id) wins. Only verified `EmailDomain` rows route logins.
   */
  findVerifiedDomain(
    kind: string,
    value: string,
    options?: { realmId?: string },
  ): Promise<VerifiedDomainMatch | null>;

  /**
   * Adds a user to an organization. NotFoundError: unknown organization or user.
   * ValidationError: user and organization in different realms. ConflictError reason:
   * `org_membership_exists`.
   *
   * Additions to one organization are serialized (a lock on the organization row until the
   * transaction ends), and a new membership's creation time is strictly later than every
   * existing one of the organization (the clock's time, or one microsecond after the latest):
   * a new member always sorts after every member that was visible before, so offset pages of
   * {@link listMembers} never skip or repeat an existing member while the membership grows.
   */
  addMember(orgId: string, userId: string): Promise<OrgMembership>;
  /** Removes a membership; false when there was none. */
  removeMember(orgId: string, userId: string): Promise<boolean>;
  /** Whether the user is a member of the organization. */
  isMember(orgId: string, userId: string): Promise<boolean>;
  /** The organizations a user belongs to, by membership creation time then organization id. */
  listOrgsOfUser(userId: string): Promise<Organization[]>;
  /**
   * Every organization a subject (user or service account) may hold grants pinned to, in one
   * query: its memberships, its groups' organizations, and the organizations of the role
   * assignments and policies reaching it (its own and its groups'). Sorted, lower case.
   */
  listOrgContextsOfSubject(subjectId: string): Promise<string[]>;
  /**
   * One page of an organization's members in stable order: membership creation time,
   * then user id. Pages concatenated equal the whole list.
   */
  listMembers(orgId: string, page?: PageRequest): Promise<OrgMembership[]>;
  /** How many members an organization has. */
  countMembers(orgId: string): Promise<number>;
}
