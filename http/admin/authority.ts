/**
 * The admin API's adapter of the authority rule (`core/authority`): it loads what the rule
 * judges (the caller's and the subject's grants in every context they apply, the permission
 * universe) and answers with the rule's decisions. Every admin route that hands out grants, acts
 * on a subject or reads a subject's rows asks here.
 *
 * - {@link authorityOf}: the caller's {@link CallerAuthority} for a fence scope;
 * - {@link subjectGrantsOf}: every grant of a user or service account, in every context;
 * - {@link requireAuthorityOver}: 403 unless the caller's authority covers the subject's reach;
 * - {@link realmOnlyFence}: the fence of plugin routes, where a global permission is realm-only;
 * - {@link importGuard}: what an import may touch;
 * - {@link activityFilterOf}: which of a user's sessions and security events the caller reads.
 *
 * @module
 */
import {
  type CallerAuthority,
  callerAuthority,
  type OrgContextFilter,
  type PermissionUniverse,
  permissionUniverse,
  type Shortfall,
} from "../../core/authority/mod.ts";
import type { Context } from "hono";
import { evaluate, type Grant, parsePermissionIdCached } from "../../core/authz/mod.ts";
import { SVC_PERMISSIONS } from "../../core/definitions/svc-permissions.ts";
import type { ImportGuard } from "../../core/imports/engine.ts";
import { ForbiddenError, SvcError } from "../../core/errors.ts";
import type { SubjectSnapshots } from "../../core/snapshots/service.ts";
import type { Storage } from "../../core/storage/storage.ts";
import type { FenceScope } from "../auth/fence.ts";
import { requirePrincipal } from "../auth/principal.ts";
import type { SvcEnv } from "../request-id.ts";

/** What the adapter reads. */
export interface AuthorityDeps {
  /** Organizations, role assignments, group memberships, policies and the permission catalog. */
  readonly storage: Storage;
  /** The subject snapshots (cached) the grants are read from. */
  readonly snapshots: SubjectSnapshots;
  /** The permissions the installed plugins declare (part of the universe). */
  readonly pluginPermissions?: readonly string[];
}

/** The caller tried to grant or assign a permission it may not hand out (`details.missing`). */
export class EscalationRefusedError extends SvcError {
  constructor(missing: readonly string[]) {
    super(
      "escalation_refused",
      `You cannot grant permissions you do not hold yourself: ${missing.join(", ")}.`,
      403,
      { missing: [...missing] },
    );
  }
}

/** The kind of a subject the rule judges. */
export type SubjectKind = "User" | "ServiceAccount";

/** The caller may not act on a subject that reaches further than the caller. */
export class SubjectBeyondAuthorityError extends SvcError {
  constructor(missing: readonly Shortfall[]) {
    super(
      "subject_beyond_authority",
      "This account holds permissions you do not hold; someone with its authority manages it.",
      403,
      { missing: missing.map((m) => m.context === null ? m.permission : `${m.permission}@${m.context}`) },
    );
  }
}

/**
 * The universe: svc's permissions (exactly what svc publishes into the catalog) and the plugins'.
 * Operator-declared application permissions are not part of it (they are the applications'
 * business, not admin power over svc).
 */
export function permissionUniverseOf(deps: Pick<AuthorityDeps, "pluginPermissions">): PermissionUniverse {
  const plugins = deps.pluginPermissions ?? [];
  const key = plugins.join(" ");
  let universe = universes.get(key);
  if (universe === undefined) {
    universe = permissionUniverse([...SVC_PERMISSIONS.map((p) => p.id), ...plugins]);
    if (universes.size > 16) universes.clear();
    universes.set(key, universe);
  }
  return universe;
}

/** The universes built, by plugin permission list (one per server in practice). */
const universes = new Map<string, PermissionUniverse>();

const grantKey = (g: Grant) =>
  JSON.stringify([g.pattern, g.effect, g.orgId ?? null, g.teamIds ?? [], g.condition ?? null, g.source]);

/** Loads the grants of a subject in one context (null: realm only), or null when there is none. */
type GrantLoader = (
  id: string,
  orgId: string | null,
) => Promise<{ readonly realmId: string; readonly grants: readonly Grant[] } | null>;

