/**
 * Permission fences of admin routes: the caller's subject snapshot, evaluated by the authz
 * engine for `svc:` permissions, either realm-wide (`svc:global:…`) or for the caller's own
 * organization (`svc:org:…`).
 *
 * @module
 */
import type { Context } from "hono";
import { evaluate } from "../../core/authz/mod.ts";
import { ForbiddenError } from "../../core/errors.ts";
import type { SubjectSnapshots } from "../../core/snapshots/service.ts";
import type { SvcEnv } from "../request-id.ts";
import { type Principal, requirePrincipal } from "./principal.ts";

/** What the caller may do for one capability. */
export interface FenceScope {
  /** The authenticated caller. */
  readonly principal: Principal;
  /** Holds the global permission: anything in the realm. */
  readonly global: boolean;
  /** Holds the org permission: resources of this organization (the caller's own), or null. */
  readonly orgId: string | null;
}

/**
 * Resolves the caller's scope for a capability given by its global and (optional) org
 * permission ids; each entry may list several ids, any of which grants it. 401 without a
 * caller, 403 when neither applies.
 */
export async function fence(
  c: Context<SvcEnv>,
  snapshots: SubjectSnapshots,
  permissions: { readonly global: readonly string[]; readonly org?: readonly string[] },
  message = "You are not allowed to do this.",
): Promise<FenceScope> {
  const principal = await requirePrincipal(c);
  const caller = await snapshots.get(principal.userId, principal.orgId);
  if (caller === null || caller.realmId !== principal.realmId) throw new ForbiddenError(message);
  const global = permissions.global.some((permission) =>
    evaluate(caller.subject, { permission }).decision === "Allowed"
  );
  const org = principal.orgId !== null &&
    (permissions.org ?? []).some((permission) =>
      evaluate(caller.subject, { permission, resourceOrgId: principal.orgId }).decision === "Allowed"
    );
  if (!global && !org) throw new ForbiddenError(message);
  return { principal, global, orgId: org ? principal.orgId : null };
}

/** Whether a scope covers a resource of `orgId` (null: realm-wide resources, global only). */
export function covers(scope: FenceScope, orgId: string | null): boolean {
  return scope.global ||
    (orgId !== null && scope.orgId !== null && orgId.toLowerCase() === scope.orgId.toLowerCase());
}
