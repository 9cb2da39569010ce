/**
 * A seeded, deterministic generator of realistic subjects and access checks for the
 * authorization benchmarks and the cross-engine equivalence test.
 *
 * The grant mix, per subject of `size` grants:
 * - about 10% wildcard patterns (`docs:*:read`, `*:org:list`, `bil*:org:*`, `docs:team:*`,
 *   `*s:self:read`, `docs:*:re*`), the rest concrete;
 * - about 10% denies, mostly concrete and often conditioned (wildcard denies stay narrow,
 *   as real ones do: `crm:*:delete`, never `*:*:*`);
 * - about 15% with an ABAC condition: `eq`, `in`, `gte` leaves on subject, resource and
 *   context attributes, some `allOf` pairs, an attribute-to-attribute `ref`, and the
 *   "deny unless MFA" shape `not(context.mfa eq true)`;
 * - scopes global 15%, org 40%, team 25%, self 20%; a third of team grants name their
 *   own teams; about 12% pinned to an organization (mostly the effective one).
 *
 * The service catalog grows with the subject (24 named services plus one more per 50
 * grants), as a subject with 10,000 grants spans many more applications than one with 10.
 *
 * The checks are a fixed rotating set that hits matches (targeted at a grant, so
 * conditions and denies are exercised), misses (unknown services and actions), scope
 * failures (another organization's resource, another owner, foreign teams) and plain
 * browsing of the catalog.
 *
 * Only the generator's own types are used here, so that the Cedar and Casbin
 * translations do not depend on the engine under test.
 *
 * @module
 */

/** A grant as the engine takes it (structurally identical to `core/authz` `Grant`). */
export interface BenchGrant {
  pattern: string;
  effect: "Allow" | "Deny";
  orgId?: string | null;
  teamIds?: readonly string[] | null;
  condition?: ConditionDocument | null;
  source: string;
}

/** A subject snapshot (structurally identical to `core/authz` `SubjectSnapshot`). */
export interface BenchSubject {
  id: string;
  orgId: string | null;
  teamIds: readonly string[];
  attributes: Record<string, unknown>;
  grants: readonly BenchGrant[];
}

/** An access check (structurally identical to `core/authz` `AccessCheck`). */
export interface BenchCheck {
  permission: string;
  resourceOrgId?: string | null;
  resourceOwnerId?: string | null;
  resourceTeamIds?: readonly string[] | null;
  resourceAttributes?: Record<string, unknown> | null;
  context?: Record<string, unknown> | null;
}

/** The subset of condition documents (version 1) the generator writes. */
export interface ConditionDocument {
  version: 1;
  condition: ConditionNode;
}

/** A condition node limited to what the generator writes and all three engines express. */
export type ConditionNode =
  | { allOf: ConditionNode[] }
  | { not: ConditionNode }
  | { op: "eq" | "gte"; attr: string; value: string | number | boolean | { ref: string } }
  | { op: "in"; attr: string; value: (string | number)[] };

/** One generated benchmark fixture. */
export interface Fixture {
  size: number;
  subject: BenchSubject;
  /** The rotating check set; its length is a power of two. */
  checks: BenchCheck[];
}

/** The grant counts benchmarked. */
export const SIZES: readonly number[] = [10, 100, 1_000, 10_000];

/** The default number of rotating checks per fixture (a power of two). */
export const CHECK_COUNT = 512;

const NAMED_SERVICES = [
  "docs",
  "billing",
  "crm",
  "hr",
  "inventory",
  "analytics",
  "support",
  "mail",
  "calendar",
  "wiki",
  "audit",
  "deploy",
  "secrets",
  "tickets",
  "reports",
  "storage",
  "search",
  "chat",
  "forms",
  "sales",
  "payroll",
  "assets",
  "projects",
  "contracts",
];

const ACTIONS = [
  "read",
  "list",
  "create",
  "update",
  "delete",
  "export",
  "approve",
  "share",
  "archive",
  "comment",
  "invite",
  "publish",
];

const SCOPES = ["global", "org", "team", "self"] as const;
type Scope = typeof SCOPES[number];

const SUBJECT_ID = "user-1";
const SUBJECT_ORG = "org-1";

/** mulberry32: a small, fast, seeded PRNG; the same seed always gives the same stream. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Gen {
  constructor(readonly random: () => number) {}
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.random() * (hi - lo + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)];
  }
  chance(p: number): boolean {
    return this.random() < p;
  }
  /** A non-empty subset of `items`, in catalog order. */
  subset<T>(items: readonly T[], max = items.length): T[] {
    const n = this.int(1, Math.min(max, items.length));
    const picked = new Set<number>();
    while (picked.size < n) picked.add(this.int(0, items.length - 1));
    return [...picked].sort((a, b) => a - b).map((i) => items[i]);
  }
}

