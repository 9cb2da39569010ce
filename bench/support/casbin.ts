/**
 * The benchmark's policy set translated to Casbin (`casbin`), as faithfully as Casbin
 * allows, evaluated with `enforceSync` on an enforcer built from a model string and a
 * `StringAdapter` (CSV policy lines).
 *
 * Encoding, one `p` line per grant: `p, <subject id>, <pattern>, <regex>, <org pin>,
 * <team ids>, <condition>, <allow|deny>`, with the deny-override effect
 * `some(where (p.eft == allow)) && !some(where (p.eft == deny))` (svc's decision rule;
 * Casbin's default deny is svc's DeniedByDefault).
 *
 * - patterns: a concrete pattern is compared with `==`; a wildcard pattern with the
 *   built-in `regexMatch` against an anchored regex where a segment `*` is
 *   `[a-z0-9_-]*` (never crossing `:`) and a scope `*` is `(global|org|team|self)`.
 *   (`keyMatch` is not faithful here: its `*` is prefix-only and ignores the rest of
 *   the pattern, so `*:org:list` would match everything.) The ternary keeps Casbin from
 *   compiling a regex for concrete patterns, which only helps it.
 * - scope: the checked scope's rule from the semantics page, written once in the
 *   matcher over the request objects (`r.sub`, `r.obj`, `r.scope`). Casbin has no set
 *   operations, so team intersection is the one custom function, `overlaps`, added with
 *   `addFunction` (documented Casbin practice; native JS, so again in Casbin's favour).
 * - conditions: per-policy ABAC rules through `eval(p.cond)` (Casbin's "ABAC with
 *   policy rules"): `eq` to `===` (strict, so no coercion, as svc), `in` to Casbin's
 *   `in` operator over an array literal, `gte` to `>=` (a missing attribute is
 *   `undefined` and compares false, as svc), `allOf` to `&&`, `not` to `!`, `{ref}` to
 *   the other attribute. Unconditioned grants hold `true`.
 *
 * Casbin quirk worked around: when the expanded matcher contains ` in `, Casbin rewrites
 * every ` (...)` group that holds a comma into `[...]` (its `bracketCompatible`), which
 * breaks nested expressions; the matcher and conditions are therefore written without
 * a space before `(`.
 *
 * @module
 */
import { type Enforcer, newEnforcer, newModelFromString, StringAdapter } from "casbin";
import type { BenchCheck, BenchGrant, BenchSubject, ConditionNode } from "./fixture.ts";

/**
 * The matcher, on one line and without a space before any `(` (see the module notes).
 */
