import { strict as assert } from "node:assert";
import { evaluate } from "../../../core/authz/mod.ts";
import { buildSnapshot } from "../../../core/snapshots/build.ts";
import type { SubjectRows } from "../../../core/storage/subject-grants.ts";

const rows = (grants: SubjectRows["grants"]): SubjectRows => ({
  userId: "u1",
  realmId: "r1",
  status: "Active",
  attributes: { level: 3 },
  isOrgMember: true,
  teamIds: ["t1"],
  grants,
});
const grant = (pattern: string, extra: Partial<SubjectRows["grants"][number]> = {}) => ({
  pattern,
  effect: "Allow",
  orgId: null,
  teamIds: [],
  condition: null,
  source: "role:test",
  ...extra,
});

Deno.test("buildSnapshot: invalid rows are skipped and reported, valid ones still apply", () => {
  const built = buildSnapshot(
    rows([
      grant("docs:org:read"),
      grant("Docs:org:write", { source: "role:bad-pattern" }),
      grant("docs:org:share", { source: "role:bad-condition", condition: { version: 2, condition: {} } }),
      grant("docs:org:delete", { source: "role:bad-effect", effect: "Maybe" }),
    ]),
    "o1",
    42,
  );
  assert.equal(built.subject.grants.length, 1);
  assert.deepEqual(built.skipped.map((s) => [s.source, s.code]), [
    ["role:bad-pattern", "permission_format"],
    ["role:bad-condition", "condition_format"],
    ["role:bad-effect", "grant_format"],
  ]);
  assert.equal(
    evaluate(built.subject, { permission: "docs:org:read", resourceOrgId: "o1" }).decision,
    "Allowed",
  );
  assert.equal(built.builtAt, 42);
  assert.equal(built.realmId, "r1");
});

Deno.test("buildSnapshot: the org context, teams, attributes and sources reach the evaluator", () => {
  const built = buildSnapshot(
    rows([
      grant("docs:team:edit", { source: "role:editor@group:writers" }),
      grant("docs:org:read", {
        condition: { version: 1, condition: { op: "gte", attr: "subject.level", value: 3 } },
        source: "policy:senior",
      }),
    ]),
    "o1",
    0,
  );
  assert.deepEqual(built.subject.grants.map((g) => g.source), ["role:editor@group:writers", "policy:senior"]);
  assert.equal(
    evaluate(built.subject, { permission: "docs:team:edit", resourceOrgId: "o1", resourceTeamIds: ["t1"] })
      .decision,
    "Allowed",
  );
  assert.equal(
    evaluate(built.subject, { permission: "docs:team:edit", resourceOrgId: "o1", resourceTeamIds: ["t2"] })
      .decision,
    "DeniedByDefault",
  );
  assert.equal(
    evaluate(built.subject, { permission: "docs:org:read", resourceOrgId: "o1" }).decision,
    "Allowed",
  );
  assert.equal(
    evaluate(built.subject, { permission: "docs:org:read", resourceOrgId: "o2" }).decision,
    "DeniedByDefault",
  );
});