/** Through the subject snapshots (cached). */
const fromSnapshots = (snapshots: SubjectSnapshots): GrantLoader => async (id, orgId) => {
  const built = await snapshots.get(id, orgId);
  return built === null ? null : { realmId: built.realmId, grants: built.snapshot.grants };
};

/** Through storage (a transaction's, where the snapshots' connection would wait on it). */
const fromStorage = (storage: Storage): GrantLoader => async (id, orgId) => {
  const rows = await storage.subjectGrants.loadSubject(id, orgId);
  if (rows === null) return null;
  return {
    realmId: rows.realmId,
    grants: rows.grants.map((row) => ({
      pattern: row.pattern,
      effect: row.effect as Grant["effect"],
      orgId: row.orgId,
      teamIds: row.teamIds,
      condition: row.condition,
      source: row.source,
    })),
  };
};

/**
 * Every grant of `id` (a user or a service account) that applies realm-wide or in one of
 * `orgIds`, each once; null when there is no such subject or it is of another realm.
 */
async function grantsIn(
  load: GrantLoader,
  id: string,
  realmId: string,
  orgIds: Iterable<string | null>,
): Promise<Grant[] | null> {
  const seen = new Map<string, Grant>();
  for (const orgId of new Set([null, ...[...orgIds].map((o) => o?.toLowerCase() ?? null)])) {
    const loaded = await load(id, orgId);
    if (loaded === null || loaded.realmId.toLowerCase() !== realmId.toLowerCase()) return null;
    for (const grant of loaded.grants) seen.set(grantKey(grant), grant);
  }
  return [...seen.values()];
}

/**
 * The organizations where grants of a subject may be pinned: its memberships, its role
 * assignments', its groups' and its policies' organizations. Read from the subject's cached
 * realm-only snapshot when it carries them (`snapshots`), else in one query.
 */
export async function subjectContextsOf(
  storage: Storage,
  id: string,
  snapshots?: SubjectSnapshots,
): Promise<readonly string[]> {
  const cached = snapshots === undefined ? undefined : (await snapshots.get(id, null))?.orgContexts;
  return cached ?? await storage.organizations.listOrgContextsOfSubject(id);
}

/**
 * Every grant of a subject of the caller's realm, in every context it may hold them; null when
 * there is no such subject in `realmId`. With `tx`, read through that storage (inside a
 * transaction), else through the snapshots.
 */
export async function subjectGrantsOf(
  deps: AuthorityDeps,
  realmId: string,
  subject: { readonly kind: SubjectKind; readonly id: string },
  tx?: Storage,
): Promise<Grant[] | null> {
  const contexts = tx === undefined
    ? await subjectContextsOf(deps.storage, subject.id, deps.snapshots)
    : await tx.organizations.listOrgContextsOfSubject(subject.id);
  const load = tx === undefined ? fromSnapshots(deps.snapshots) : fromStorage(tx);
  return await grantsIn(load, subject.id, realmId, contexts);
}

/**
 * The authority of the caller of `scope`: realm-wide for a global scope, else its organization.
 * `contexts` are the organizations it will be asked about (its grants pinned there are loaded);
 * the caller's own organization always is.
 */
export async function authorityOf(
  deps: AuthorityDeps,
  scope: FenceScope,
  contexts: Iterable<string | null> = [],
  universe?: PermissionUniverse,
): Promise<CallerAuthority> {
  const { principal } = scope;
  // The caller's own contexts too: a Deny pinned to an organization narrows it there.
  const own = await subjectContextsOf(deps.storage, principal.userId, deps.snapshots);
  const grants = await grantsIn(fromSnapshots(deps.snapshots), principal.userId, principal.realmId, [
    principal.orgId,
    scope.orgId,
    ...own,
    ...contexts,
  ]);
  if (grants === null) throw new ForbiddenError();
  return callerAuthority(
    {
      callerId: principal.userId,
      realmId: principal.realmId,
      realmWide: scope.global,
      orgId: scope.global ? null : scope.orgId,
      grants,
    },
    universe ?? permissionUniverseOf(deps),
  );
}

