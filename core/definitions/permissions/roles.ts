/**
 * The `svc:` permissions of the admin API: roles, their grants, role assignments and policies.
 *
 * @module
 */
import type { PermissionDefinition } from "../permission-definition.ts";

/** Reading every role, grant, role assignment and policy of the realm. */
export const ROLES_READ_GLOBAL = "svc:global:roles-read";
/** Creating, changing and deleting roles, grants, role assignments and policies of the realm. */
export const ROLES_MANAGE_GLOBAL = "svc:global:roles-manage";
/** Reading the caller's organization's roles and the assignments and policies within it. */
export const ROLES_READ_ORG = "svc:org:roles-read";
/** Managing the caller's organization's roles and the assignments and policies within it. */
export const ROLES_MANAGE_ORG = "svc:org:roles-manage";

/** The permissions of this area, in catalog order. */
export const PERMISSIONS: readonly PermissionDefinition[] = [
  {
    id: ROLES_READ_GLOBAL,
    description: "Read every role, grant, role assignment and policy of the realm.",
  },
  {
    id: ROLES_MANAGE_GLOBAL,
    description: "Create, change and delete roles, grants, role assignments and policies of the realm.",
  },
  {
    id: ROLES_READ_ORG,
    description: "Read the roles of the caller's organization and the assignments and policies in it.",
  },
  {
    id: ROLES_MANAGE_ORG,
    description: "Manage the roles of the caller's organization and the assignments and policies in it.",
  },
];
