/**
 * The three engines behind one shape, over one generated fixture, plus the
 * cross-engine agreement report used by the benchmark and the equivalence test.
 *
 * Every engine is prepared once (svc compiles the subject, Cedar pre-parses its policy
 * set, Casbin loads its enforcer) and every request is pre-built, so a timed call is one
 * authorization decision and nothing else.
 *
 * @module
 */
import {
  type AccessCheck,
  compileSubject,
  evaluate,
  type GrantOutcome,
  type SubjectSnapshot,
} from "../../core/authz/mod.ts";
import { casbinEngine } from "./casbin.ts";
import { cedarDiagnostics, cedarEngine } from "./cedar.ts";
import { type Fixture, generateFixture } from "./fixture.ts";

/** The engines for one fixture. `check(i)` decides `fixture.checks[i]`; `true` is allow. */
export interface Engines {
  readonly fixture: Fixture;
  /** svc's full decision for check `i`. */
  svcDecision(index: number): "Allowed" | "Denied" | "DeniedByDefault";
  /** svc's per-grant outcomes for check `i` (grant order), for coverage reports. */
  svcTrace(index: number): GrantOutcome[];
  /** Evaluation errors Cedar reported for check `i` (a policy that errors is skipped: must be none). */
  cedarErrors(index: number): string[];
  svc(index: number): boolean;
  cedar(index: number): boolean;
  casbin(index: number): boolean;
  /** Milliseconds each engine took to prepare (compile, pre-parse, load). */
  readonly setupMs: { svc: number; cedar: number; casbin: number };
}

/** Builds the three engines for a fixture (or for a size, generating the fixture). */
export async function buildEngines(input: Fixture | number): Promise<Engines> {
  const fixture = typeof input === "number" ? generateFixture(input) : input;
  const { subject, checks } = fixture;
  let t = performance.now();
  const compiled = compileSubject(subject as SubjectSnapshot);
  const svcChecks = checks as readonly AccessCheck[];
  const svcMs = performance.now() - t;
  t = performance.now();
  const cedar = cedarEngine(subject, checks);
  const cedarMs = performance.now() - t;
  t = performance.now();
  const casbin = await casbinEngine(subject, checks);
  const casbinMs = performance.now() - t;
  return {
    fixture,
    svcDecision: (i) => evaluate(compiled, svcChecks[i]).decision,
    svcTrace: (i) => evaluate(compiled, svcChecks[i], { trace: true }).trace ?? [],
    cedarErrors: (i) => cedarDiagnostics(cedar, i),
    svc: (i) => evaluate(compiled, svcChecks[i]).decision === "Allowed",
    cedar: (i) => cedar.check(i),
    casbin: (i) => casbin.check(i),
    setupMs: { svc: svcMs, cedar: cedarMs, casbin: casbinMs },
  };
}

/** One check on which the engines disagree. */
export interface Disagreement {
  index: number;
  permission: string;
  svc: string;
  cedar: boolean;
  casbin: boolean;
}

/** Agreement of the three engines on allow versus deny over a fixture's checks. */
export interface Agreement {
  size: number;
  checks: number;
  /** Checks on which svc, Cedar and Casbin all give the same allow/deny answer. */
  agreed: number;
  svcCedar: number;
  svcCasbin: number;
  /** svc's decisions over the checks, to show the mix is realistic. */
  decisions: Record<"Allowed" | "Denied" | "DeniedByDefault", number>;
  disagreements: Disagreement[];
}

/**
 * Runs the fixture's checks (the first `limit`, all by default: Casbin takes about
 * 150 ms per check at 10,000 grants) through the three engines and compares.
 */