/**
 * The activity of user `userId` (sessions, security events, addresses) the caller of `scope` may
 * read (`CallerAuthority.activityFilter`): undefined for a realm-wide caller (all of it), else its
 * organization's context, and no-organization rows only for a member of no other organization.
 */
export async function activityFilterOf(
  deps: Pick<AuthorityDeps, "storage">,
  scope: FenceScope,
  userId: string,
): Promise<OrgContextFilter | undefined> {
  if (scope.global) return undefined;
  const orgIds = (await deps.storage.organizations.listOrgsOfUser(userId)).map((org) => org.id);
  const authority = callerAuthority(
    {
      callerId: scope.principal.userId,
      realmId: scope.principal.realmId,
      realmWide: false,
      orgId: scope.orgId,
      grants: [],
    },
    [],
  );
  return authority.activityFilter(orgIds) ?? undefined;
}

/**
 * Throws 403 unless the caller of `scope` may act on `subject` (manage, impersonate, import
 * over, reset, map a workload to it): the subject's whole reach must be within the caller's.
 * `refusal` makes the error (default {@link SubjectBeyondAuthorityError}). A subject that does
 * not exist in the caller's realm passes (the route answers 404 for it).
 */
export async function requireAuthorityOver(
  deps: AuthorityDeps,
  scope: FenceScope,
  subject: { readonly kind: SubjectKind; readonly id: string },
  refusal: (missing: readonly Shortfall[]) => Error = (missing) => new SubjectBeyondAuthorityError(missing),
): Promise<void> {
  // Acting on oneself hands out nothing.
  if (subject.id.toLowerCase() === scope.principal.userId.toLowerCase()) return;
  const contexts = await subjectContextsOf(deps.storage, subject.id, deps.snapshots);
  const grants = await grantsIn(fromSnapshots(deps.snapshots), subject.id, scope.principal.realmId, contexts);
  if (grants === null) return;
  const authority = await authorityOf(deps, scope, contexts);
  const missing = authority.missingOver(grants);
  if (missing.length > 0) throw refusal(missing);
}

/**
 * The fence of a plugin's admin routes: as `fence` (`http/auth/fence.ts`), except that a `global` permission
 * counts only where it is held realm-wide (grants pinned to an organization never give it: a
 * plugin's global permission is realm-only for organization administrators), and an org
 * permission only in the caller's own organization. 401 without a caller, 403 when neither applies.
 */
export async function realmOnlyFence(
  c: Context<SvcEnv>,
  snapshots: SubjectSnapshots,
  permissions: { readonly global: readonly string[]; readonly org?: readonly string[] },
  message = "You are not allowed to do this.",
): Promise<FenceScope> {
  const principal = await requirePrincipal(c);
  const realm = await snapshots.get(principal.userId, null);
  if (realm === null || realm.realmId !== principal.realmId) throw new ForbiddenError(message);
  const global = permissions.global.some((permission) =>
    parsePermissionIdCached(permission).scope === "global" &&
    evaluate(realm.subject, { permission }).decision === "Allowed"
  );
  let org = false;
  if (principal.orgId !== null && (permissions.org ?? []).length > 0) {
    const inOrg = await snapshots.get(principal.userId, principal.orgId);
    org = inOrg !== null && inOrg.realmId === principal.realmId &&
      (permissions.org ?? []).some((permission) =>
        parsePermissionIdCached(permission).scope !== "global" &&
        evaluate(inOrg.subject, { permission, resourceOrgId: principal.orgId }).decision === "Allowed"
      );
  }
  if (!global && !org) throw new ForbiddenError(message);
  return { principal, global, orgId: org ? principal.orgId : null };
}

/**
 * The grants of a role or policy as they apply to its holders: each pinned where it applies (its
 * own organization, else `pinnedTo`: the assignment's or the owner's organization; null:
 * realm-wide), named after `source`.
 */
export function pinnedGrants(
  grants: readonly Omit<Grant, "source">[],
  pinnedTo: string | null,
  source: string,
): Grant[] {
  return grants.map((g) => ({
    pattern: g.pattern,
    effect: g.effect,
    orgId: g.orgId ?? pinnedTo,
    teamIds: g.teamIds,
    condition: g.condition,
    source,
  }));
}

