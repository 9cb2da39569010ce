/**
 * The one rule for who may act on whom (issue 24). Given everything a caller holds (its grants
 * in every context: realm-wide, pinned to organizations, `svc:` and every plugin's permissions)
 * and the scope it acts at, a {@link CallerAuthority} decides:
 *
 * - (a) whether the caller may hand out grant patterns at a context ({@link CallerAuthority.missingToGrant});
 * - (b) whether the caller may manage, impersonate, import over, reset or otherwise act on a
 *   subject: the subject's whole reach (every permission of the universe it holds in any context)
 *   must be held by the caller in that context ({@link CallerAuthority.missingOver});
 * - (c) which rows the caller may read ({@link CallerAuthority.readFilter}, {@link CallerAuthority.mayRead}).
 *
 * "The caller holds P in context C" is decided by the authz engine on the caller's grants compiled
 * for C, kept to what applies unconditionally: an Allow grant counts only without a condition
 * and without a team restriction; a Deny grant counts always (as if its condition held, for
 * every team). A `self` permission is judged on the caller's own resources, a `team` permission
 * for every team.
 *
 * Contexts: null is realm-wide (an unpinned grant, which applies in every organization); an
 * organization id is that organization. A realm-wide caller (the `svc:global:` fence) holds P
 * realm-wide by its unpinned grants, and then also in every organization it has grants pinned to
 * (a pinned Deny narrows it there); in organization O by its grants applying in O. An
 * organization caller (the `svc:org:` fence only) holds nothing realm-wide, nothing in another
 * organization, and never a `global` permission (a global permission is realm-only for
 * organization administrators, even one pinned to their organization).
 *
 * The realm's root: a realm-wide caller that holds every `svc:` permission of the universe
 * realm-wide (the bootstrap `svc-admin`) is the authority over the plugins' permissions too
 * (plugins extend svc's admin surface), in every context, whether or not it holds them itself.
 * Nobody else is: a plugin permission is handed out or reached only by who holds it there.
 *
 * Permissions outside the universe (an application's own, such as `docs:org:read`) are the
 * applications' business: a caller may hand them out, and act on a subject holding them, wherever
 * it acts at all (a realm-wide caller anywhere, an organization caller in its organization only:
 * a subject holding anything realm-wide or pinned to another organization is beyond it; such a
 * shortfall names the grant's pattern).
 *
 * Pure: no I/O; an adapter loads the grants.
 *
 * @module
 */
import {
  type CompiledSubject,
  compileGrant,
  compileSubject,
  evaluate,
  type Grant,
  parsePermissionIdCached,
  parsePermissionPattern,
  type PermissionId,
} from "../authz/mod.ts";
import { type Reached, reachOf } from "./reach.ts";
import type { PermissionUniverse } from "./universe.ts";

/** Who acts, at which scope, with everything it holds. */
export interface CallerAuthorityInput {
  /** The caller's id (user or service account). */
  readonly callerId: string;
  /** The caller's realm. */
  readonly realmId: string;
  /** Whether the caller acts realm-wide (holds the route's `svc:global:` permission). */
  readonly realmWide: boolean;
  /** The organization an organization caller administers (ignored when realm-wide). */
  readonly orgId: string | null;
  /** Every grant of the caller, in every context (realm-wide and pinned rows alike). */
  readonly grants: readonly Grant[];
}

/** A permission the caller lacks in a context. */
export interface Shortfall {
  /** The concrete permission id. */
  readonly permission: string;
  /** Null: realm-wide; else the organization id. */
  readonly context: string | null;
}

/** The rows a caller may read: its realm, and all organizations (null) or one. */
export interface ReadFilter {
  /** The caller's realm (lower case). */
  readonly realmId: string;
  /** Null: every organization and realm-level rows; else rows of this organization only. */
  readonly orgId: string | null;
}

