/**
 * One row of the admin route matrix (`fence_matrix_test.ts`): how to call an `/svc-admin` route
 * against a freshly prepared target, what each caller of the admin bed must get, and whether a
 * successful call is a mutation (exactly one new audit chain entry) or a read (none).
 */
import type { AdminBed } from "../../support/admin.ts";

/** A prepared request: path parameters filled in, an optional JSON body and extra headers. */
export interface PreparedRequest {
  readonly path: string;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

/** One admin route. */
export interface AdminRouteCase {
  /** `"METHOD /path"` exactly as registered on the app (Hono syntax, for example `/svc-admin/users/:userId`). */
  readonly route: string;
  /** True when a successful call changes something: exactly one audit chain entry; false: none. */
  readonly mutates: boolean;
  /**
   * The target `prepare` makes for `as` lives in organization A (or the request names A), and an
   * administrator of organization A may do this: `orgA` gets `status` too. False for global-only
   * routes (realms, signing keys, creating organizations…): `orgA` gets 403.
   */
  readonly orgAdmin: boolean;
  /**
   * What the administrator of organization B gets: 404 when the route reaches a target of
   * organization A (invisible to B), 403 for a global-only route.
   */
  readonly otherOrg: 403 | 404;
  /** The status of a successful call (2xx). */
  readonly status: number;
  /**
   * Prepares a fresh target for a call by `as` (called once per caller, so a mutation always
   * meets a fresh target) and returns the request.
   */
  prepare(bed: AdminBed, as: "global" | "orgA" | "orgB" | "plain" | null): Promise<PreparedRequest>;
}
