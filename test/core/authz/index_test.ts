/** The grant index: buckets by concrete service and action, wildcards apart; resolution. */
import assert from "node:assert/strict";
import { compileGrant, compileSubject, parsePermissionId } from "../../../core/authz/mod.ts";
import {
  buildGrantIndex,
  compactRestricted,
  forEachCandidateBucket,
  resolveCandidates,
} from "../../../core/authz/index.ts";
import { resolvePermission } from "../../../core/authz/evaluator.ts";
import type { CompiledCondition } from "../../../core/authz/condition.ts";

const PATTERNS = [
  "docs:org:read", // 0 exact
  "docs:*:*", // 1 service entry, wild action
  "*:org:read", // 2 wild service, exact action
  "d*:*:re*", // 3 wild service, wild action
  "billing:org:read", // 4 other service
  "docs:org:write", // 5 other action
  "*:org:write", // 6 wild service, other action
  "b*:*:*", // 7 wild service not matching docs
];

Deno.test("a check only visits the buckets of its service and action", () => {
  const index = buildGrantIndex(
    PATTERNS.map((pattern) => compileGrant({ pattern, effect: "Allow", source: "" })),
  );
  assert.equal(index.size, PATTERNS.length);
  const visited: number[] = [];
  forEachCandidateBucket(index, "docs", "read", (bucket) => {
    for (const slot of [...bucket.denies, ...bucket.allows]) visited.push(slot.position);
  });
  assert.deepEqual(visited.sort(), [0, 1, 2, 3, 7]);
  const resolved = resolveCandidates(index, parsePermissionId("docs:org:read"), null);
  assert.deepEqual(resolved.positions, [0, 1, 2, 3]);
  assert.deepEqual(resolveCandidates(index, parsePermissionId("docs:team:read"), null).positions, [1, 3]);
  assert.deepEqual(resolveCandidates(index, parsePermissionId("other:global:x"), null).positions, []);
});

Deno.test("resolution splits by effect, drops grants pinned elsewhere from the fast lists", () => {
  const grants = [
    { pattern: "docs:org:read", effect: "Deny" as const, source: "" },
    { pattern: "docs:org:read", effect: "Deny" as const, orgId: "o2", source: "" },
    { pattern: "docs:*:read", effect: "Allow" as const, teamIds: ["t1"], source: "" },
    { pattern: "*:*:*", effect: "Allow" as const, orgId: "o1", source: "" },
  ].map(compileGrant);
  const resolved = resolveCandidates(buildGrantIndex(grants), parsePermissionId("docs:org:read"), "o1");
  assert.deepEqual(resolved.denies, [grants[0], grants[1]]);
  assert.deepEqual(resolved.allows, [grants[2], grants[3]]);
  assert.equal(resolved.plainDeny, true);
  assert.equal(resolved.plainAllow, true);
  assert.deepEqual(resolved.restrictedDenies, []);
  // The team-restricted Allow without a condition: one entry holding the union of such teams.
  assert.deepEqual(resolved.restrictedAllows, [{ teamIds: new Set(["t1"]), condition: null }]);
  const elsewhere = resolveCandidates(buildGrantIndex(grants), parsePermissionId("docs:org:read"), "o3");
  assert.equal(elsewhere.plainAllow, false);
  assert.equal(elsewhere.plainDeny, true);
});

Deno.test("a compiled subject memoizes resolution per permission text, bounded", () => {
  const subject = compileSubject({
    id: "u1",
    orgId: "o1",
    teamIds: [],
    attributes: {},
    grants: [{ pattern: "*:*:*", effect: "Allow", source: "" }],
  });
  const first = resolvePermission(subject, "docs:org:read");
  assert.equal(resolvePermission(subject, "docs:org:read"), first);
  for (let i = 0; i < 3000; i++) resolvePermission(subject, `s${i}:global:a`);
  assert.ok(subject.resolved.size <= 2048);
  assert.equal(resolvePermission(subject, "s2999:global:a").ordered.length, 1);
});

Deno.test("restricted grants compact: team-only grants into one union, identical conditions once (issue 29)", () => {
  const condition = { version: 1, condition: { op: "eq", attr: "context.mfa", value: true } };
  const grants = [
    { pattern: "docs:org:read", effect: "Allow" as const, teamIds: ["t1"], source: "" },
    { pattern: "docs:org:read", effect: "Allow" as const, teamIds: ["t2", "t3"], source: "" },
    { pattern: "docs:org:read", effect: "Allow" as const, condition, source: "a" },
    { pattern: "docs:org:read", effect: "Allow" as const, condition, source: "b" },
    { pattern: "docs:org:read", effect: "Allow" as const, teamIds: ["t1"], condition, source: "c" },
  ].map(compileGrant);
  const { checks: compact, plain } = compactRestricted(grants);
  assert.equal(plain, false);
  assert.equal(compact.length, 3);
  assert.deepEqual(compact[0], { teamIds: new Set(["t1", "t2", "t3"]), condition: null });
  assert.equal(compact[1], grants[2]);
  assert.equal(compact[2], grants[4]);
  // A condition on the subject alone is decided once: true makes the grant plain (or team-only),
  // false drops it; conditions on the resource or the context stay.
  const bySubject = [
    { version: 1, condition: { op: "eq", attr: "subject.level", value: 3 } },
    { version: 1, condition: { op: "eq", attr: "subject.level", value: { ref: "context.level" } } },
  ];
  const subjectGrants = [
    { pattern: "docs:org:read", effect: "Allow" as const, condition: bySubject[0], source: "" },
    { pattern: "docs:org:read", effect: "Allow" as const, condition: bySubject[1], source: "" },
  ].map(compileGrant);
  const holds = (level: number) => (c: CompiledCondition) =>
    c.evaluate({ subject: { level }, resource: {}, context: {} });
  const yes = compactRestricted(subjectGrants, holds(3));
  assert.equal(yes.plain, true);
  assert.deepEqual(yes.checks, [subjectGrants[1]]);
  const no = compactRestricted(subjectGrants, holds(2));
  assert.equal(no.plain, false);
  assert.deepEqual(no.checks, [subjectGrants[1]]);
});
