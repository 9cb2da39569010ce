/** List visibility: Granted, Conditional or None, table-driven. */
import assert from "node:assert/strict";
import {
  compileSubject,
  type Grant,
  PermissionFormatError,
  type Scope,
  visibility,
} from "../../../core/authz/mod.ts";

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
const COND = { version: 1, condition: { op: "eq", attr: "resource.public", value: true } };

const TABLE: [string, Grant[], Scope, string, (string | null)?][] = [
  ["nothing", [], "global", "None"],
  ["plain allow global", [allow("docs:global:read")], "global", "Granted"],
  ["plain allow org", [allow("docs:*:*")], "org", "Granted"],
  ["org without effective org", [allow("docs:*:*")], "org", "None", null],
  ["global without effective org", [allow("docs:*:*")], "global", "Granted", null],
  ["conditioned allow", [allow("docs:org:read", { condition: COND })], "org", "Conditional"],
  ["team-restricted allow", [allow("docs:org:read", { teamIds: ["t1"] })], "org", "Conditional"],
  ["team scope", [allow("*:*:*")], "team", "Conditional"],
  ["self scope", [allow("*:*:*")], "self", "Conditional"],
  ["plain deny", [allow("*:*:*"), deny("docs:*:read")], "org", "None"],
  ["plain deny on team scope", [allow("*:*:*"), deny("docs:*:read")], "team", "Conditional"],
  ["conditioned deny", [allow("*:*:*"), deny("docs:*:read", { condition: COND })], "global", "Conditional"],
  [
    "team-restricted deny",
    [allow("*:*:*"), deny("docs:*:read", { teamIds: ["t2"] })],
    "global",
    "Conditional",
  ],
  ["deny pinned elsewhere", [allow("*:*:*"), deny("docs:*:read", { orgId: "o2" })], "global", "Granted"],
  ["allow pinned elsewhere", [allow("*:*:*", { orgId: "o2" })], "global", "None"],
  ["allow pinned here", [allow("*:*:*", { orgId: "o1" })], "org", "Granted"],
  ["deny only", [deny("docs:*:read", { condition: COND })], "global", "None"],
];

Deno.test("visibility, table-driven", () => {
  for (const [name, grants, scope, expected, orgId] of TABLE) {
    const subject = compileSubject({
      id: "u1",
      orgId: orgId === undefined ? "o1" : orgId,
      teamIds: ["t1"],
      attributes: {},
      grants,
    });
    assert.equal(visibility(subject, "docs", "read", scope), expected, name);
  }
});

Deno.test("visibility rejects invalid segments", () => {
  const subject = compileSubject({ id: "u1", orgId: "o1", teamIds: [], attributes: {}, grants: [] });
  assert.throws(() => visibility(subject, "Docs", "read", "org"), PermissionFormatError);
  assert.throws(() => visibility(subject, "docs", "*", "org"), PermissionFormatError);
  assert.throws(() => visibility(subject, "docs", "read", "realm" as Scope), PermissionFormatError);
});
