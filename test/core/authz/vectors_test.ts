/** The golden-vector runner (core): the repository's files pass; malformed input is reported. */
import assert from "node:assert/strict";
import { runVectorFile, VectorFileError } from "../../../core/authz/mod.ts";

const ROOT = new URL("../../../vectors/", import.meta.url);
const MINIMUM: Record<string, number> = {
  "pattern.json": 33,
  "condition.json": 32,
  "evaluate.json": 28,
  "visibility.json": 12,
};

for (const [file, minimum] of Object.entries(MINIMUM)) {
  Deno.test(`vectors/${file}: every case passes, at least ${minimum} cases`, async () => {
    const json = JSON.parse(await Deno.readTextFile(new URL(file, ROOT)));
    assert.equal(json.kind, file.replace(".json", ""));
    const results = runVectorFile(json);
    assert.ok(results.length >= minimum, `${results.length} cases`);
    assert.deepEqual(results.filter((r) => !r.ok), []);
    assert.equal(new Set(results.map((r) => r.name)).size, results.length, "unique names");
  });
}

Deno.test("a wrong expectation fails by case name with a message", () => {
  const results = runVectorFile({
    kind: "pattern",
    version: 1,
    cases: [
      { name: "right", pattern: "docs:*:read", permission: "docs:org:read", expect: "match" },
      { name: "wrong", pattern: "docs:*:read", permission: "docs:org:write", expect: "match" },
    ],
  });
  assert.deepEqual(results.map((r) => [r.name, r.ok]), [["right", true], ["wrong", false]]);
  assert.match(results[1].message!, /expected match, got no-match/);
});

Deno.test("wrong answers of each kind are failures", () => {
  const subject = { id: "u1", orgId: "o1", teamIds: [], attributes: {} };
  const cases: [string, unknown][] = [
    ["condition", {
      name: "c",
      document: { version: 1, condition: { allOf: [] } },
      attributes: {},
      expect: false,
    }],
    ["condition", { name: "c2", document: { version: 2 }, attributes: {}, expect: true }],
    ["condition", {
      name: "c3",
      document: { version: 1, condition: { allOf: [] } },
      attributes: {},
      expect: "invalid",
    }],
    ["evaluate", {
      name: "e",
      subject,
      grants: [],
      check: { permission: "a:global:b" },
      expect: { decision: "Allowed" },
    }],
    ["evaluate", {
      name: "e2",
      subject,
      grants: [{ pattern: "*:*:*", effect: "Allow", source: "" }],
      check: { permission: "a:global:b" },
      expect: { decision: "Allowed", trace: ["Denied"] },
    }],
    ["visibility", {
      name: "v",
      subject,
      grants: [],
      query: { service: "a", action: "b", scope: "org" },
      expect: "Granted",
    }],
    ["pattern", { name: "p", pattern: "docs:gl*:read", expect: "valid-pattern" }],
    ["pattern", { name: "p2", permission: "docs:org:read", expect: "invalid-permission" }],
  ];
  for (const [kind, c] of cases) {
    const [result] = runVectorFile({ kind, version: 1, cases: [c] });
    assert.equal(result.ok, false, JSON.stringify(c));
  }
});

Deno.test("malformed cases are failed cases; malformed files throw VectorFileError", () => {
  const results = runVectorFile({
    kind: "pattern",
    version: 1,
    cases: [
      { name: "dup", pattern: "*:*:*", expect: "valid-pattern" },
      { name: "dup", pattern: "*:*:*", expect: "valid-pattern" },
      { pattern: "*:*:*", expect: "valid-pattern" },
      { name: "extra", pattern: "*:*:*", expect: "valid-pattern", note: 1 },
      { name: "both", pattern: "*:*:*", permission: "a:org:b", expect: "valid-pattern" },
      { name: "unknown-expect", pattern: "*:*:*", expect: "maybe" },
      "not an object",
    ],
  });
  assert.deepEqual(results.map((r) => r.ok), [true, false, false, false, false, false, false]);
  assert.equal(results[2].name, "#2");
  for (
    const bad of [null, [], { kind: "other", version: 1, cases: [] }, {
      kind: "pattern",
      version: 2,
      cases: [],
    }, {
      kind: "pattern",
      version: 1,
    }, { kind: "pattern", version: 1, cases: [], extra: 1 }]
  ) {
    assert.throws(() => runVectorFile(bad), VectorFileError);
  }
});
