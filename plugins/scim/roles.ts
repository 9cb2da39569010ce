/**
 * The role assignments a SCIM connection's groups get from its `groupRoles` mapping: a group's
 * svc role assignments are exactly the roles its displayName maps to (case-insensitively), of the
 * connection's organization only. Run when a group is created or renamed, and for every group of
 * the connection when the mapping changes.
 *
 * @module
 */
import type { Storage } from "../../mod.ts";
import type { ScimConnection } from "./store.ts";

/**
 * Makes the svc group's role assignments those the connection's mapping gives `displayName`;
 * answers whether anything changed.
 */
export async function syncRoles(
  tx: Storage,
  connection: Pick<ScimConnection, "orgId" | "groupRoles">,
  groupId: string,
  displayName: string,
): Promise<boolean> {
  const mappedKey = Object.keys(connection.groupRoles).find((k) =>
    k.toLowerCase() === displayName.toLowerCase()
  );
  const desired = new Set(
    (mappedKey === undefined ? [] : connection.groupRoles[mappedKey]).map((r) => r.toLowerCase()),
  );
  let changed = false;
  const current = await tx.roles.listAssignmentsForPrincipal("Group", groupId);
  for (const a of current) {
    if (!desired.has(a.roleId.toLowerCase())) changed = await tx.roles.unassign(a.id) || changed;
  }
  for (const roleId of desired) {
    if (current.some((a) => a.roleId.toLowerCase() === roleId)) continue;
    const role = await tx.roles.get(roleId);
    // Only the organization's own roles (checked when the mapping was set; the role may be gone).
    if (role === null || role.orgId !== connection.orgId) continue;
    await tx.roles.assign({ roleId, principalKind: "Group", principalId: groupId, orgId: connection.orgId });
    changed = true;
  }
  return changed;
}