/**
 * The organization context a caller may read a subject's activity in (sessions, security events,
 * addresses): rows of `orgId`, and rows of no organization context when `withoutOrg`.
 */
export interface OrgContextFilter {
  /** The caller's organization. */
  readonly orgId: string;
  /** Whether rows of no organization context are readable too (the subject belongs to no other organization). */
  readonly withoutOrg: boolean;
}

/** The decisions of one caller; see the module documentation. */
export interface CallerAuthority {
  /** The caller's id. */
  readonly callerId: string;
  /** Whether the caller acts realm-wide. */
  readonly realmWide: boolean;
  /** The organization of an organization caller, else null (lower case). */
  readonly orgId: string | null;
  /**
   * Whether the caller holds `permission` in `context` (null: realm-wide, in every
   * organization), or is the realm's root and it is a plugin's permission.
   */
  holds(permission: string | PermissionId, context: string | null): boolean;
  /**
   * (a) The universe permissions one of `patterns` matches that the caller does not hold in
   * `context` (where the grants would apply; null: realm-wide), and every pattern when the caller
   * does not act in `context` at all, sorted; empty: it may hand them out. Invalid patterns must
   * be refused before (they throw).
   */
  missingToGrant(patterns: readonly string[], context: string | null): string[];
  /**
   * (b) Everything the subject with `grants` (every grant of it, every context) reaches that the
   * caller does not hold where the subject holds it (universe permissions), and the pattern of
   * every Allow grant it holds where the caller does not act; empty: the caller may act on it.
   */
  missingOver(grants: readonly Grant[]): Shortfall[];
  /** (c) The realm and organization filter of the rows the caller may read. */
  readFilter(): ReadFilter;
  /** (c) Whether a row of `realmId` and `orgId` (null: realm-level) is one the caller may read. */
  mayRead(row: { readonly realmId: string; readonly orgId: string | null }): boolean;
  /**
   * (c) The activity of a subject (a member of `subjectOrgIds`) the caller may read: null for a
   * realm-wide caller (all of it); for an organization caller, what happened in its organization,
   * plus what happened in no organization context only when the subject belongs to no other
   * organization (a shared member's logins, sessions and addresses elsewhere are not its business).
   */
  activityFilter(subjectOrgIds: readonly string[]): OrgContextFilter | null;
}

/** The effective organization of a realm-wide judgement: no pinned grant applies to it. */
const EVERY_ORGANIZATION = "(every organization)";
/** The team of a `team` judgement: only grants without a team restriction reach it. */
const EVERY_TEAM = "(every team)";

const lower = (id: string | null | undefined): string | null =>
  id === undefined || id === null ? null : id.toLowerCase();

/**
 * The grants of `grants` that apply unconditionally (see the module documentation), compiled
 * form checked, organization ids lower-cased: invalid rows grant nothing.
 */
function unconditionalGrants(grants: readonly Grant[]): Grant[] {
  const kept: Grant[] = [];
  for (const grant of grants) {
    try {
      compileGrant(grant);
    } catch {
      continue;
    }
    const restricted = (grant.teamIds ?? []).length > 0 || (grant.condition ?? null) !== null;
    if (grant.effect === "Allow" && restricted) continue;
    kept.push({
      pattern: grant.pattern,
      effect: grant.effect,
      orgId: lower(grant.orgId),
      teamIds: null,
      condition: null,
      source: grant.source ?? "",
    });
  }
  return kept;
}

