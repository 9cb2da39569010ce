/** Condition documents (version 1): operators, missing and cross-type rules, format errors with paths. */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  CONDITION_OPERATORS,
  type ConditionBags,
  ConditionFormatError,
  parseConditionDocument,
} from "../../../core/authz/mod.ts";

const BAGS: ConditionBags = {
  subject: {
    id: "u1",
    dept: "eng",
    level: 3,
    roles: ["reader", "editor"],
    manager: null,
    flag: false,
    profile: { team: { name: "core" } },
    list: [{ a: 1 }],
  },
  resource: { sensitivity: 2, tags: ["a", "b"], meta: { a: 1, b: [1, 2] }, name: "engineering" },
  context: { mfa: true, now: "2024-05-01T00:00:00Z", n: "10" },
};

function run(node: unknown, bags: ConditionBags = BAGS): boolean {
  return parseConditionDocument({ version: 1, condition: node }).evaluate(bags);
}

const leaf = (op: string, attr: string, value?: unknown) =>
  value === undefined ? { op, attr } : { op, attr, value };

const OPERATOR_TABLE: [string, unknown, boolean][] = [
  ["eq string", leaf("eq", "subject.dept", "eng"), true],
  ["eq differs", leaf("eq", "subject.dept", "ops"), false],
  ["eq number vs string", leaf("eq", "subject.level", "3"), false],
  ["eq boolean vs string", leaf("eq", "context.mfa", "true"), false],
  ["eq null", leaf("eq", "subject.manager", null), true],
  ["eq false vs null", leaf("eq", "subject.flag", null), false],
  ["eq deep array", leaf("eq", "subject.roles", ["reader", "editor"]), true],
  ["eq array order", leaf("eq", "subject.roles", ["editor", "reader"]), false],
  ["eq deep object", leaf("eq", "resource.meta", { b: [1, 2], a: 1 }), true],
  ["eq nested cross type", leaf("eq", "resource.meta", { b: [1, "2"], a: 1 }), false],
  ["ne differs", leaf("ne", "subject.dept", "ops"), true],
  ["ne equal", leaf("ne", "subject.dept", "eng"), false],
  ["ne cross type", leaf("ne", "subject.level", "3"), false],
  ["ne null vs string", leaf("ne", "subject.manager", "x"), false],
  ["ne missing", leaf("ne", "subject.absent", "x"), false],
  ["ne nested cross type", leaf("ne", "resource.meta", { b: [1, "2"], a: 1 }), true],
  ["in present", leaf("in", "subject.dept", ["ops", "eng"]), true],
  ["in absent", leaf("in", "subject.dept", ["ops"]), false],
  ["in cross type", leaf("in", "subject.level", ["3"]), false],
  ["in non-array value", leaf("in", "subject.dept", "eng"), false],
  ["in object value", leaf("in", "subject.dept", { eng: true }), false],
  ["in deep", leaf("in", "resource.tags", [["a"], ["a", "b"]]), true],
  ["in ref", leaf("in", "subject.dept", { ref: "resource.tags" }), false],
  ["contains array", leaf("contains", "subject.roles", "editor"), true],
  ["contains array missing element", leaf("contains", "subject.roles", "admin"), false],
  ["contains deep element", leaf("contains", "subject.list", { a: 1 }), true],
  ["contains substring", leaf("contains", "resource.name", "gin"), true],
  ["contains empty substring", leaf("contains", "resource.name", ""), true],
  ["contains not substring", leaf("contains", "resource.name", "xyz"), false],
  ["contains number in string", leaf("contains", "context.n", 1), false],
  ["contains on number", leaf("contains", "subject.level", 3), false],
  ["gt", leaf("gt", "subject.level", 2), true],
  ["gt equal", leaf("gt", "subject.level", 3), false],
  ["gte equal", leaf("gte", "subject.level", 3), true],
  ["lt", leaf("lt", "subject.level", 4), true],
  ["lte equal", leaf("lte", "subject.level", 3), true],
  ["lte smaller", leaf("lte", "subject.level", 2.5), false],
  ["gt timestamps", leaf("gt", "context.now", "2024-04-30T23:59:59Z"), true],
  ["lt strings by code unit", leaf("lt", "subject.dept", "f"), true],
  ["gt numeric string vs number", leaf("gt", "context.n", 5), false],
  ["gte booleans", leaf("gte", "context.mfa", false), false],
  ["lt null", leaf("lt", "subject.manager", 1), false],
  ["gt arrays", leaf("gt", "subject.roles", ["a"]), false],
  ["gt objects", leaf("gt", "resource.meta", {}), false],
  ["gte ref", leaf("gte", "subject.level", { ref: "resource.sensitivity" }), true],
  ["lt ref", leaf("lt", "subject.level", { ref: "resource.sensitivity" }), false],
  ["exists", leaf("exists", "subject.dept"), true],
  ["exists null", leaf("exists", "subject.manager"), false],
  ["exists false", leaf("exists", "subject.flag"), true],
  ["exists missing", leaf("exists", "subject.absent"), false],
  ["exists value ignored", leaf("exists", "subject.dept", 42), true],
  ["nested path", leaf("eq", "subject.profile.team.name", "core"), true],
  ["path through array", leaf("exists", "subject.list.0"), false],
  ["path through string", leaf("eq", "subject.dept.length", 3), false],
  ["path through null", leaf("exists", "subject.manager.id"), false],
  ["missing ref eq", leaf("eq", "subject.dept", { ref: "resource.absent" }), false],
  ["missing ref ne", leaf("ne", "subject.dept", { ref: "resource.absent" }), false],
  ["missing ref in", leaf("in", "subject.dept", { ref: "resource.absent" }), false],
  ["missing gte", leaf("gte", "subject.absent", 0), false],
  ["not over missing", { not: leaf("eq", "context.absent", true) }, true],
  ["not over missing ne", { not: leaf("ne", "context.absent", true) }, true],
  ["allOf empty", { allOf: [] }, true],
  ["anyOf empty", { anyOf: [] }, false],
  ["allOf", { allOf: [leaf("eq", "subject.dept", "eng"), leaf("gt", "subject.level", 1)] }, true],
  ["allOf one false", { allOf: [leaf("eq", "subject.dept", "eng"), leaf("gt", "subject.level", 5)] }, false],
  ["anyOf", { anyOf: [leaf("eq", "subject.dept", "ops"), leaf("gt", "subject.level", 1)] }, true],
  ["anyOf none", { anyOf: [leaf("eq", "subject.dept", "ops"), leaf("gt", "subject.level", 5)] }, false],
  ["allOf single", { allOf: [leaf("eq", "subject.dept", "ops")] }, false],
  ["anyOf single", { anyOf: [leaf("eq", "subject.dept", "eng")] }, true],
];

