/**
 * The shape of a permission as published in the catalog, shared by svc's own permission lists
 * (`svc-permissions.ts`, `permissions/*.ts`) and plugins' declarations.
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
