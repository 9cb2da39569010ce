/**
 * The benchmark's policy set translated to Cedar (`@cedar-policy/cedar-wasm`), as
 * faithfully as Cedar allows, and evaluated with its stateful API (the policy set is
 * parsed once with `preparsePolicySet`, each check calls `statefulIsAuthorized`).
 *
 * Encoding (schema-less), one Cedar policy per grant, `permit` for Allow, `forbid` for
 * Deny, so Cedar's own forbid-overrides-permit and default deny give svc's decision rule:
 *
 * - principal: `principal == User::"<subject id>"`; the principal entity carries
 *   `id`, `orgId` (absent when the effective org is null), `teamIds` and the subject
 *   attributes.
 * - action, concrete pattern: `action == Action::"docs:org:read"` (Cedar's own action
 *   matching, the idiomatic and fastest form).
 * - action, wildcard pattern: the action is left unconstrained and the policy holds
 *   `context.svcPermission like "docs:*:read"`. This is exact rather than approximate:
 *   a permission id and a pattern both have exactly two `:`, so a `like` `*` can never
 *   absorb a `:` and cross a segment. We chose it over expanding wildcards into
 *   `action in [...]` lists because an expansion only covers a known catalog (svc's
 *   `*` also matches permissions defined later) and grows with the catalog, not the
 *   grant count. The request therefore always carries `context.svcPermission` and
 *   `context.svcScope` (the checked scope segment).
 * - scope: the checked scope's rule from the semantics page, as a `when` expression on
 *   principal and resource attributes (`resource.teamIds.containsAny(...)`, `has`
 *   guards for absent org and owner ids); for a `*` scope segment, a disjunction over
 *   `context.svcScope`. Grant org pins and team restrictions add their own terms.
 * - conditions: `eq` to `==`, `in` to `[...].contains(x)`, `gte` to `>=` (numbers only:
 *   Cedar has 64-bit integers and no string ordering, so the generator only writes
 *   integer `gte`), `allOf` to `&&`, `not` to `!`, `{ref}` to the other attribute. Every
 *   attribute access is guarded by `has`, which gives svc's "a missing attribute makes
 *   the leaf false" (and `!` over it true) instead of a Cedar evaluation error.
 *
 * Cedar has no Denied/DeniedByDefault distinction: only allow versus deny is compared.
 *
 * @module
 */
import * as cedar from "@cedar-policy/cedar-wasm";
import type { BenchCheck, BenchGrant, BenchSubject, ConditionNode } from "./fixture.ts";

type CedarValue = cedar.CedarValueJson;

const str = (s: string): string => JSON.stringify(s);

function pathOf(attr: string): { base: string; keys: string[] } {
  const [root, ...keys] = attr.split(".");
  const base = root === "subject" ? "principal" : root;
  return { base, keys };
}

/** `has` guards plus the access expression for an attribute path (`subject.dept`). */
function access(attr: string): { guard: string; expr: string } {
  const { base, keys } = pathOf(attr);
  const guards: string[] = [];
  let expr = base;
  for (const key of keys) {
    guards.push(`${expr} has ${key}`);
    expr = `${expr}.${key}`;
  }
  return { guard: guards.join(" && "), expr };
}

function literal(value: unknown): string {
  if (typeof value === "string") return str(value);
  if (typeof value === "number") {
    if (!Number.isInteger(value)) throw new Error(`Cedar has no non-integer numbers: ${value}`);
    return String(value);
  }
  if (typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return `[${value.map(literal).join(", ")}]`;
  throw new Error(`not expressible in Cedar: ${JSON.stringify(value)}`);
}

/** Translates a generated condition node to a Cedar expression. */
export function cedarCondition(node: ConditionNode): string {
  if ("allOf" in node) return node.allOf.length === 0 ? "true" : node.allOf.map(cedarCondition).join(" && ");
  if ("not" in node) return `!(${cedarCondition(node.not)})`;
  const left = access(node.attr);
  let right: { guard: string; expr: string };
  const value = node.value;
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    right = access(value.ref);
  } else {
    right = { guard: "", expr: literal(value) };
  }
  const guard = [left.guard, right.guard].filter((g) => g !== "").join(" && ");
  let test: string;
  switch (node.op) {
    case "eq":
      test = `${left.expr} == ${right.expr}`;
      break;
    case "gte":
      test = `${left.expr} >= ${right.expr}`;
      break;
    case "in":
      test = `${right.expr}.contains(${left.expr})`;
      break;
  }
  return `(${guard} && ${test})`;
}

const RESOURCE_ORG_MATCHES =
  "(!(resource has orgId) || (principal has orgId && resource.orgId == principal.orgId))";

function scopeRule(scope: string, grant: BenchGrant): string {
  const teams = grant.teamIds && grant.teamIds.length > 0 ? literal([...grant.teamIds]) : "principal.teamIds";
  switch (scope) {
    case "global":
      return "true";
    case "org":
      return "(principal has orgId && (!(resource has orgId) || resource.orgId == principal.orgId))";
    case "team":
      return `(resource.teamIds.containsAny(${teams}) && ${RESOURCE_ORG_MATCHES})`;
    case "self":
      return `(resource has ownerId && resource.ownerId == principal.id && ${RESOURCE_ORG_MATCHES})`;
    default:
      return "(" +
        ["global", "org", "team", "self"].map((s) =>
          `(context.svcScope == ${str(s)} && ${scopeRule(s, grant)})`
        )
          .join(" || ") +
        ")";
  }
}

