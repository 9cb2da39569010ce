/**
 * The `svc:` permissions of migration (issue 15): imports and the shadow-mode authorization
 * recorder. Both are realm-wide only: an import writes realm-level users, roles, groups and
 * clients, and shadow comparisons span the realm.
 *
 * @module
 */
import type { PermissionDefinition } from "../permission-definition.ts";

/** Importing users, credentials, roles, groups and clients into the realm (`POST /svc-admin/imports/{kind}`). */
export const IMPORT_GLOBAL = "svc:global:import";
/** Recording shadow-mode comparisons (`POST /svc-admin/authz/shadow`). */
export const SHADOW_RECORD_GLOBAL = "svc:global:shadow-record";
/** Reading the shadow-mode report (`GET /svc-admin/authz/shadow/report`). */
export const SHADOW_READ_GLOBAL = "svc:global:shadow-read";

/** The permissions of this area, in catalog order. */
export const PERMISSIONS: readonly PermissionDefinition[] = [
  {
    id: IMPORT_GLOBAL,
    description:
      "Import users, password hashes, roles, groups and clients into the realm (and dry-run imports).",
  },
  {
    id: SHADOW_RECORD_GLOBAL,
    description: "Record shadow-mode comparisons of a legacy authorization decision with svc's.",
  },
  { id: SHADOW_READ_GLOBAL, description: "Read the realm's shadow-mode report (agreements, divergences)." },
];
