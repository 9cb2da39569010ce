/**
 * The `svc:` permissions of the admin API: directory (realms, organizations with their domains
 * and members, teams, groups). Manage implies read: read routes accept either.
 *
 * Realms sit above every realm's own administration: the realm permissions count only for
 * callers of the DEFAULT realm (like a "master realm"); held in any other realm they allow nothing.
 *
 * @module
 */
import type { PermissionDefinition } from "../permission-definition.ts";

/** Listing and reading realms (callers of the default realm only). */
export const REALMS_READ_GLOBAL = "svc:global:realms-read";
/** Creating realms, renaming them, switching the default realm (callers of the default realm only). */
export const REALMS_MANAGE_GLOBAL = "svc:global:realms-manage";
/** Listing, searching and reading every organization of the realm, their domains. */
export const ORGS_READ_GLOBAL = "svc:global:orgs-read";
/** Creating, changing and deleting organizations of the realm; their domains (and the verification override). */
export const ORGS_MANAGE_GLOBAL = "svc:global:orgs-manage";
/** Reading the caller's own organization and its domains. */
export const ORGS_READ_ORG = "svc:org:orgs-read";
/** Changing the caller's own organization; adding, removing and DNS-verifying its domains. */
export const ORGS_MANAGE_ORG = "svc:org:orgs-manage";
/** Listing the members of any organization of the realm. */
export const MEMBERS_READ_GLOBAL = "svc:global:members-read";
/** Adding users of the realm to organizations and removing them. */
export const MEMBERS_MANAGE_GLOBAL = "svc:global:members-manage";
/** Listing the members of the caller's own organization. */
export const MEMBERS_READ_ORG = "svc:org:members-read";
/** Removing members from the caller's own organization (they join by invitation). */
export const MEMBERS_MANAGE_ORG = "svc:org:members-manage";
/** Reading every team of the realm and its members. */
export const TEAMS_READ_GLOBAL = "svc:global:teams-read";
/** Creating, changing and deleting teams of any organization; their members. */
export const TEAMS_MANAGE_GLOBAL = "svc:global:teams-manage";
/** Reading the teams of the caller's own organization. */
export const TEAMS_READ_ORG = "svc:org:teams-read";
/** Managing the teams of the caller's own organization and their members. */
export const TEAMS_MANAGE_ORG = "svc:org:teams-manage";
/** Reading every group of the realm (realm-level and organization-level) and its members. */
export const GROUPS_READ_GLOBAL = "svc:global:groups-read";
/** Creating, changing and deleting any group of the realm; its members. */
export const GROUPS_MANAGE_GLOBAL = "svc:global:groups-manage";
/** Reading the groups of the caller's own organization. */
export const GROUPS_READ_ORG = "svc:org:groups-read";
/** Managing the groups of the caller's own organization and their members. */
export const GROUPS_MANAGE_ORG = "svc:org:groups-manage";

/** The permissions of this area, in catalog order. */
export const PERMISSIONS: readonly PermissionDefinition[] = [
  { id: REALMS_READ_GLOBAL, description: "List and read realms (held in the default realm)." },
  {
    id: REALMS_MANAGE_GLOBAL,
    description: "Create and change realms, switch the default realm (held in the default realm).",
  },
  {
    id: ORGS_READ_GLOBAL,
    description: "List, search and read every organization of the realm and its domains.",
  },
  {
    id: ORGS_MANAGE_GLOBAL,
    description: "Create, change and delete organizations of the realm; manage and verify their domains.",
  },
  { id: ORGS_READ_ORG, description: "Read the caller's organization and its domains." },
  {
    id: ORGS_MANAGE_ORG,
    description: "Change the caller's organization; add, remove and DNS-verify its domains.",
  },
  { id: MEMBERS_READ_GLOBAL, description: "List the members of every organization of the realm." },
  { id: MEMBERS_MANAGE_GLOBAL, description: "Add users to organizations of the realm and remove them." },
  { id: MEMBERS_READ_ORG, description: "List the members of the caller's organization." },
  { id: MEMBERS_MANAGE_ORG, description: "Remove members from the caller's organization." },
  { id: TEAMS_READ_GLOBAL, description: "Read every team of the realm and its members." },
  { id: TEAMS_MANAGE_GLOBAL, description: "Create, change and delete teams of the realm and their members." },
  { id: TEAMS_READ_ORG, description: "Read the teams of the caller's organization and their members." },
  { id: TEAMS_MANAGE_ORG, description: "Manage the teams of the caller's organization and their members." },
  { id: GROUPS_READ_GLOBAL, description: "Read every group of the realm and its members." },
  {
    id: GROUPS_MANAGE_GLOBAL,
    description: "Create, change and delete groups of the realm and their members.",
  },
  { id: GROUPS_READ_ORG, description: "Read the groups of the caller's organization and their members." },
  { id: GROUPS_MANAGE_ORG, description: "Manage the groups of the caller's organization and their members." },
];
