/** The grant index: buckets by concrete service and action, wildcards apart; resolution. */
import assert from "node:assert/strict";
import { compileGrant, compileSubject, parsePermissionId } from "../../../core/authz/mod.ts";
import { buildGrantIndex, forEachCandidateBucket, resolveCandidates } from "../../../core/authz/index.ts";
import { resolvePermission } from "../../../core/authz/evaluator.ts";

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
  assert.deepEqual(resolved.restrictedAllows, [grants[2]]);
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
