/**
 * The benchmark compares like with like: on the generated checks, svc, Cedar and Casbin
 * (with the encodings in `bench/support/`) give the same allow/deny answer, Cedar
 * reports no evaluation error (an erroring Cedar policy is skipped, which could hide a
 * bad translation), and the sample exercises every part of the mix (wildcards,
 * conditions, denies, team and self scopes, org pins, team restrictions), per svc's
 * per-grant traces.
 */
import assert from "node:assert/strict";
import { agreement, buildEngines, coverage, formatAgreement } from "../../bench/support/engines.ts";
import { generateChecks, generateFixture, generateSubject } from "../../bench/support/fixture.ts";
import { CASBIN_MATCHER, patternRegex } from "../../bench/support/casbin.ts";
import { cedarPolicy } from "../../bench/support/cedar.ts";

/** Checks compared per size: Casbin takes tens of milliseconds per check at 10,000 grants. */
const LIMITS: Record<number, number> = { 10: 512, 100: 512, 1000: 256, 10000: 48 };

for (const [size, limit] of Object.entries(LIMITS).map(([s, l]) => [Number(s), l])) {
  Deno.test(`svc, Cedar and Casbin agree on allow/deny: ${size} grants`, async () => {
    const engines = await buildEngines(size);
    const report = agreement(engines, limit);
    const covered = coverage(engines, limit);
    console.log(formatAgreement(report));
    console.log(
      `coverage (checks): ${JSON.stringify(covered.counts)}; ${covered.permissions} distinct permissions`,
    );
    assert.deepEqual(report.disagreements, [], "disagreements");
    assert.equal(report.agreed, report.checks);
    assert.ok(report.decisions.Allowed > 0, "no check is allowed");
    assert.ok(report.decisions.Denied > 0, "no check is denied by a deny grant");
    assert.ok(report.decisions.DeniedByDefault > 0, "no check is denied by default");
    const cedarErrors: string[] = [];
    for (let i = 0; i < report.checks; i++) {
      cedarErrors.push(...engines.cedarErrors(i).map((e) => `#${i} ${e}`));
    }
    assert.deepEqual(cedarErrors, [], "Cedar evaluation errors");
    // The mix is exercised. At 10 grants some kinds have no grant at all.
    const kinds = size >= 100 ? Object.keys(covered.counts) : ["conditionApplicable", "denyApplicable"];
    for (const kind of kinds) {
      assert.ok(covered.counts[kind as keyof typeof covered.counts] > 0, `no check exercised ${kind}`);
    }
  });
}

Deno.test("svc, Cedar and Casbin agree when the effective organization is null", async () => {
  const subject = { ...generateSubject(100), orgId: null };
  const report = agreement(await buildEngines({ size: 100, subject, checks: generateChecks(subject) }));
  console.log(`null org, ${formatAgreement(report)}`);
  assert.deepEqual(report.disagreements, []);
});

Deno.test("the generator is deterministic and gives the advertised mix", () => {
  const a = generateFixture(1_000);
  const b = generateFixture(1_000);
  assert.deepEqual(a, b);
  const grants = a.subject.grants;
  const share = (p: (g: typeof grants[number]) => boolean) => grants.filter(p).length / grants.length;
  const wildcard = share((g) => g.pattern.includes("*"));
  const conditioned = share((g) => g.condition != null);
  const denies = share((g) => g.effect === "Deny");
  assert.ok(wildcard > 0.07 && wildcard < 0.13, `wildcards ${wildcard}`);
  assert.ok(conditioned > 0.11 && conditioned < 0.19, `conditions ${conditioned}`);
  assert.ok(denies > 0.07 && denies < 0.13, `denies ${denies}`);
  assert.ok(share((g) => g.pattern.split(":")[1] === "team") > 0.1, "team scope");
  assert.ok(share((g) => g.pattern.split(":")[1] === "self") > 0.1, "self scope");
  assert.ok(share((g) => g.orgId != null) > 0.05, "org-pinned grants");
  assert.ok(share((g) => (g.teamIds?.length ?? 0) > 0) > 0.03, "team-restricted grants");
  assert.equal(a.checks.length & (a.checks.length - 1), 0, "the check count is a power of two");
});

Deno.test("encodings: wildcard regexes stay in one segment; the Casbin matcher avoids ' ('", () => {
  assert.equal(patternRegex("docs:org:read"), "");
  const re = new RegExp(patternRegex("bil*:*:re*"));
  assert.ok(re.test("billing:org:read"));
  assert.ok(re.test("bil:self:re"));
  assert.ok(!re.test("bil:x:org:read"));
  assert.ok(!re.test("billing:org:list"));
  assert.ok(!CASBIN_MATCHER.includes(" ("), CASBIN_MATCHER);
  const subject = generateSubject(10);
  const policy = cedarPolicy(subject, { pattern: "*:org:list", effect: "Deny", source: "t" }, 0);
  assert.match(policy, /^@id\("g0"\)\nforbid \(principal == User::"user-1", action, resource\)/);
  assert.match(policy, /context\.svcPermission like "\*:org:list"/);
});
