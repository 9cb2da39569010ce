/** The evaluator: default deny, deny overrides, scopes, conditions, traces; compilation. */
import assert from "node:assert/strict";
import {
  type AccessCheck,
  compileSubject,
  compileSubjectLenient,
  ConditionFormatError,
  evaluate,
  type Grant,
  type GrantOutcome,
  PermissionFormatError,
  SnapshotFormatError,
  type SubjectSnapshot,
} from "../../../core/authz/mod.ts";

const SUBJECT = { id: "u1", orgId: "o1", teamIds: ["t1"], attributes: { dept: "eng" } };
const allow = (pattern: string, extra: Partial<Grant> = {}): Grant => ({
  pattern,
  effect: "Allow",
  source: "",
  ...extra,
});
const deny = (pattern: string, extra: Partial<Grant> = {}): Grant => ({
  pattern,
  effect: "Deny",
  source: "",
  ...extra,
});
const cond = (node: unknown) => ({ version: 1, condition: node });

type Row = [string, Grant[], AccessCheck, string, GrantOutcome[], Partial<SubjectSnapshot>?];

const TABLE: Row[] = [
  ["no grants", [], { permission: "docs:global:read" }, "DeniedByDefault", []],
  ["mismatch", [allow("docs:org:read")], { permission: "docs:org:write" }, "DeniedByDefault", [
    "PatternMismatch",
  ]],
  ["allow", [allow("docs:global:read")], { permission: "docs:global:read" }, "Allowed", ["Allowed"]],
  ["deny overrides", [allow("*:*:*"), deny("docs:*:*")], { permission: "docs:global:read" }, "Denied", [
    "Allowed",
    "Denied",
  ]],
  ["org needs effective org", [allow("docs:org:read")], { permission: "docs:org:read" }, "DeniedByDefault", [
    "ScopeNotApplicable",
  ], { orgId: null }],
  [
    "org other resource org",
    [allow("docs:org:read")],
    { permission: "docs:org:read", resourceOrgId: "o2" },
    "DeniedByDefault",
    [
      "ScopeNotApplicable",
    ],
  ],
  [
    "org pinned elsewhere",
    [allow("docs:global:read", { orgId: "o2" })],
    { permission: "docs:global:read" },
    "DeniedByDefault",
    [
      "ScopeNotApplicable",
    ],
  ],
  [
    "team via subject",
    [allow("docs:team:edit")],
    { permission: "docs:team:edit", resourceTeamIds: ["t1"] },
    "Allowed",
    [
      "Allowed",
    ],
  ],
  [
    "team via grant",
    [allow("docs:team:edit", { teamIds: ["t7"] })],
    {
      permission: "docs:team:edit",
      resourceTeamIds: ["t7"],
    },
    "Allowed",
    ["Allowed"],
  ],
  [
    "team grant excludes subject team",
    [allow("docs:team:edit", { teamIds: ["t7"] })],
    {
      permission: "docs:team:edit",
      resourceTeamIds: ["t1"],
    },
    "DeniedByDefault",
    ["ScopeNotApplicable"],
  ],
  [
    "team other org",
    [allow("docs:team:edit")],
    {
      permission: "docs:team:edit",
      resourceTeamIds: ["t1"],
      resourceOrgId: "o2",
    },
    "DeniedByDefault",
    ["ScopeNotApplicable"],
  ],
  [
    "team-restricted global",
    [allow("docs:global:read", { teamIds: ["t7"] })],
    { permission: "docs:global:read" },
    "DeniedByDefault",
    [
      "ScopeNotApplicable",
    ],
  ],
  ["self", [allow("docs:self:edit")], { permission: "docs:self:edit", resourceOwnerId: "u1" }, "Allowed", [
    "Allowed",
  ]],
  [
    "self other owner",
    [allow("docs:self:edit")],
    { permission: "docs:self:edit", resourceOwnerId: "u2" },
    "DeniedByDefault",
    [
      "ScopeNotApplicable",
    ],
  ],
  [
    "condition holds",
    [allow("docs:global:read", { condition: cond({ op: "eq", attr: "subject.dept", value: "eng" }) })],
    {
      permission: "docs:global:read",
    },
    "Allowed",
    ["Allowed"],
  ],
  [
    "condition fails",
    [allow("docs:global:read", { condition: cond({ op: "eq", attr: "subject.dept", value: "ops" }) })],
    {
      permission: "docs:global:read",
    },
    "DeniedByDefault",
    ["ConditionFailed"],
  ],
  [
    "deny unless mfa",
    [
      allow("*:*:*"),
      deny("*:*:*", { condition: cond({ not: { op: "eq", attr: "context.mfa", value: true } }) }),
    ],
    {
      permission: "docs:global:read",
    },
    "Denied",
    ["Allowed", "Denied"],
  ],
  [
    "deny unless mfa, with mfa",
    [
      allow("*:*:*"),
      deny("*:*:*", { condition: cond({ not: { op: "eq", attr: "context.mfa", value: true } }) }),
    ],
    { permission: "docs:global:read", context: { mfa: true } },
    "Allowed",
    ["Allowed", "ConditionFailed"],
  ],
  [
    "resource attribute overrides a built-in key",
    [
      allow("docs:global:read", { condition: cond({ op: "eq", attr: "resource.orgId", value: "custom" }) }),
    ],
    { permission: "docs:global:read", resourceOrgId: "o1", resourceAttributes: { orgId: "custom" } },
    "Allowed",
    ["Allowed"],
  ],
  [
    "subject attribute bag",
    [
      allow("docs:global:read", {
        condition: cond({
          allOf: [{ op: "eq", attr: "subject.id", value: "u1" }, {
            op: "eq",
            attr: "subject.orgId",
            value: "o1",
          }],
        }),
      }),
    ],
    { permission: "docs:global:read" },
    "Allowed",
    ["Allowed"],
  ],
];

