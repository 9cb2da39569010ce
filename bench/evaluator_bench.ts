/**
 * Evaluator throughput: checks per second on subjects of 10, 100, 1,000, 10,000 and 100,000
 * grants, each beside baselines measured in the same run.
 *
 *     deno bench -A bench/evaluator_bench.ts
 *
 * The subjects and checks come from the shared seeded generator
 * (`support/fixture.ts`: about 10% wildcard patterns, 10% denies, 15% conditions,
 * team and self scopes, org-pinned grants) and every iteration decides one check of a
 * fixed rotating set of 512 (matches, misses, denies, conditions, scope failures), so
 * `1e9 / (ns per iteration)` is checks per second on one core.
 *
 * Baselines, in one group per size:
 * - `Map.get baseline`: one `Map` lookup of the check's permission text in a map of
 *   the subject's grant patterns (the cheapest conceivable "lookup" authorization);
 * - `evaluate` (the baseline of the group), `evaluate with trace`, and `visibility`.
 *
 * The "flat" claim is read across groups: `evaluate` at 10,000 grants against 100. The
 * subject's per-permission memo is warmed before timing (steady state); the cold cost
 * is one index lookup per new permission text per compiled subject.
 *
 * @module
 */
import {
  type AccessCheck,
  type CompiledSubject,
  compileSubject,
  evaluate,
  type Scope,
  type SubjectSnapshot,
  visibility,
} from "../core/authz/mod.ts";
import { CHECK_COUNT, generateFixture, SIZES } from "./support/fixture.ts";

const MASK = CHECK_COUNT - 1;

interface Prepared {
  size: number;
  subject: CompiledSubject;
  checks: AccessCheck[];
  patterns: Map<string, number>;
  queries: [string, string, Scope][];
}

function prepare(size: number): Prepared {
  const fixture = generateFixture(size);
  const subject = compileSubject(fixture.subject as SubjectSnapshot);
  const checks = fixture.checks as AccessCheck[];
  const patterns = new Map<string, number>();
  fixture.subject.grants.forEach((grant, i) => patterns.set(grant.pattern, i));
  const queries = checks.map((check): [string, string, Scope] => {
    const [service, scope, action] = check.permission.split(":");
    return [service, action, scope as Scope];
  });
  // Steady state: each subject resolves a permission text once (memoized), so resolve
  // the 512 texts before timing rather than charging them to the first iterations.
  for (const check of checks) evaluate(subject, check);
  return { size, subject, checks, patterns, queries };
}

let sink = 0;

// The table sizes, plus a 100,000-grant point (issue 29; svc only: the peers of `authz_table.ts`
// would take hours there).
for (const size of [...SIZES, 100_000]) {
  const p = prepare(size);
  const group = `${size.toLocaleString("en-US")} grants`;
  let i = 0, j = 0, k = 0, m = 0;
  Deno.bench({
    name: `Map.get baseline (${size})`,
    group,
    fn() {
      if (p.patterns.get(p.checks[i++ & MASK].permission) !== undefined) sink++;
    },
  });
  Deno.bench({
    name: `evaluate (${size})`,
    group,
    baseline: true,
    fn() {
      if (evaluate(p.subject, p.checks[j++ & MASK]).decision === "Allowed") sink++;
    },
  });
  Deno.bench({
    name: `evaluate with trace (${size})`,
    group,
    fn() {
      if (evaluate(p.subject, p.checks[k++ & MASK], { trace: true }).decision === "Allowed") sink++;
    },
  });
  Deno.bench({
    name: `visibility (${size})`,
    group,
    fn() {
      const [service, action, scope] = p.queries[m++ & MASK];
      if (visibility(p.subject, service, action, scope) === "Granted") sink++;
    },
  });
}

globalThis.addEventListener("unload", () => {
  if (sink < 0) console.log(sink); // keeps the results observable
});