export function agreement(engines: Engines, limit = Infinity): Agreement {
  const { fixture } = engines;
  const count = Math.min(limit, fixture.checks.length);
  const out: Agreement = {
    size: fixture.size,
    checks: count,
    agreed: 0,
    svcCedar: 0,
    svcCasbin: 0,
    decisions: { Allowed: 0, Denied: 0, DeniedByDefault: 0 },
    disagreements: [],
  };
  for (let i = 0; i < count; i++) {
    const decision = engines.svcDecision(i);
    out.decisions[decision]++;
    const svc = decision === "Allowed";
    const cedar = engines.cedar(i);
    const casbin = engines.casbin(i);
    if (svc === cedar) out.svcCedar++;
    if (svc === casbin) out.svcCasbin++;
    if (svc === cedar && svc === casbin) out.agreed++;
    else {out.disagreements.push({
        index: i,
        permission: fixture.checks[i].permission,
        svc: decision,
        cedar,
        casbin,
      });}
  }
  return out;
}

/** One line summarizing an agreement report. */
export function formatAgreement(a: Agreement): string {
  const pct = (n: number) => `${(100 * n / a.checks).toFixed(1)}%`;
  return `${a.size} grants: ${a.agreed}/${a.checks} checks agree (${pct(a.agreed)}; svc=Cedar ${
    pct(a.svcCedar)
  }, svc=Casbin ${
    pct(a.svcCasbin)
  }); svc decisions: ${a.decisions.Allowed} Allowed, ${a.decisions.Denied} Denied, ${a.decisions.DeniedByDefault} DeniedByDefault`;
}

/** What a sample of checks exercised, from svc's traces (per-grant outcomes). */
export interface Coverage {
  checks: number;
  /** Distinct permission ids checked. */
  permissions: number;
  /** Checks decided with an applicable grant of each kind, and checks where a grant of each kind failed. */
  counts: Record<
    | "wildcardApplicable"
    | "conditionApplicable"
    | "conditionFailed"
    | "denyApplicable"
    | "conditionalDenyApplicable"
    | "teamApplicable"
    | "selfApplicable"
    | "orgPinnedApplicable"
    | "teamRestrictedApplicable"
    | "scopeNotApplicable",
    number
  >;
}

/** Counts, over the first `limit` checks, the checks that exercised each part of the mix. */
export function coverage(engines: Engines, limit = Infinity): Coverage {
  const { fixture } = engines;
  const grants = fixture.subject.grants;
  const count = Math.min(limit, fixture.checks.length);
  const counts: Coverage["counts"] = {
    wildcardApplicable: 0,
    conditionApplicable: 0,
    conditionFailed: 0,
    denyApplicable: 0,
    conditionalDenyApplicable: 0,
    teamApplicable: 0,
    selfApplicable: 0,
    orgPinnedApplicable: 0,
    teamRestrictedApplicable: 0,
    scopeNotApplicable: 0,
  };
  const permissions = new Set<string>();
  for (let i = 0; i < count; i++) {
    const check = fixture.checks[i];
    permissions.add(check.permission);
    const scope = check.permission.split(":")[1];
    const seen = new Set<keyof Coverage["counts"]>();
    engines.svcTrace(i).forEach((outcome, g) => {
      const grant = grants[g];
      if (outcome === "ConditionFailed") seen.add("conditionFailed");
      if (outcome === "ScopeNotApplicable") seen.add("scopeNotApplicable");
      if (outcome !== "Allowed" && outcome !== "Denied") return;
      if (grant.pattern.includes("*")) seen.add("wildcardApplicable");
      if (grant.condition != null) seen.add("conditionApplicable");
      if (outcome === "Denied") seen.add("denyApplicable");
      if (outcome === "Denied" && grant.condition != null) seen.add("conditionalDenyApplicable");
      if (scope === "team") seen.add("teamApplicable");
      if (scope === "self") seen.add("selfApplicable");
      if (grant.orgId != null) seen.add("orgPinnedApplicable");
      if ((grant.teamIds?.length ?? 0) > 0) seen.add("teamRestrictedApplicable");
    });
    for (const key of seen) counts[key]++;
  }
  return { checks: count, permissions: permissions.size, counts };
}
