/**
 * The `svc:` permissions of the OIDC client admin API. Clients are realm-level: global
 * permissions only.
 *
 * @module
 */
import type { PermissionDefinition } from "../permission-definition.ts";

/** Reading the realm's OIDC clients (never a secret). */
export const OIDC_CLIENTS_READ_GLOBAL = "svc:global:oidc-clients-read";
/** Creating, changing and suspending the realm's OIDC clients. */
export const OIDC_CLIENTS_MANAGE_GLOBAL = "svc:global:oidc-clients-manage";

/** The permissions of this area, in catalog order. */
export const PERMISSIONS: readonly PermissionDefinition[] = [
  { id: OIDC_CLIENTS_READ_GLOBAL, description: "Read the realm's OIDC clients (never a secret)." },
  {
    id: OIDC_CLIENTS_MANAGE_GLOBAL,
    description: "Create, change and suspend the realm's OIDC clients (a new client's secret is shown once).",
  },
];
