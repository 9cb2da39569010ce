/**
 * svc's own permissions: the `svc:` service fences svc's administrative endpoints. They are
 * published into the permission catalog at boot, beside the operator's declared ones.
 *
 * @module
 */
import { PERMISSIONS as CREDENTIAL_PERMISSIONS } from "./permissions/credentials.ts";
import { PERMISSIONS as DIRECTORY_PERMISSIONS } from "./permissions/directory.ts";
import { PERMISSIONS as IMPERSONATION_PERMISSIONS } from "./permissions/impersonation.ts";
import { PERMISSIONS as OIDC_PERMISSIONS } from "./permissions/oidc.ts";
import { PERMISSIONS as IMPORT_PERMISSIONS } from "./permissions/imports.ts";
import { PERMISSIONS as MAIL_PERMISSIONS } from "./permissions/mail.ts";
import { PERMISSIONS as ROLE_PERMISSIONS } from "./permissions/roles.ts";
import { PERMISSIONS as USER_PERMISSIONS } from "./permissions/users.ts";

import type { PermissionDefinition } from "./permission-definition.ts";

export type { PermissionDefinition } from "./permission-definition.ts";

/** Explaining anyone's decision in the realm through `POST /svc-admin/authz/inspect`. */
export const AUTHZ_INSPECT_GLOBAL = "svc:global:authz-inspect";
/** Explaining decisions of members of the caller's own organization. */
export const AUTHZ_INSPECT_ORG = "svc:org:authz-inspect";

/** Reading any webhook endpoint of the realm and its delivery log. */
export const WEBHOOKS_READ_GLOBAL = "svc:global:webhooks-read";
/** Creating, changing, deleting, testing webhook endpoints of the realm; rotating secrets; replaying. */
export const WEBHOOKS_MANAGE_GLOBAL = "svc:global:webhooks-manage";
/** Reading the webhook endpoints scoped to the caller's own organization. */
export const WEBHOOKS_READ_ORG = "svc:org:webhooks-read";
/** Managing the webhook endpoints scoped to the caller's own organization. */
export const WEBHOOKS_MANAGE_ORG = "svc:org:webhooks-manage";
/** Reading the realm's admin audit chain and verifying it. */
export const AUDIT_READ_GLOBAL = "svc:global:audit-read";
/** Applying retention to the realm's ledgers. */
export const AUDIT_RETENTION_GLOBAL = "svc:global:audit-retention";
/** Erasing a user of the realm. */
export const USERS_ERASE_GLOBAL = "svc:global:users-erase";
/** Inviting a user into the realm (and into any of its organizations) by email. */
export const USERS_INVITE_GLOBAL = "svc:global:users-invite";
/** Inviting a user into the caller's own organization by email. */
export const USERS_INVITE_ORG = "svc:org:users-invite";

/** svc's own permissions outside the admin API areas. */
const CORE_PERMISSIONS: readonly PermissionDefinition[] = [
  { id: AUTHZ_INSPECT_GLOBAL, description: "Explain the authorization decision of any user of the realm." },
  {
    id: AUTHZ_INSPECT_ORG,
    description: "Explain the authorization decision of a user within the caller's organization.",
  },
  { id: WEBHOOKS_READ_GLOBAL, description: "Read every webhook endpoint of the realm and its delivery log." },
  {
    id: WEBHOOKS_MANAGE_GLOBAL,
    description: "Create, change, delete and test webhook endpoints of the realm, rotate secrets, replay.",
  },
  { id: WEBHOOKS_READ_ORG, description: "Read the webhook endpoints of the caller's organization." },
  { id: WEBHOOKS_MANAGE_ORG, description: "Manage the webhook endpoints of the caller's organization." },
  { id: AUDIT_READ_GLOBAL, description: "Read and verify the realm's admin audit chain." },
  {
    id: AUDIT_RETENTION_GLOBAL,
    description: "Apply retention to the realm's security events and audit payloads.",
  },
  { id: USERS_ERASE_GLOBAL, description: "Erase a user of the realm (GDPR erasure)." },
  {
    id: USERS_INVITE_GLOBAL,
    description: "Invite a user into the realm or any of its organizations by email.",
  },
  { id: USERS_INVITE_ORG, description: "Invite a user into the caller's organization by email." },
];

/** Every `svc:` permission, in catalog order. */
export const SVC_PERMISSIONS: readonly PermissionDefinition[] = Object.freeze([
  ...CORE_PERMISSIONS,
  ...DIRECTORY_PERMISSIONS,
  ...USER_PERMISSIONS,
  ...ROLE_PERMISSIONS,
  ...CREDENTIAL_PERMISSIONS,
  ...IMPERSONATION_PERMISSIONS,
  ...OIDC_PERMISSIONS,
  ...IMPORT_PERMISSIONS,
  ...MAIL_PERMISSIONS,
]);