/** The services of a subject with `size` grants. */
export function servicesFor(size: number): string[] {
  const extra = Math.floor(size / 50);
  const out = [...NAMED_SERVICES];
  for (let i = 0; i < extra; i++) out.push(`app-${i}`);
  return out;
}

function teamPool(size: number): string[] {
  const n = 4 + Math.floor(size / 100);
  return Array.from({ length: n }, (_, i) => `team-${i + 1}`);
}

function pickScope(g: Gen): Scope {
  const r = g.random();
  return r < 0.15 ? "global" : r < 0.55 ? "org" : r < 0.8 ? "team" : "self";
}

/** A segment wildcard built from a concrete name: prefix (`bil*`), suffix (`*s`) or infix (`do*s`). */
function partial(g: Gen, name: string): string {
  if (name.length < 3) return "*";
  const kind = g.int(0, 2);
  if (kind === 0) return `${name.slice(0, g.int(1, name.length - 1))}*`;
  if (kind === 1) return `*${name.slice(g.int(1, name.length - 1))}`;
  const cut = g.int(1, name.length - 2);
  return `${name.slice(0, cut)}*${name.slice(cut + 1 + g.int(0, name.length - cut - 2))}`;
}

function wildcardPattern(g: Gen, services: string[], deny: boolean): string {
  const service = g.pick(services.slice(0, 24 + Math.floor(services.length / 8)));
  const action = g.pick(ACTIONS);
  const scope = pickScope(g);
  if (deny) {
    // Narrow wildcard denies, as written in practice.
    return g.chance(0.5) ? `${service}:*:${action}` : `${service}:${scope}:${partial(g, action)}`;
  }
  switch (g.int(0, 6)) {
    case 0:
      return `${service}:*:${action}`; // docs:*:read
    case 1:
      return `*:${scope}:${g.pick(["list", "read"])}`; // *:org:list
    case 2:
      return `${service.slice(0, g.int(1, Math.max(1, service.length - 1)))}*:${scope}:*`; // bil*:org:*
    case 3:
      return `${service}:${scope}:*`; // docs:team:*
    case 4:
      return `${partial(g, service)}:${scope}:${action}`; // *s:self:read, do*s:org:read
    case 5:
      return `${service}:*:${partial(g, action)}`; // docs:*:re*
    default:
      return `${service}:${g.pick(["*", scope])}:${g.pick(["read", "list", "comment"])}`;
  }
}

function leaf(g: Gen): ConditionNode {
  switch (g.int(0, 8)) {
    case 0:
      return { op: "eq", attr: "subject.dept", value: g.pick(["eng", "sales", "ops"]) };
    case 1:
      return { op: "in", attr: "subject.region", value: g.subset(["eu", "us", "apac"], 2) };
    case 2:
      return { op: "gte", attr: "subject.level", value: g.int(2, 6) };
    case 3:
      return {
        op: "in",
        attr: "resource.classification",
        value: g.subset(["public", "internal", "confidential"], 2),
      };
    case 4:
      return { op: "gte", attr: "subject.clearance", value: { ref: "resource.sensitivity" } };
    case 5:
      return { op: "eq", attr: "context.mfa", value: true };
    case 6:
      return { op: "gte", attr: "context.hour", value: g.int(6, 12) };
    case 7:
      return { op: "in", attr: "context.channel", value: g.subset(["web", "api", "cli"], 2) };
    default:
      return { op: "eq", attr: "resource.classification", value: g.pick(["public", "internal"]) };
  }
}

function condition(g: Gen, deny: boolean): ConditionDocument {
  let node: ConditionNode;
  if (deny && g.chance(0.3)) node = { not: { op: "eq", attr: "context.mfa", value: true } };
  else if (g.chance(0.2)) node = { allOf: [leaf(g), leaf(g)] };
  else node = leaf(g);
  return { version: 1, condition: node };
}