/** Translates one grant to one Cedar policy (with an `@id` annotation). */
export function cedarPolicy(subject: BenchSubject, grant: BenchGrant, index: number): string {
  const [service, scope, action] = grant.pattern.split(":");
  const wildcard = grant.pattern.includes("*");
  const terms: string[] = [];
  if (wildcard) terms.push(`context.svcPermission like ${str(grant.pattern)}`);
  if (grant.orgId != null) terms.push(`(principal has orgId && principal.orgId == ${str(grant.orgId)})`);
  if (grant.teamIds && grant.teamIds.length > 0) {
    terms.push(`resource.teamIds.containsAny(${literal([...grant.teamIds])})`);
  }
  const rule = scopeRule(scope, grant);
  if (rule !== "true") terms.push(rule);
  if (grant.condition != null) terms.push(cedarCondition(grant.condition.condition));
  const effect = grant.effect === "Allow" ? "permit" : "forbid";
  const actionClause = wildcard ? "action" : `action == Action::${str(`${service}:${scope}:${action}`)}`;
  const when = terms.length > 0 ? `\nwhen { ${terms.join(" && ")} }` : "";
  return `@id(${str(`g${index}`)})\n${effect} (principal == User::${
    str(subject.id)
  }, ${actionClause}, resource)${when};`;
}

/** Translates a whole subject to Cedar policy text. */
export function cedarPolicies(subject: BenchSubject): string {
  return subject.grants.map((g, i) => cedarPolicy(subject, g, i)).join("\n");
}

function entityAttrs(values: Record<string, unknown>): Record<string, CedarValue> {
  const out: Record<string, CedarValue> = {};
  for (const [k, v] of Object.entries(values)) {
    if (v === null || v === undefined) continue; // Cedar has no null: the attribute is absent.
    out[k] = v as CedarValue;
  }
  return out;
}

/** The `statefulIsAuthorized` call for one check, built once and reused by the benchmark. */
export function cedarRequest(subject: BenchSubject, check: BenchCheck, policySetId: string) {
  const [, scope] = check.permission.split(":");
  const principal = { type: "User", id: subject.id };
  const resource = { type: "Resource", id: "r" };
  const entities: cedar.EntityJson[] = [
    {
      uid: principal,
      attrs: entityAttrs({
        id: subject.id,
        orgId: subject.orgId,
        teamIds: [...subject.teamIds],
        ...subject.attributes,
      }),
      parents: [],
    },
    {
      uid: resource,
      attrs: entityAttrs({
        orgId: check.resourceOrgId,
        ownerId: check.resourceOwnerId,
        teamIds: [...(check.resourceTeamIds ?? [])],
        ...check.resourceAttributes,
      }),
      parents: [],
    },
  ];
  return {
    principal,
    action: { type: "Action", id: check.permission },
    resource,
    context: entityAttrs({ ...check.context, svcPermission: check.permission, svcScope: scope }),
    preparsedPolicySetId: policySetId,
    entities,
  } satisfies cedar.StatefulAuthorizationCall;
}

let nextSetId = 0;

/** A Cedar engine for one subject: `check(i)` answers `checks[i]` (allow is `true`). */
export interface CedarEngine {
  readonly policySetId: string;
  readonly policyText: string;
  /** The pre-built `statefulIsAuthorized` calls, one per check. */
  readonly requests: readonly cedar.StatefulAuthorizationCall[];
  check(index: number): boolean;
}

/** Pre-parses the subject's policy set and pre-builds one request per check. */
export function cedarEngine(subject: BenchSubject, checks: readonly BenchCheck[]): CedarEngine {
  const policySetId = `svc-bench-${subject.grants.length}-${nextSetId++}`;
  const policyText = cedarPolicies(subject);
  const parsed = cedar.preparsePolicySet(policySetId, { staticPolicies: policyText });
  if (parsed.type !== "success") {
    throw new Error(`Cedar rejected the policy set: ${JSON.stringify(parsed.errors.slice(0, 3))}`);
  }
  const requests = checks.map((c) => cedarRequest(subject, c, policySetId));
  return {
    policySetId,
    policyText,
    requests,
    check(index: number): boolean {
      const answer = cedar.statefulIsAuthorized(requests[index]);
      if (answer.type !== "success") {
        throw new Error(`Cedar failed: ${JSON.stringify(answer.errors.slice(0, 3))}`);
      }
      return answer.response.decision === "allow";
    },
  };
}

/** Diagnostics: the evaluation errors Cedar reported for check `index` (should be none). */
export function cedarDiagnostics(engine: CedarEngine, index: number): string[] {
  const answer = cedar.statefulIsAuthorized(engine.requests[index]);
  if (answer.type !== "success") return answer.errors.map((e) => e.message);
  return answer.response.diagnostics.errors.map((e) => `${e.policyId}: ${e.error.message}`);
}