Deno.test("evaluate: decision and trace, table-driven", () => {
  for (const [name, grants, check, decision, trace, subjectExtra] of TABLE) {
    const subject = compileSubject({ ...SUBJECT, ...subjectExtra, grants });
    assert.deepEqual(evaluate(subject, check), { decision }, name);
    assert.deepEqual(evaluate(subject, check, { trace: true }), { decision, trace }, name);
    assert.deepEqual(evaluate(subject, check, { trace: false }), { decision }, name);
  }
});

Deno.test("evaluate rejects an invalid permission id with a format error", () => {
  const subject = compileSubject({ ...SUBJECT, grants: [allow("*:*:*")] });
  for (const permission of ["docs:org:*", "Docs:org:read", "docs:realm:read", "docs.x:org:read", "a:b"]) {
    assert.throws(() => evaluate(subject, { permission }), PermissionFormatError, permission);
  }
});

Deno.test("compileSubject throws on the first invalid grant; the lenient form skips and reports", () => {
  const grants = [
    allow("docs:org:read"),
    allow("docs:gl*:read"),
    deny("*:*:*", { condition: { version: 9 } }),
    allow("x:global:y"),
  ];
  assert.throws(() => compileSubject({ ...SUBJECT, grants }), PermissionFormatError);
  const { subject, invalid } = compileSubjectLenient({ ...SUBJECT, grants });
  assert.deepEqual(invalid.map((item) => item.index), [1, 2]);
  assert.ok(invalid[0].error instanceof PermissionFormatError);
  assert.ok(invalid[1].error instanceof ConditionFormatError);
  assert.equal(subject.grants.length, 2);
  assert.deepEqual(evaluate(subject, { permission: "x:global:y" }, { trace: true }), {
    decision: "Allowed",
    trace: ["PatternMismatch", "Allowed"],
  });
});

Deno.test("compileSubject validates the snapshot itself", () => {
  const bad: [string, unknown][] = [
    ["", null],
    ["id", { ...SUBJECT, id: 1, grants: [] }],
    ["orgId", { ...SUBJECT, orgId: 1, grants: [] }],
    ["teamIds", { ...SUBJECT, teamIds: "t1", grants: [] }],
    ["attributes", { ...SUBJECT, attributes: [], grants: [] }],
    ["grants", { ...SUBJECT, grants: {} }],
  ];
  for (const [field, snapshot] of bad) {
    assert.throws(() => compileSubject(snapshot as SubjectSnapshot), (error: unknown) => {
      assert.ok(error instanceof SnapshotFormatError);
      assert.equal(error.field, field);
      return true;
    });
  }
});

Deno.test("the compiled subject is a snapshot: later changes to the input do not leak in", () => {
  const snapshot = {
    ...SUBJECT,
    teamIds: ["t1"],
    attributes: { dept: "eng" },
    grants: [allow("docs:team:edit")],
  };
  const subject = compileSubject(snapshot);
  snapshot.teamIds.push("t2");
  snapshot.attributes.dept = "ops";
  assert.equal(
    evaluate(subject, { permission: "docs:team:edit", resourceTeamIds: ["t2"] }).decision,
    "DeniedByDefault",
  );
  assert.ok(Object.isFrozen(subject) && Object.isFrozen(subject.grants));
});

Deno.test("without a trace the result is shared and frozen", () => {
  const subject = compileSubject({ ...SUBJECT, grants: [allow("*:*:*")] });
  const a = evaluate(subject, { permission: "docs:global:read" });
  assert.equal(evaluate(subject, { permission: "docs:global:write" }), a);
  assert.ok(Object.isFrozen(a));
});