/** Generates the subject with `size` grants for `seed` (the same inputs give the same subject). */
export function generateSubject(size: number, seed = 0x5eed): BenchSubject {
  const g = new Gen(seededRandom(seed ^ size));
  const services = servicesFor(size);
  const teams = teamPool(size);
  const grants: BenchGrant[] = [];
  for (let i = 0; i < size; i++) {
    const deny = g.chance(0.1);
    let pattern: string;
    if (g.chance(0.1)) {
      pattern = wildcardPattern(g, services, deny);
    } else {
      pattern = `${g.pick(services)}:${pickScope(g)}:${g.pick(ACTIONS)}`;
    }
    const grant: BenchGrant = { pattern, effect: deny ? "Deny" : "Allow", source: `role:r${i % 37}` };
    if (g.chance(deny ? 0.35 : 0.13)) grant.condition = condition(g, deny);
    const scope = pattern.split(":")[1];
    if ((scope === "team" || scope === "*") && g.chance(0.33)) grant.teamIds = g.subset(teams, 2);
    if (g.chance(0.12)) grant.orgId = g.chance(0.75) ? SUBJECT_ORG : "org-2";
    grants.push(grant);
  }
  return {
    id: SUBJECT_ID,
    orgId: SUBJECT_ORG,
    teamIds: ["team-1", "team-3"],
    attributes: { dept: "eng", region: "eu", level: 4, clearance: 2 },
    grants,
  };
}

function concretize(g: Gen, segment: string, catalog: readonly string[]): string {
  if (!segment.includes("*")) return segment;
  const [pre, suf] = segment.split("*");
  const fits = catalog.filter((c) =>
    c.length >= pre.length + suf.length && c.startsWith(pre) && c.endsWith(suf)
  );
  if (fits.length > 0 && g.chance(0.85)) return g.pick(fits);
  return `${pre}${g.pick(["", "x", "zz"])}${suf}` || "x";
}

function resourceAttributes(g: Gen): Record<string, unknown> {
  const attrs: Record<string, unknown> = {
    classification: g.pick(["public", "internal", "confidential"]),
  };
  if (g.chance(0.9)) attrs.sensitivity = g.int(1, 4);
  return attrs;
}

function contextAttributes(g: Gen): Record<string, unknown> {
  const ctx: Record<string, unknown> = { hour: g.int(0, 23), channel: g.pick(["web", "api", "cli"]) };
  if (g.chance(0.85)) ctx.mfa = g.chance(0.7);
  return ctx;
}

/** Generates `count` (a power of two) checks against `subject` for `seed`. */
export function generateChecks(subject: BenchSubject, count = CHECK_COUNT, seed = 0xc4ec): BenchCheck[] {
  const g = new Gen(seededRandom(seed ^ subject.grants.length));
  const services = servicesFor(subject.grants.length);
  const teams = teamPool(subject.grants.length);
  const checks: BenchCheck[] = [];
  for (let i = 0; i < count; i++) {
    const r = g.random();
    let permission: string;
    let scope: Scope;
    let grantTeams: readonly string[] | null | undefined = null;
    let fit: boolean;
    if (r < 0.6 && subject.grants.length > 0) {
      // Targeted at one grant (allows and denies alike): mostly in scope.
      const grant = g.pick(subject.grants);
      const [s, sc, a] = grant.pattern.split(":");
      scope = sc === "*" ? g.pick(SCOPES) : sc as Scope;
      permission = `${concretize(g, s, services)}:${scope}:${concretize(g, a, ACTIONS)}`;
      grantTeams = grant.teamIds;
      fit = r < 0.5;
    } else if (r < 0.85) {
      // Browsing the catalog: mostly misses for large catalogs.
      scope = g.pick(SCOPES);
      permission = `${g.pick(services)}:${scope}:${g.pick(ACTIONS)}`;
      fit = g.chance(0.7);
    } else {
      // Unknown services and actions.
      scope = g.pick(SCOPES);
      permission = g.chance(0.5)
        ? `legacy-${g.int(1, 9)}:${scope}:${g.pick(ACTIONS)}`
        : `${g.pick(services)}:${scope}:frobnicate`;
      fit = true;
    }
    const check: BenchCheck = {
      permission,
      resourceAttributes: resourceAttributes(g),
      context: contextAttributes(g),
    };
    if (fit) {
      if (g.chance(0.85)) check.resourceOrgId = subject.orgId;
      if (scope === "self" || g.chance(0.3)) check.resourceOwnerId = subject.id;
      check.resourceTeamIds = grantTeams && grantTeams.length > 0 && g.chance(0.7)
        ? [g.pick(grantTeams)]
        : g.chance(0.6)
        ? [g.pick(subject.teamIds)]
        : [];
    } else {
      // Out of scope: another organization, another owner, foreign teams.
      check.resourceOrgId = g.chance(0.6) ? "org-2" : subject.orgId;
      check.resourceOwnerId = g.chance(0.5) ? "user-2" : null;
      check.resourceTeamIds = g.chance(0.5) ? [g.pick(teams.slice(3))] : [];
    }
    checks.push(check);
  }
  return checks;
}

/** The fixture (subject and rotating checks) for one size. */
export function generateFixture(size: number, checkCount = CHECK_COUNT): Fixture {
  const subject = generateSubject(size);
  return { size, subject, checks: generateChecks(subject, checkCount) };
}