Deno.test("every operator, combinator and resolution rule, table-driven", () => {
  for (const [name, node, expected] of OPERATOR_TABLE) assert.equal(run(node), expected, name);
  const covered = new Set(OPERATOR_TABLE.map(([, node]) => (node as { op?: string }).op).filter(Boolean));
  for (const op of CONDITION_OPERATORS) assert.ok(covered.has(op), `operator ${op} has a row`);
});

Deno.test("attribute resolution walks plain objects only, through own keys", () => {
  const bags = {
    subject: { inherited: Object.create({ x: 1 }), date: new Date(0), map: new Map([["x", 1]]) },
    resource: Object.create(null),
    context: [] as unknown,
  };
  (bags.resource as Record<string, unknown>).k = "v";
  assert.equal(run(leaf("exists", "subject.inherited.x"), bags), false);
  assert.equal(run(leaf("exists", "subject.date.getTime"), bags), false);
  assert.equal(run(leaf("exists", "subject.map.x"), bags), false);
  assert.equal(run(leaf("exists", "subject.toString"), bags), false);
  assert.equal(run(leaf("eq", "resource.k", "v"), bags), true);
  assert.equal(run(leaf("exists", "context.length"), bags), false);
  assert.equal(run(leaf("exists", "subject.x"), { subject: null, resource: 1, context: "s" }), false);
});