/**
 * The grants a role or group hands out to whoever is assigned it or joins it (pinned where they
 * apply: the grant's organization, else the assignment's, else the role's or group's); null when
 * it cannot be judged here (a group with policies, or an unknown group).
 */
export async function handedOutBy(
  storage: Storage,
  target: { readonly kind: "Role" | "Group"; readonly id: string },
): Promise<Grant[] | null> {
  const grants: Grant[] = [];
  const roleGrants = async (roleId: string, assignedIn: string | null) => {
    const role = await storage.roles.get(roleId);
    if (role === null) return;
    grants.push(
      ...pinnedGrants(await storage.roles.listGrants(roleId), assignedIn ?? role.orgId, `role:${role.key}`),
    );
  };
  if (target.kind === "Role") {
    await roleGrants(target.id, null);
    return grants;
  }
  const group = await storage.groups.get(target.id);
  if (group === null) return null;
  for (const assignment of await storage.roles.listAssignmentsForPrincipal("Group", target.id)) {
    await roleGrants(assignment.roleId, assignment.orgId ?? group.orgId);
  }
  // A group's policies reach its members too; they are not judged here.
  if ((await storage.policies.listForPrincipal("Group", target.id)).length > 0) return null;
  return grants;
}

/**
 * Throws 403 `escalation_refused` unless the caller of `scope` may hand out everything joining
 * group `groupId` gives (its roles' grants where they apply; a group with policies is refused).
 */
export async function requireMayHandOutGroup(
  deps: AuthorityDeps,
  scope: FenceScope,
  groupId: string,
): Promise<void> {
  const grants = await handedOutBy(deps.storage, { kind: "Group", id: groupId });
  if (grants === null) throw new EscalationRefusedError(["(the group's policies)"]);
  const contexts = grants.flatMap((g) => g.orgId ? [g.orgId] : []);
  const missing = (await authorityOf(deps, scope, contexts)).missingOver(grants);
  if (missing.length > 0) {
    throw new EscalationRefusedError([...new Set(missing.map((m) => m.permission))].sort());
  }
}

/**
 * What an import by the caller of `scope` may touch (`core/imports/engine.ts`): an existing user
 * only when the caller's authority covers the user's whole reach (a holder of only
 * `svc:global:import` changes no one holding an admin permission), and an existing role or group
 * only when the caller may hand out every grant it carries where it applies. Reads go through the
 * batch's transaction.
 */
export async function importGuard(deps: AuthorityDeps, scope: FenceScope): Promise<ImportGuard> {
  const authority = await authorityOf(deps, scope);
  const realmId = scope.principal.realmId;
  return {
    async mayChangeUser(tx, user) {
      if (user.id.toLowerCase() === scope.principal.userId.toLowerCase()) return true;
      const grants = await subjectGrantsOf(deps, realmId, { kind: "User", id: user.id }, tx);
      return grants !== null && authority.missingOver(grants).length === 0;
    },
    async mayHandOut(tx, target) {
      const grants = await handedOutBy(tx, target);
      return grants !== null && authority.missingOver(grants).length === 0;
    },
  };
}

/**
 * Throws 403 `escalation_refused` unless the caller of `scope` may hand out every permission a
 * Deny among `grants` denies, where the Deny applies (its organization; null: realm-wide).
 * Taking power away needs no authority, except where it lifts a Deny: removing a member from a
 * group, or an assignment of a role, that carries a Deny hands the subject what it denied. Allow
 * grants are not judged (taking them away hands out nothing).
 */
export async function requireMayLiftDenies(
  deps: AuthorityDeps,
  scope: FenceScope,
  grants: readonly Grant[],
): Promise<void> {
  const denies = grants.filter((g) => g.effect === "Deny");
  if (denies.length === 0) return;
  const contextOf = (g: Grant) => g.orgId?.toLowerCase() ?? null;
  const contexts = [...new Set(denies.map(contextOf))];
  const authority = await authorityOf(deps, scope, contexts);
  const missing = new Set<string>();
  for (const context of contexts) {
    const patterns = denies.filter((g) => contextOf(g) === context).map((g) => g.pattern);
    for (const permission of authority.missingToGrant(patterns, context)) missing.add(permission);
  }
  if (missing.size > 0) throw new EscalationRefusedError([...missing].sort());
}
