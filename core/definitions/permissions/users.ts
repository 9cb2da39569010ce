/**
 * The `svc:` permissions of the admin API: users.
 *
 * @module
 */
import type { PermissionDefinition } from "../permission-definition.ts";

/** Reading any user of the realm, their sessions and organizations. */
export const USERS_READ_GLOBAL = "svc:global:users-read";
/**
 * Creating and changing users of the realm, suspending and reactivating them, ending their
 * sessions and resetting their factors (implies reading).
 */
export const USERS_MANAGE_GLOBAL = "svc:global:users-manage";
/** Reading the users who are members of the caller's organization. */
export const USERS_READ_ORG = "svc:org:users-read";
/**
 * Managing the users who belong to the caller's organization only (implies reading): creating
 * them into it, changing, suspending, reactivating, ending sessions, resetting factors.
 */
export const USERS_MANAGE_ORG = "svc:org:users-manage";

/** The permissions of this area, in catalog order. */
export const PERMISSIONS: readonly PermissionDefinition[] = [
  { id: USERS_READ_GLOBAL, description: "Read any user of the realm, their sessions and organizations." },
  {
    id: USERS_MANAGE_GLOBAL,
    description:
      "Create and change users of the realm, suspend and reactivate them, end their sessions, reset their factors.",
  },
  { id: USERS_READ_ORG, description: "Read the users who are members of the caller's organization." },
  {
    id: USERS_MANAGE_ORG,
    description:
      "Create, change, suspend and reactivate users belonging only to the caller's organization, " +
      "end their sessions, reset their factors.",
  },
];