Deno.test("non-JSON attribute values never compare equal and never throw", () => {
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  const other: Record<string, unknown> = { a: 1 };
  other.self = other;
  const bags = { subject: { c: cyclic, d: other, f: () => 1, u: [undefined] }, resource: {}, context: {} };
  assert.equal(run(leaf("eq", "subject.c", { ref: "subject.d" }), bags), false);
  assert.equal(run(leaf("ne", "subject.c", { ref: "subject.d" }), bags), false);
  assert.equal(run(leaf("eq", "subject.f", { ref: "subject.f" }), bags), false);
  assert.equal(run(leaf("ne", "subject.f", 1), bags), false);
  assert.equal(run(leaf("eq", "subject.u", { ref: "subject.u" }), bags), false);
  assert.equal(run(leaf("gt", "subject.f", 1), bags), false);
  assert.equal(run(leaf("contains", "subject.u", null), bags), false);
});

const INVALID: [string, unknown, string][] = [
  ["not an object", [1], ""],
  ["null document", null, ""],
  ["version 2", { version: 2, condition: { allOf: [] } }, "version"],
  ["version missing", { condition: { allOf: [] } }, "version"],
  ["version string", { version: "1", condition: { allOf: [] } }, "version"],
  ["condition missing", { version: 1 }, "condition"],
  ["extra top-level key", { version: 1, condition: { allOf: [] }, note: 1 }, "note"],
  ["node null", { version: 1, condition: null }, "condition"],
  ["node string", { version: 1, condition: "x" }, "condition"],
  ["empty node", { version: 1, condition: {} }, "condition"],
  ["unknown combinator", { version: 1, condition: { oneOf: [] } }, "condition.oneOf"],
  ["two combinators", { version: 1, condition: { allOf: [], anyOf: [] } }, "condition"],
  ["allOf not a list", { version: 1, condition: { allOf: {} } }, "condition.allOf"],
  ["not with a list", { version: 1, condition: { not: [] } }, "condition.not"],
  [
    "unknown operator",
    { version: 1, condition: { op: "like", attr: "subject.a", value: 1 } },
    "condition.op",
  ],
  [
    "unknown operator deep",
    {
      version: 1,
      condition: {
        allOf: [{ allOf: [] }, { not: { anyOf: [{ op: "regex", attr: "subject.a", value: "x" }] } }],
      },
    },
    "condition.allOf[1].not.anyOf[0].op",
  ],
  ["missing attr", { version: 1, condition: { op: "eq", value: 1 } }, "condition.attr"],
  ["attr root", { version: 1, condition: { op: "eq", attr: "user.a", value: 1 } }, "condition.attr"],
  ["attr without key", { version: 1, condition: { op: "exists", attr: "subject" } }, "condition.attr"],
  ["attr empty key", { version: 1, condition: { op: "eq", attr: "subject..a", value: 1 } }, "condition.attr"],
  ["attr not string", { version: 1, condition: { op: "eq", attr: 1, value: 1 } }, "condition.attr"],
  ["missing value", { version: 1, condition: { op: "eq", attr: "subject.a" } }, "condition.value"],
  [
    "ref bad root",
    { version: 1, condition: { op: "eq", attr: "subject.a", value: { ref: "x.a" } } },
    "condition.value.ref",
  ],
  [
    "ref extra key",
    { version: 1, condition: { op: "eq", attr: "subject.a", value: { ref: "subject.b", x: 1 } } },
    "condition.value.x",
  ],
  [
    "leaf extra key",
    { version: 1, condition: { op: "eq", attr: "subject.a", value: 1, x: 2 } },
    "condition.x",
  ],
  [
    "non-JSON literal",
    { version: 1, condition: { op: "eq", attr: "subject.a", value: [1, Number.NaN] } },
    "condition.value[1]",
  ],
];

