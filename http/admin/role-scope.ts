/**
 * What the roles area of the admin API shares: its fences and the visibility of roles,
 * organizations and principals to a caller.
 *
 * Realm administrators (`svc:global:roles-*`) see every role, assignment and policy of the
 * realm; organization administrators (`svc:org:roles-*`) see their organization's roles and the
 * assignments and policies in it, and nothing realm-level (404).
 *
 * @module
 */
import * as v from "valibot";
import {
  ROLES_MANAGE_GLOBAL,
  ROLES_MANAGE_ORG,
  ROLES_READ_GLOBAL,
  ROLES_READ_ORG,
} from "../../core/definitions/permissions/roles.ts";
import { ForbiddenError } from "../../core/errors.ts";
import { isUuid, UUID_PATTERN } from "../../core/ids.ts";
import type { Role, RolePrincipalKind } from "../../core/storage/roles.ts";
import type { Storage } from "../../core/storage/storage.ts";
import type { FenceScope } from "../auth/fence.ts";
import { hidden, requireVisible } from "./kit.ts";

/** Reading roles, assignments and policies (manage implies read). */
export const ROLES_READ = {
  global: [ROLES_READ_GLOBAL, ROLES_MANAGE_GLOBAL],
  org: [ROLES_READ_ORG, ROLES_MANAGE_ORG],
} as const;
/** Changing roles, grants, assignments and policies. */
export const ROLES_MANAGE = { global: [ROLES_MANAGE_GLOBAL], org: [ROLES_MANAGE_ORG] } as const;

/** A UUID field of a body or query. */
export function uuidField(name: string) {
  return v.pipe(v.string(`${name} must be a string`), v.regex(UUID_PATTERN, `${name} must be a UUID`));
}

/** Whether a record of `realmId` belongs to the caller's realm. */
function inRealm(scope: FenceScope, realmId: string): boolean {
  return realmId.toLowerCase() === scope.principal.realmId.toLowerCase();
}

/**
 * The organization new realm- or org-level records go to, checked: absent (null) is realm-level,
 * which only realm administrators create (403); an organization must exist in the realm and be
 * the caller's (404 otherwise). Answers the lower-cased id.
 */
export async function targetOrganization(
  tx: Storage,
  scope: FenceScope,
  orgId: string | null | undefined,
): Promise<string | null> {
  if (orgId === undefined || orgId === null) {
    if (!scope.global) {
      throw new ForbiddenError("Realm-level records are managed by realm administrators only.");
    }
    return null;
  }
  const id = orgId.toLowerCase();
  requireVisible(scope, id, "organization");
  const org = await tx.organizations.get(id);
  if (org === null || !inRealm(scope, org.realmId)) throw hidden("organization");
  return id;
}

/** The role `id` if the caller may see it, else 404. */
export async function visibleRole(tx: Storage, scope: FenceScope, id: string): Promise<Role> {
  const role = isUuid(id) ? await tx.roles.get(id) : null;
  if (role === null || !inRealm(scope, role.realmId)) throw hidden("role");
  requireVisible(scope, role.orgId, "role");
  return role;
}

/**
 * Checks that a principal exists in the caller's realm and, for an organization administrator,
 * belongs to their organization: a user who is a member, a group of the organization (service
 * accounts have no organization: realm administrators only). 404 otherwise.
 */
export async function requirePrincipal(
  tx: Storage,
  scope: FenceScope,
  kind: RolePrincipalKind,
  id: string,
): Promise<void> {
  const orgId = scope.global ? null : scope.orgId;
  let found = false;
  if (kind === "User") {
    const user = await tx.users.get(id);
    found = user !== null && inRealm(scope, user.realmId) &&
      (orgId === null || await tx.organizations.isMember(orgId, user.id));
  } else if (kind === "Group") {
    const group = await tx.groups.get(id);
    found = group !== null && inRealm(scope, group.realmId) &&
      (orgId === null || group.orgId?.toLowerCase() === orgId.toLowerCase());
  } else {
    const account = await tx.serviceAccounts.get(id);
    found = account !== null && inRealm(scope, account.realmId) && orgId === null;
  }
  if (!found) throw hidden("principal");
}
