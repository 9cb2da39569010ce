/**
 * The `svc:` permissions of the admin API: impersonation and break-glass.
 *
 * Impersonation is fenced by `svc:global:impersonate` (any user of the realm) and
 * `svc:org:impersonate` (members of the caller's organization), evaluated against the target
 * (spec 4.5, 7). Reading impersonation records and the consent mode takes the `-read`
 * permissions (or `impersonate`, which implies reading); setting the consent mode takes
 * `-manage`. Break-glass is realm-wide only: there is no organization permission.
 *
 * @module
 */
import type { PermissionDefinition } from "../permission-definition.ts";

/** Impersonating any user of the realm (with a reason); ending and reading any impersonation. */
export const IMPERSONATE_GLOBAL = "svc:global:impersonate";
/** Impersonating members of the caller's organization; ending and reading their impersonations. */
export const IMPERSONATE_ORG = "svc:org:impersonate";
/** Reading every impersonation of the realm and the consent modes. */
export const IMPERSONATION_READ_GLOBAL = "svc:global:impersonation-read";
/** Reading the impersonations of members of the caller's organization and its consent mode. */
export const IMPERSONATION_READ_ORG = "svc:org:impersonation-read";
/** Setting the realm's (and any organization's) impersonation consent mode. */
export const IMPERSONATION_MANAGE_GLOBAL = "svc:global:impersonation-manage";
/** Setting the impersonation consent mode of the caller's organization. */
export const IMPERSONATION_MANAGE_ORG = "svc:org:impersonation-manage";
/** Reading the realm's break-glass status (last drill, last use, rotation required). */
export const BREAK_GLASS_READ_GLOBAL = "svc:global:break-glass-read";
/** Recording a break-glass drill and rotating the break-glass password. */
export const BREAK_GLASS_MANAGE_GLOBAL = "svc:global:break-glass-manage";

/** The permissions of this area, in catalog order. */
export const PERMISSIONS: readonly PermissionDefinition[] = [
  {
    id: IMPERSONATE_GLOBAL,
    description: "Impersonate any user of the realm (with a reason), read and end any impersonation.",
  },
  {
    id: IMPERSONATE_ORG,
    description: "Impersonate members of the caller's organization, read and end their impersonations.",
  },
  { id: IMPERSONATION_READ_GLOBAL, description: "Read the realm's impersonations and consent modes." },
  {
    id: IMPERSONATION_READ_ORG,
    description: "Read the impersonations of members of the caller's organization and its consent mode.",
  },
  {
    id: IMPERSONATION_MANAGE_GLOBAL,
    description: "Set the impersonation consent mode of the realm and of any organization.",
  },
  {
    id: IMPERSONATION_MANAGE_ORG,
    description: "Set the impersonation consent mode of the caller's organization.",
  },
  { id: BREAK_GLASS_READ_GLOBAL, description: "Read the realm's break-glass status." },
  {
    id: BREAK_GLASS_MANAGE_GLOBAL,
    description: "Record a break-glass drill and rotate the break-glass password.",
  },
];