Deno.test("invalid documents raise ConditionFormatError with the path of the bad node", () => {
  for (const [name, document, path] of INVALID) {
    assert.throws(() => parseConditionDocument(document), (error: unknown) => {
      assert.ok(error instanceof ConditionFormatError, name);
      assert.equal(error.path, path, name);
      assert.equal(error.code, "condition_format");
      return true;
    }, name);
  }
});

Deno.test("the compiled document is a deep copy, independent of the input", () => {
  const input = { version: 1, condition: { allOf: [{ op: "in", attr: "subject.dept", value: ["eng"] }] } };
  const compiled = parseConditionDocument(input);
  (input.condition.allOf[0].value as string[]).push("ops");
  assert.deepEqual(compiled.document, {
    version: 1,
    condition: { allOf: [{ op: "in", attr: "subject.dept", value: ["eng"] }] },
  });
  assert.equal(compiled.evaluate({ subject: { dept: "ops" }, resource: {}, context: {} }), false);
  assert.equal(
    parseConditionDocument(compiled.document).evaluate({
      subject: { dept: "eng" },
      resource: {},
      context: {},
    }),
    true,
  );
});

Deno.test("a literal value with a __proto__ key stays a literal", () => {
  const value = JSON.parse('{"__proto__": {"x": 1}}');
  const compiled = parseConditionDocument({ version: 1, condition: { op: "eq", attr: "resource.v", value } });
  assert.equal(
    compiled.evaluate({ subject: {}, resource: { v: JSON.parse('{"__proto__": {"x": 1}}') }, context: {} }),
    true,
  );
  assert.equal(compiled.evaluate({ subject: {}, resource: { v: {} }, context: {} }), false);
});

// Property: evaluation never throws, and `not` is exact negation, on random JSON bags and leaves.
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.string({ maxLength: 3 }),
    fc.integer({ min: -3, max: 3 }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom("a", "b", "c"), tie("value"), { maxKeys: 3 }),
  ),
})).value;
const path = fc.tuple(
  fc.constantFrom("subject", "resource", "context"),
  fc.constantFrom("a", "b", "c", "a.b", "b.c"),
)
  .map(([root, keys]) => `${root}.${keys}`);
const leafArb = fc.record({
  op: fc.constantFrom(...CONDITION_OPERATORS),
  attr: path,
  value: fc.oneof(json, path.map((ref) => ({ ref }))),
});
const bag = fc.dictionary(fc.constantFrom("a", "b", "c"), json, { maxKeys: 3 });

Deno.test("property: conditions never throw and not() is exact negation", () => {
  fc.assert(
    fc.property(leafArb, bag, bag, bag, (node, subject, resource, context) => {
      const bags = { subject, resource, context };
      const value = run(node, bags);
      assert.equal(typeof value, "boolean");
      assert.equal(run({ not: node }, bags), !value);
      assert.equal(run({ allOf: [node, node] }, bags), value);
      assert.equal(run({ anyOf: [node, { not: node }] }, bags), true);
    }),
    { numRuns: 3000 },
  );
});

Deno.test("property: eq and ne are never both true; missing makes both false", () => {
  fc.assert(
    fc.property(path, fc.oneof(json, path.map((ref) => ({ ref }))), bag, bag, bag, (attr, value, s, r, c) => {
      const bags = { subject: s, resource: r, context: c };
      const eq = run({ op: "eq", attr, value }, bags);
      const ne = run({ op: "ne", attr, value }, bags);
      assert.ok(!(eq && ne));
      if (!run({ op: "exists", attr }, bags) && !run({ op: "eq", attr, value: null }, bags)) {
        assert.ok(!eq && !ne);
      }
    }),
    { numRuns: 2000 },
  );
});
