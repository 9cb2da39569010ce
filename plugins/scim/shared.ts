/**
 * What the SCIM plugin's modules share: its config section, permissions and constants.
 *
 * @module
 */

/** The plugin's config section. */
export interface ScimConfig {
  /** How long the token before a rotation stays valid when the rotation names no overlap. */
  readonly defaultOverlapSeconds: number;
  /** The largest SCIM request body accepted, in bytes. */
  readonly maxBodyBytes: number;
  /** The most operations of one `/Bulk` request. */
  readonly bulkMaxOperations: number;
  /** The largest `/Bulk` request body, in bytes. */
  readonly bulkMaxPayloadBytes: number;
}

/** The plugin's permissions. */
export const PERMISSIONS = {
  readGlobal: "scim:global:connections-read",
  manageGlobal: "scim:global:connections-manage",
  readOrg: "scim:org:connections-read",
  manageOrg: "scim:org:connections-manage",
} as const;

/** Every SCIM bearer token starts with this (secret scanners can find leaked ones). */
export const TOKEN_PREFIX = "svc_scim_";

/** Where the SCIM endpoints of a connection live, below the path base. */
export const SCIM_PREFIX = "/scim/v2";

/** The audit actor id of a connection (the entry's actor is `scim:connection:<id>`, kind `System`). */
export const actorIdOf = (connectionId: string): string => `connection:${connectionId}`;
