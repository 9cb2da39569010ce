/**
 * svc's own permissions: the `svc:` service fences svc's administrative endpoints. They are
 * published into the permission catalog at boot, beside the operator's declared ones.
 *
 * @module
 */

/** A permission as published in the catalog. */
export interface PermissionDefinition {
  /** A concrete permission id, `service:scope:action`. */
  readonly id: string;
  /** What holding it allows. */
  readonly description: string;
}

/** Explaining anyone's decision in the realm through `POST /svc-admin/authz/inspect`. */
export const AUTHZ_INSPECT_GLOBAL = "svc:global:authz-inspect";
/** Explaining decisions of members of the caller's own organization. */
export const AUTHZ_INSPECT_ORG = "svc:org:authz-inspect";

/** Every `svc:` permission, in catalog order. */
export const SVC_PERMISSIONS: readonly PermissionDefinition[] = Object.freeze([
  { id: AUTHZ_INSPECT_GLOBAL, description: "Explain the authorization decision of any user of the realm." },
  {
    id: AUTHZ_INSPECT_ORG,
    description: "Explain the authorization decision of a user within the caller's organization.",
  },
]);
