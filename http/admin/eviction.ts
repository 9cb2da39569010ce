/**
 * Which subject snapshots an authorization change touches, and their eviction on every instance
 * (the snapshot service publishes on the cache bus). Holders are collected inside the change's
 * transaction (before a deletion removes the rows that name them) and evicted after commit.
 *
 * - a user or a service account: itself;
 * - a group: each of its members;
 * - a role: every holder of each of its assignments.
 *
 * Beyond {@link EVICT_ONE_BY_ONE_MAX} subjects, one `invalidateAll()` replaces the individual
 * messages (every snapshot is rebuilt on next use, which is always correct).
 *
 * @module
 */
import type { SubjectSnapshots } from "../../core/snapshots/service.ts";
import type { RolePrincipalKind } from "../../core/storage/roles.ts";
import type { Storage } from "../../core/storage/storage.ts";

/** The most subjects evicted one message each; more evict every snapshot at once. */
export const EVICT_ONE_BY_ONE_MAX = 100;

/** The subjects (user and service-account ids) whose snapshots a change touches. */
export type Holders = ReadonlySet<string>;

/** The subjects a principal stands for: itself, or a group's members. */
export async function holdersOfPrincipal(
  tx: Storage,
  kind: RolePrincipalKind,
  id: string,
): Promise<Set<string>> {
  if (kind !== "Group") return new Set([id]);
  return new Set((await tx.groups.listMembers(id)).map((member) => member.userId));
}

/** The subjects holding a role through any of its assignments. */
export async function holdersOfRole(tx: Storage, roleId: string): Promise<Set<string>> {
  const holders = new Set<string>();
  for (const assignment of await tx.roles.listAssignmentsOfRole(roleId)) {
    for (const id of await holdersOfPrincipal(tx, assignment.principalKind, assignment.principalId)) {
      holders.add(id);
    }
  }
  return holders;
}

/** Evicts the holders' snapshots on every instance (all snapshots when there are many). */
export async function evictHolders(snapshots: SubjectSnapshots, holders: Holders): Promise<void> {
  if (holders.size === 0) return;
  if (holders.size > EVICT_ONE_BY_ONE_MAX) return await snapshots.invalidateAll();
  for (const id of holders) await snapshots.invalidateUser(id);
}
