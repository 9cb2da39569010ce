/**
 * The authority rule (issue 24): one module decides whether a caller may hand out grants, act
 * on a subject, or read rows. Pure; the admin API's adapter (`http/admin/authority.ts`) loads
 * the grants.
 *
 * @module
 */

/** The permission universe: the concrete ids the rule judges (svc's and the plugins'). */
export { permissionUniverse } from "./universe.ts";
/** A parsed, sorted permission universe. */
export type { PermissionUniverse } from "./universe.ts";
/** The reach of a subject: every (permission, context) its Allow grants reach. */
export { reachOf } from "./reach.ts";
/** One permission a subject reaches, and where. */
export type { Reached } from "./reach.ts";
/** Builds a caller's authority from everything it holds and its scope. */
export { callerAuthority } from "./authority.ts";
/** The caller's authority, its input, a shortfall and a read filter. */
export type {
  CallerAuthority,
  CallerAuthorityInput,
  OrgContextFilter,
  ReadFilter,
  Shortfall,
} from "./authority.ts";
