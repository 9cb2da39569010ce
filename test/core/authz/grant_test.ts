/** Grants: validation, compilation once, frozen copies. */
import assert from "node:assert/strict";
import {
  compileGrant,
  ConditionFormatError,
  type Grant,
  GrantFormatError,
  PermissionFormatError,
} from "../../../core/authz/mod.ts";

Deno.test("compileGrant compiles the pattern and condition once and freezes a copy", () => {
  const teams = ["t1"];
  const grant: Grant = {
    pattern: "docs:*:read",
    effect: "Allow",
    orgId: "o1",
    teamIds: teams,
    condition: { version: 1, condition: { op: "eq", attr: "subject.dept", value: "eng" } },
    source: "role:editor",
  };
  const compiled = compileGrant(grant);
  assert.equal(compiled.pattern.text, "docs:*:read");
  assert.equal(compiled.effect, "Allow");
  assert.equal(compiled.orgId, "o1");
  assert.deepEqual([...compiled.teamIds!], ["t1"]);
  assert.ok(compiled.condition !== null);
  assert.equal(compiled.source, "role:editor");
  assert.ok(Object.isFrozen(compiled) && Object.isFrozen(compiled.grant));
  teams.push("t2");
  assert.deepEqual(compiled.grant.teamIds, ["t1"]);
  assert.equal(compiled.teamIds!.has("t2"), false);
});

Deno.test("absent, null and empty optional fields mean no restriction", () => {
  for (const extra of [{}, { orgId: null, teamIds: null, condition: null }, { teamIds: [] }]) {
    const compiled = compileGrant({ pattern: "*:*:*", effect: "Deny", source: "s", ...extra });
    assert.equal(compiled.orgId, null);
    assert.equal(compiled.teamIds, null);
    assert.equal(compiled.condition, null);
  }
});

const INVALID: [string, unknown, new (...args: any[]) => Error, string?][] = [
  ["not an object", "docs:org:read", GrantFormatError, ""],
  ["null", null, GrantFormatError, ""],
  ["pattern not a string", { pattern: 1, effect: "Allow", source: "" }, GrantFormatError, "pattern"],
  ["bad pattern", { pattern: "docs:gl*:read", effect: "Allow", source: "" }, PermissionFormatError],
  ["bad effect", { pattern: "*:*:*", effect: "allow", source: "" }, GrantFormatError, "effect"],
  ["orgId number", { pattern: "*:*:*", effect: "Allow", orgId: 1, source: "" }, GrantFormatError, "orgId"],
  [
    "teamIds string",
    { pattern: "*:*:*", effect: "Allow", teamIds: "t1", source: "" },
    GrantFormatError,
    "teamIds",
  ],
  [
    "teamIds numbers",
    { pattern: "*:*:*", effect: "Allow", teamIds: [1], source: "" },
    GrantFormatError,
    "teamIds",
  ],
  ["source number", { pattern: "*:*:*", effect: "Allow", source: 1 }, GrantFormatError, "source"],
  [
    "bad condition",
    { pattern: "*:*:*", effect: "Allow", condition: { version: 2, condition: {} }, source: "" },
    ConditionFormatError,
  ],
];

Deno.test("compileGrant rejects invalid grants with typed errors", () => {
  for (const [name, grant, type, field] of INVALID) {
    assert.throws(() => compileGrant(grant as Grant), (error: unknown) => {
      assert.ok(error instanceof type, name);
      if (field !== undefined) assert.equal((error as GrantFormatError).field, field, name);
      return true;
    });
  }
});
