/**
 * The `svc:` permissions of the admin API: credentials (service accounts, API keys, signing
 * keys). Service accounts and signing keys are realm-level: global permissions only. API keys
 * of users can also be read and revoked by an administrator of an organization the owner
 * belongs to (`svc:org:api-keys-*`); creating a key is global only, because a key acts as its
 * owner with everything the owner holds.
 *
 * @module
 */
import type { PermissionDefinition } from "../permission-definition.ts";

/** Reading the realm's service accounts. */
export const SERVICE_ACCOUNTS_READ_GLOBAL = "svc:global:service-accounts-read";
/** Creating, rotating the secret of, disabling, enabling and deleting the realm's service accounts. */
export const SERVICE_ACCOUNTS_MANAGE_GLOBAL = "svc:global:service-accounts-manage";
/** Reading every API key of the realm (never the token). */
export const API_KEYS_READ_GLOBAL = "svc:global:api-keys-read";
/** Creating API keys for any user or service account of the realm, and revoking any key. */
export const API_KEYS_MANAGE_GLOBAL = "svc:global:api-keys-manage";
/** Reading the API keys of users of the caller's organization. */
export const API_KEYS_READ_ORG = "svc:org:api-keys-read";
/** Revoking the API keys of users of the caller's organization. */
export const API_KEYS_MANAGE_ORG = "svc:org:api-keys-manage";
/** Reading the realm's signing keys (kid, creation, retirement, primary). */
export const SIGNING_KEYS_READ_GLOBAL = "svc:global:signing-keys-read";
/** Rotating the realm's signing key. */
export const SIGNING_KEYS_MANAGE_GLOBAL = "svc:global:signing-keys-manage";

/** The permissions of this area, in catalog order. */
export const PERMISSIONS: readonly PermissionDefinition[] = [
  { id: SERVICE_ACCOUNTS_READ_GLOBAL, description: "Read the realm's service accounts." },
  {
    id: SERVICE_ACCOUNTS_MANAGE_GLOBAL,
    description: "Create, rotate, disable, enable and delete the realm's service accounts.",
  },
  { id: API_KEYS_READ_GLOBAL, description: "Read every API key of the realm (never the token)." },
  {
    id: API_KEYS_MANAGE_GLOBAL,
    description:
      "Create API keys for any user or service account of the realm (a key acts as its owner) and revoke any key.",
  },
  { id: API_KEYS_READ_ORG, description: "Read the API keys of users of the caller's organization." },
  { id: API_KEYS_MANAGE_ORG, description: "Revoke the API keys of users of the caller's organization." },
  {
    id: SIGNING_KEYS_READ_GLOBAL,
    description: "Read the realm's token signing keys (never the key material).",
  },
  { id: SIGNING_KEYS_MANAGE_GLOBAL, description: "Rotate the realm's token signing key now." },
];