/** Builds the authority of a caller (compilations are made once per context, on first use). */
export function callerAuthority(input: CallerAuthorityInput, universe: PermissionUniverse): CallerAuthority {
  const callerId = input.callerId;
  const realmWide = input.realmWide;
  const ownOrg = realmWide ? null : lower(input.orgId);
  const realmId = input.realmId.toLowerCase();
  const grants = unconditionalGrants(input.grants);
  const pinnedOrgs = [...new Set(grants.flatMap((g) => g.orgId === null ? [] : [g.orgId!]))].sort();
  const compiled = new Map<string, CompiledSubject>();
  const subjectAt = (orgId: string): CompiledSubject => {
    let subject = compiled.get(orgId);
    if (subject === undefined) {
      subject = compileSubject({ id: callerId, orgId, teamIds: [EVERY_TEAM], attributes: {}, grants });
      compiled.set(orgId, subject);
    }
    return subject;
  };
  const allowedAt = (id: PermissionId, orgId: string): boolean =>
    evaluate(subjectAt(orgId), {
      permission: id.text,
      resourceOrgId: orgId === EVERY_ORGANIZATION ? null : orgId,
      resourceOwnerId: callerId,
      resourceTeamIds: [EVERY_TEAM],
    }).decision === "Allowed";

  const heldAt = (id: PermissionId, orgId: string | null): boolean => {
    if (!realmWide) {
      return orgId !== null && orgId === ownOrg && id.scope !== "global" && allowedAt(id, orgId);
    }
    if (orgId !== null) return allowedAt(id, orgId);
    return allowedAt(id, EVERY_ORGANIZATION) && pinnedOrgs.every((org) => allowedAt(id, org));
  };
  /** Whether the caller acts in `context` at all: anywhere realm-wide, else its own organization only. */
  const actsIn = (orgId: string | null): boolean => realmWide || (orgId !== null && orgId === ownOrg);
  let root: boolean | undefined;
  const isRoot = (): boolean => {
    if (root === undefined) {
      const svc = universe.filter((id) => id.service === "svc");
      root = realmWide && svc.length > 0 && svc.every((id) => heldAt(id, null));
    }
    return root;
  };
  const holds = (permission: string | PermissionId, context: string | null): boolean => {
    const id = typeof permission === "string" ? parsePermissionIdCached(permission) : permission;
    if (heldAt(id, lower(context))) return true;
    return id.service !== "svc" && isRoot();
  };

  return Object.freeze({
    callerId,
    realmWide,
    orgId: ownOrg,
    holds,
    missingToGrant(patterns: readonly string[], context: string | null): string[] {
      const compiledPatterns = patterns.map((pattern) => parsePermissionPattern(pattern));
      const missing = new Set(
        universe
          .filter((id) => compiledPatterns.some((p) => p.matches(id)) && !holds(id, context))
          .map((id) => id.text),
      );
      if (!actsIn(lower(context))) { for (const p of compiledPatterns) missing.add(p.text); }
      return [...missing].sort();
    },
    missingOver(subjectGrants: readonly Grant[]): Shortfall[] {
      const missing = reachOf(subjectGrants, universe)
        .filter((reached: Reached) => !holds(reached.permission, reached.context))
        .map(({ permission, context }): Shortfall => ({ permission, context }));
      const seen = new Set(missing.map((m) => `${m.permission} ${m.context}`));
      for (const grant of subjectGrants) {
        if (grant?.effect !== "Allow") continue;
        let pattern;
        try {
          pattern = compileGrant(grant).pattern.text;
        } catch {
          continue;
        }
        const context = lower(grant.orgId);
        if (actsIn(context) || seen.has(`${pattern} ${context}`)) continue;
        seen.add(`${pattern} ${context}`);
        missing.push({ permission: pattern, context });
      }
      return missing;
    },
    readFilter(): ReadFilter {
      return { realmId, orgId: ownOrg };
    },
    mayRead(row: { readonly realmId: string; readonly orgId: string | null }): boolean {
      if (row.realmId.toLowerCase() !== realmId) return false;
      return realmWide || (row.orgId !== null && row.orgId.toLowerCase() === ownOrg);
    },
    activityFilter(subjectOrgIds: readonly string[]): OrgContextFilter | null {
      if (realmWide || ownOrg === null) return null;
      return { orgId: ownOrg, withoutOrg: subjectOrgIds.every((org) => org.toLowerCase() === ownOrg) };
    },
  });
}