export const CASBIN_MATCHER = [
  "r.sub.id == p.sub && (p.re == '' ? r.perm == p.pat : regexMatch(r.perm, p.re))",
  "(p.org == '' || p.org == r.sub.orgId)",
  "(p.teams == '' || overlaps(r.obj.teamIds, p.teams))",
  "(r.scope == 'global'" +
  " || r.scope == 'org' && r.sub.orgId != '' && (r.obj.orgId == '' || r.obj.orgId == r.sub.orgId)" +
  " || r.scope == 'team' && overlaps(r.obj.teamIds, p.teams == '' ? r.sub.teamIds : p.teams)" +
  " && (r.obj.orgId == '' || r.obj.orgId == r.sub.orgId)" +
  " || r.scope == 'self' && r.obj.ownerId != '' && r.obj.ownerId == r.sub.id" +
  " && (r.obj.orgId == '' || r.obj.orgId == r.sub.orgId))",
  "eval(p.cond)",
].join("&&").replace(/ \(/g, "(");

/** The Casbin model. */
export const CASBIN_MODEL = `
[request_definition]
r = sub, obj, perm, scope, ctx

[policy_definition]
p = sub, pat, re, org, teams, cond, eft

[policy_effect]
e = some(where (p.eft == allow)) && !some(where (p.eft == deny))

[matchers]
m = ${CASBIN_MATCHER}
`;

/** Team intersection: `teams` is an array or a space-separated list (a CSV field). */
export function overlaps(resourceTeams: unknown, teams: unknown): boolean {
  if (!Array.isArray(resourceTeams) || resourceTeams.length === 0) return false;
  if (Array.isArray(teams)) return resourceTeams.some((t) => teams.includes(t));
  if (typeof teams !== "string" || teams === "") return false;
  const padded = ` ${teams} `;
  return resourceTeams.some((t) => padded.includes(` ${t} `));
}

function segmentRegex(segment: string): string {
  return segment.replace("*", "[a-z0-9_-]*");
}

/** The anchored regex for a wildcard pattern; the empty string for a concrete one. */
export function patternRegex(pattern: string): string {
  if (!pattern.includes("*")) return "";
  const [service, scope, action] = pattern.split(":");
  const s = scope === "*" ? "(global|org|team|self)" : scope;
  return `^${segmentRegex(service)}:${s}:${segmentRegex(action)}$`;
}

const ROOTS: Record<string, string> = { subject: "r.sub", resource: "r.obj", context: "r.ctx" };

function path(attr: string): string {
  const [root, ...keys] = attr.split(".");
  return [ROOTS[root], ...keys].join(".");
}

function literal(value: unknown): string {
  if (typeof value === "string") {
    if (/['\\]/.test(value)) throw new Error(`unsupported string in a Casbin rule: ${value}`);
    return `'${value}'`;
  }
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return `[${value.map(literal).join(",")}]`;
  throw new Error(`not expressible in Casbin: ${JSON.stringify(value)}`);
}

/** Translates a generated condition node to a Casbin rule expression (no space before `(`). */
export function casbinCondition(node: ConditionNode): string {
  if ("allOf" in node) {
    return node.allOf.length === 0 ? "true" : node.allOf.map((n) => `(${casbinCondition(n)})`).join("&&");
  }
  if ("not" in node) return `!(${casbinCondition(node.not)})`;
  const left = path(node.attr);
  const value = node.value;
  const right = typeof value === "object" && value !== null && !Array.isArray(value)
    ? path(value.ref)
    : literal(value);
  switch (node.op) {
    case "eq":
      return `${left} === ${right}`;
    case "gte":
      return `${left} >= ${right}`;
    case "in":
      return `${left} in ${right}`;
  }
}

function csvField(value: string): string {
  if (value.includes('"')) throw new Error(`unsupported quote in a CSV field: ${value}`);
  return /[,\s]/.test(value) ? `"${value}"` : value;
}

/** One CSV policy line for a grant. */
export function casbinPolicyLine(subject: BenchSubject, grant: BenchGrant): string {
  return [
    "p",
    subject.id,
    grant.pattern,
    patternRegex(grant.pattern),
    grant.orgId ?? "",
    (grant.teamIds ?? []).join(" "),
    grant.condition != null ? casbinCondition(grant.condition.condition) : "true",
    grant.effect === "Allow" ? "allow" : "deny",
  ].map(csvField).join(", ");
}

/** The subject's policy as CSV text for a `StringAdapter`. */
export function casbinPolicyText(subject: BenchSubject): string {
  return subject.grants.map((g) => casbinPolicyLine(subject, g)).join("\n");
}

/** The `enforceSync` arguments for one check, built once and reused by the benchmark. */
export function casbinRequest(subject: BenchSubject, check: BenchCheck): unknown[] {
  const scope = check.permission.split(":")[1];
  const sub = { ...subject.attributes, id: subject.id, orgId: subject.orgId ?? "", teamIds: subject.teamIds };
  const obj = {
    ...check.resourceAttributes,
    orgId: check.resourceOrgId ?? "",
    ownerId: check.resourceOwnerId ?? "",
    teamIds: check.resourceTeamIds ?? [],
  };
  return [sub, obj, check.permission, scope, check.context ?? {}];
}

/** A Casbin engine for one subject: `check(i)` answers `checks[i]` (allow is `true`). */
export interface CasbinEngine {
  readonly enforcer: Enforcer;
  check(index: number): boolean;
}

/** Builds the enforcer for the subject and pre-builds one request per check. */
export async function casbinEngine(
  subject: BenchSubject,
  checks: readonly BenchCheck[],
): Promise<CasbinEngine> {
  const enforcer = await newEnforcer(
    newModelFromString(CASBIN_MODEL),
    new StringAdapter(casbinPolicyText(subject)),
  );
  enforcer.addFunction("overlaps", overlaps);
  const requests = checks.map((c) => casbinRequest(subject, c));
  return {
    enforcer,
    check(index: number): boolean {
      return enforcer.enforceSync(...requests[index]);
    },
  };
}
