/**
 * Properties over random grant sets and checks (fast-check), including agreement with
 * a naive reference evaluator written plainly from the semantics page.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  type AccessCheck,
  compileSubject,
  type ConditionBags,
  evaluate,
  type Grant,
  type GrantOutcome,
  parseConditionDocument,
  type Scope,
  type SubjectSnapshot,
  visibility,
} from "../../../core/authz/mod.ts";

// ---------------------------------------------------------------------------
// The naive reference evaluator: every grant, in order, exactly as section 3 reads.

function segmentMatchesPlain(pattern: string, text: string): boolean {
  const star = pattern.indexOf("*");
  if (star === -1) return pattern === text;
  const prefix = pattern.slice(0, star), suffix = pattern.slice(star + 1);
  return text.length >= prefix.length + suffix.length && text.startsWith(prefix) && text.endsWith(suffix);
}

function patternMatchesPlain(pattern: string, permission: string): boolean {
  const [ps, pc, pa] = pattern.split(":");
  const [s, c, a] = permission.split(":");
  return segmentMatchesPlain(ps, s) && (pc === "*" || pc === c) && segmentMatchesPlain(pa, a);
}

function referenceEvaluate(
  snapshot: SubjectSnapshot,
  check: AccessCheck,
): { decision: string; trace: GrantOutcome[] } {
  const scope = check.permission.split(":")[1];
  const effectiveOrg = snapshot.orgId ?? null;
  const resourceTeams = check.resourceTeamIds ?? [];
  const resourceOrgOk = check.resourceOrgId === undefined || check.resourceOrgId === null ||
    check.resourceOrgId === effectiveOrg;
  const bags: ConditionBags = {
    subject: { id: snapshot.id, orgId: effectiveOrg, teamIds: snapshot.teamIds, ...snapshot.attributes },
    resource: {
      orgId: check.resourceOrgId ?? null,
      ownerId: check.resourceOwnerId ?? null,
      teamIds: resourceTeams,
      ...(check.resourceAttributes ?? {}),
    },
    context: check.context ?? {},
  };
  const trace: GrantOutcome[] = [];
  for (const grant of snapshot.grants) {
    if (!patternMatchesPlain(grant.pattern, check.permission)) {
      trace.push("PatternMismatch");
      continue;
    }
    const grantTeams = grant.teamIds ?? [];
    let applies = true;
    if (grant.orgId !== undefined && grant.orgId !== null && grant.orgId !== effectiveOrg) applies = false;
    if (grantTeams.length > 0 && !grantTeams.some((t) => resourceTeams.includes(t))) applies = false;
    if (scope === "org" && (effectiveOrg === null || !resourceOrgOk)) applies = false;
    if (scope === "team") {
      const teams = grantTeams.length > 0 ? grantTeams : snapshot.teamIds;
      if (!teams.some((t) => resourceTeams.includes(t)) || !resourceOrgOk) applies = false;
    }
    if (scope === "self") {
      if (check.resourceOwnerId === undefined || check.resourceOwnerId === null) applies = false;
      else if (check.resourceOwnerId !== snapshot.id || !resourceOrgOk) applies = false;
    }
    if (!applies) {
      trace.push("ScopeNotApplicable");
      continue;
    }
    if (grant.condition && !parseConditionDocument(grant.condition).evaluate(bags)) {
      trace.push("ConditionFailed");
      continue;
    }
    trace.push(grant.effect === "Deny" ? "Denied" : "Allowed");
  }
  const decision = trace.includes("Denied")
    ? "Denied"
    : trace.includes("Allowed")
    ? "Allowed"
    : "DeniedByDefault";
  return { decision, trace };
}

// ---------------------------------------------------------------------------
// Generators over a small universe, so that patterns, scopes and teams collide often.

const SERVICES = ["docs", "dash", "billing"];
const ACTIONS = ["read", "reader", "write"];
const SCOPE_LIST: Scope[] = ["global", "org", "team", "self"];
const CONDITIONS = [
  { version: 1, condition: { op: "eq", attr: "subject.dept", value: "eng" } },
  { version: 1, condition: { not: { op: "eq", attr: "context.mfa", value: true } } },
  { version: 1, condition: { op: "eq", attr: "resource.public", value: true } },
  { version: 1, condition: { op: "contains", attr: "resource.teamIds", value: "t1" } },
  {
    version: 1,
    condition: { anyOf: [{ op: "eq", attr: "resource.ownerId", value: { ref: "subject.id" } }] },
  },
];

const grantArb: fc.Arbitrary<Grant> = fc.record({
  pattern: fc.tuple(
    fc.constantFrom("docs", "d*", "*s", "*", "billing", "b*g", "dash"),
    fc.constantFrom("*", ...SCOPE_LIST),
    fc.constantFrom("read", "re*", "*r", "*", "write", "reader"),
  ).map((parts) => parts.join(":")),
  effect: fc.constantFrom("Allow" as const, "Deny" as const),
  orgId: fc.constantFrom(undefined, null, "o1", "o2"),
  teamIds: fc.constantFrom(undefined, null, [], ["t1"], ["t2", "t3"]),
  condition: fc.oneof(fc.constant(undefined), fc.constantFrom(...CONDITIONS)),
  source: fc.constantFrom("role:a", "group:b"),
}, { requiredKeys: ["pattern", "effect", "source"] });

const snapshotArb = (grants: fc.Arbitrary<Grant[]>): fc.Arbitrary<SubjectSnapshot> =>
  fc.record({
    id: fc.constant("u1"),
    orgId: fc.constantFrom("o1", null),
    teamIds: fc.subarray(["t1", "t2", "t3"]),
    attributes: fc.record({ dept: fc.constantFrom("eng", "ops") }, { requiredKeys: [] }),
    grants,
  });

const teamsArb = fc.constantFrom(undefined, null, [], ["t1"], ["t2"], ["t3", "t1"], ["t4"]);
const attributesArb = fc.record({ public: fc.boolean() }, { requiredKeys: [] });
const contextArb = fc.option(fc.record({ mfa: fc.boolean() }, { requiredKeys: [] }), { nil: undefined });

const checkArb: fc.Arbitrary<AccessCheck> = fc.record({
  permission: fc.tuple(
    fc.constantFrom(...SERVICES),
    fc.constantFrom(...SCOPE_LIST),
    fc.constantFrom(...ACTIONS),
  )
    .map((parts) => parts.join(":")),
  resourceOrgId: fc.constantFrom(undefined, null, "o1", "o2"),
  resourceOwnerId: fc.constantFrom(undefined, null, "u1", "u2"),
  resourceTeamIds: teamsArb,
  resourceAttributes: fc.option(attributesArb, { nil: undefined }),
  context: contextArb,
}, { requiredKeys: ["permission"] });

const grantsArb = fc.array(grantArb, { maxLength: 12 });
const RUNS = { numRuns: 1500 };

// ---------------------------------------------------------------------------

Deno.test("property: the indexed evaluator agrees with the naive reference (decision and trace)", () => {
  fc.assert(
    fc.property(
      snapshotArb(grantsArb),
      fc.array(checkArb, { minLength: 1, maxLength: 6 }),
      (snapshot, checks) => {
        const subject = compileSubject(snapshot);
        for (const check of checks) {
          const expected = referenceEvaluate(snapshot, check);
          assert.deepEqual(evaluate(subject, check, { trace: true }), expected);
          assert.equal(evaluate(subject, check).decision, expected.decision);
        }
      },
    ),
    RUNS,
  );
});

Deno.test("property: the trace never changes the decision", () => {
  fc.assert(
    fc.property(snapshotArb(grantsArb), checkArb, (snapshot, check) => {
      const subject = compileSubject(snapshot);
      const traced = evaluate(subject, check, { trace: true });
      assert.equal(evaluate(subject, check).decision, traced.decision);
      assert.equal(traced.trace!.length, snapshot.grants.length);
    }),
    RUNS,
  );
});

Deno.test("property: adding a Deny never turns a non-Allowed decision into Allowed", () => {
  fc.assert(
    fc.property(snapshotArb(grantsArb), grantArb, fc.nat(), checkArb, (snapshot, extra, at, check) => {
      const before = evaluate(compileSubject(snapshot), check).decision;
      const grants = [...snapshot.grants];
      grants.splice(at % (grants.length + 1), 0, { ...extra, effect: "Deny" });
      const after = evaluate(compileSubject({ ...snapshot, grants }), check).decision;
      if (before !== "Allowed") assert.notEqual(after, "Allowed");
      if (before === "Denied") assert.equal(after, "Denied");
    }),
    RUNS,
  );
});

Deno.test("property: adding an Allow never turns Denied into anything else", () => {
  fc.assert(
    fc.property(snapshotArb(grantsArb), grantArb, fc.nat(), checkArb, (snapshot, extra, at, check) => {
      const before = evaluate(compileSubject(snapshot), check).decision;
      const grants = [...snapshot.grants];
      grants.splice(at % (grants.length + 1), 0, { ...extra, effect: "Allow" });
      const after = evaluate(compileSubject({ ...snapshot, grants }), check).decision;
      if (before === "Denied") assert.equal(after, "Denied");
      if (before === "Allowed") assert.equal(after, "Allowed");
    }),
    RUNS,
  );
});

Deno.test("property: grant order never changes the decision", () => {
  fc.assert(
    fc.property(
      snapshotArb(grantsArb).chain((snapshot) =>
        fc.tuple(
          fc.constant(snapshot),
          fc.shuffledSubarray([...snapshot.grants], { minLength: snapshot.grants.length }),
        )
      ),
      checkArb,
      ([snapshot, shuffled], check) => {
        const a = evaluate(compileSubject(snapshot), check).decision;
        const b = evaluate(compileSubject({ ...snapshot, grants: shuffled }), check).decision;
        assert.equal(b, a);
      },
    ),
    RUNS,
  );
});

/** A row of the effective org: any owner, teams, attributes and context. */
const rowArb = fc.record({
  resourceOwnerId: fc.constantFrom(undefined, null, "u1", "u2"),
  resourceTeamIds: teamsArb,
  resourceAttributes: fc.option(attributesArb, { nil: undefined }),
  context: contextArb,
  orgGiven: fc.boolean(),
});

Deno.test("property: Granted visibility implies Allowed for every row of the effective org; None allows none", () => {
  fc.assert(
    fc.property(
      snapshotArb(grantsArb),
      fc.constantFrom(...SERVICES),
      fc.constantFrom(...ACTIONS),
      fc.constantFrom(...SCOPE_LIST),
      fc.array(rowArb, { minLength: 1, maxLength: 8 }),
      (snapshot, service, action, scope, rows) => {
        const subject = compileSubject(snapshot);
        const seen = visibility(subject, service, action, scope);
        for (const { orgGiven, ...row } of rows) {
          const check: AccessCheck = {
            permission: `${service}:${scope}:${action}`,
            ...row,
            resourceOrgId: orgGiven ? snapshot.orgId : undefined,
          };
          const decision = evaluate(subject, check).decision;
          if (seen === "Granted") assert.equal(decision, "Allowed", JSON.stringify(check));
          if (seen === "None") assert.notEqual(decision, "Allowed", JSON.stringify(check));
        }
      },
    ),
    RUNS,
  );
});
