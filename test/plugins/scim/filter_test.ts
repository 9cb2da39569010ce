/**
 * The SCIM filter grammar (RFC 7644 3.4.2.2): precedence (`not` > `and` > `or`), grouping, value
 * paths, schema-qualified paths, PATCH paths, bounds, and properties: any filter tree prints to
 * text that parses back to the same tree; any text either parses or is refused with 400
 * `invalidFilter` (never another error); evaluation follows the RFC's semantics.
 */
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { ScimError } from "../../../plugins/scim/errors.ts";
import {
  type AttrPath,
  COMPARE_OPS,
  type Filter,
  formatFilter,
  matches,
  MAX_FILTER_DEPTH,
  MAX_FILTER_LENGTH,
  MAX_FILTER_NODES,
  parseFilter,
  parsePatchPath,
} from "../../../plugins/scim/filter.ts";

const path = (attr: string, sub: string | null = null, schema: string | null = null): AttrPath => ({
  schema,
  attr,
  sub,
});

const refused = (text: string, scimType = "invalidFilter") => {
  assert.throws(
    () => parseFilter(text),
    (e: unknown) => e instanceof ScimError && e.scimType === scimType,
    text,
  );
};

Deno.test("filter: comparisons, presence and literals", () => {
  assert.deepEqual(parseFilter('userName eq "bjensen"'), {
    op: "eq",
    path: path("userName"),
    value: "bjensen",
  });
  assert.deepEqual(parseFilter("title pr"), { op: "pr", path: path("title") });
  assert.deepEqual(parseFilter('name.familyName co "O\'Malley"'), {
    op: "co",
    path: path("name", "familyName"),
    value: "O'Malley",
  });
  assert.deepEqual(parseFilter("active EQ True"), { op: "eq", path: path("active"), value: true });
  assert.deepEqual(parseFilter("x.y gt -1.5e2"), { op: "gt", path: path("x", "y"), value: -150 });
  assert.deepEqual(parseFilter("manager eq null"), { op: "eq", path: path("manager"), value: null });
  assert.deepEqual(parseFilter('meta.lastModified ge "2011-05-13T04:42:34Z"'), {
    op: "ge",
    path: path("meta", "lastModified"),
    value: "2011-05-13T04:42:34Z",
  });
  assert.deepEqual(parseFilter('userName eq "a\\"b\\u00e9"'), {
    op: "eq",
    path: path("userName"),
    value: 'a"bé',
  });
  for (const op of COMPARE_OPS) assert.equal(parseFilter(`a ${op} "v"`).op, op);
});

Deno.test("filter: schema-qualified attribute paths", () => {
  assert.deepEqual(parseFilter('urn:ietf:params:scim:schemas:core:2.0:User:userName sw "J"'), {
    op: "sw",
    path: path("userName", null, "urn:ietf:params:scim:schemas:core:2.0:User"),
    value: "J",
  });
  assert.deepEqual(
    parseFilter(
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value eq "26118915-6090-4610-87e4-49d8ca9f808d"',
    ),
    {
      op: "eq",
      path: path("manager", "value", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"),
      value: "26118915-6090-4610-87e4-49d8ca9f808d",
    },
  );
});

Deno.test("filter: not binds tighter than and, and tighter than or; parentheses group", () => {
  const a = { op: "eq", path: path("a"), value: "1" } as const;
  const b = { op: "eq", path: path("b"), value: "2" } as const;
  const c = { op: "eq", path: path("c"), value: "3" } as const;
  assert.deepEqual(parseFilter('a eq "1" or b eq "2" and c eq "3"'), {
    op: "or",
    left: a,
    right: { op: "and", left: b, right: c },
  });
  assert.deepEqual(parseFilter('(a eq "1" or b eq "2") and c eq "3"'), {
    op: "and",
    left: { op: "or", left: a, right: b },
    right: c,
  });
  assert.deepEqual(parseFilter('not (a eq "1") and b eq "2"'), {
    op: "and",
    left: { op: "not", filter: a },
    right: b,
  });
  assert.deepEqual(parseFilter('a eq "1" and b eq "2" and c eq "3"'), {
    op: "and",
    left: { op: "and", left: a, right: b },
    right: c,
  });
});

Deno.test("filter: value paths (RFC 7644 examples)", () => {
  assert.deepEqual(parseFilter('emails[type eq "work" and value co "@example.com"]'), {
    op: "valuePath",
    path: path("emails"),
    filter: {
      op: "and",
      left: { op: "eq", path: path("type"), value: "work" },
      right: { op: "co", path: path("value"), value: "@example.com" },
    },
  });
  const f = parseFilter(
    'userType eq "Employee" and (emails.type eq "work") or emails[type eq "home" and value co "x"]',
  );
  assert.equal(f.op, "or");
});

Deno.test("filter: refusals are 400 invalidFilter", () => {
  for (
    const text of [
      "",
      "userName",
      "userName eq",
      'userName xx "a"',
      'userName eq "a" and',
      '(userName eq "a"',
      'userName eq "a")',
      'emails[type eq "work"',
      'emails.type[type eq "work"]',
      'userName eq "unterminated',
      "userName eq bare",
      'a.b.c eq "x"',
      'userName eq "x" ; drop table',
      'emails[type eq "a"]]',
      "not userName pr",
    ]
  ) refused(text);
});

Deno.test("filter: cost is bounded (length, depth, comparisons)", () => {
  refused(`userName eq "${"x".repeat(MAX_FILTER_LENGTH)}"`);
  const deep = "(".repeat(MAX_FILTER_DEPTH + 2) + 'a eq "1"' + ")".repeat(MAX_FILTER_DEPTH + 2);
  refused(deep);
  const nots = "not (".repeat(MAX_FILTER_DEPTH + 2) + "a pr" + ")".repeat(MAX_FILTER_DEPTH + 2);
  refused(nots);
  const wide = Array.from({ length: MAX_FILTER_NODES + 1 }, (_, i) => `a${i} pr`).join(" or ");
  refused(wide);
  const fine = Array.from({ length: MAX_FILTER_NODES }, (_, i) => `a${i} pr`).join(" or ");
  assert.equal(parseFilter(fine).op, "or");
});

Deno.test("PATCH paths: attribute, sub-attribute, value filter and filter.sub", () => {
  assert.deepEqual(parsePatchPath("active"), { path: path("active"), filter: null, subAfterFilter: null });
  assert.deepEqual(parsePatchPath("name.givenName"), {
    path: path("name", "givenName"),
    filter: null,
    subAfterFilter: null,
  });
  assert.deepEqual(parsePatchPath('emails[type eq "work"].value'), {
    path: path("emails"),
    filter: { op: "eq", path: path("type"), value: "work" },
    subAfterFilter: "value",
  });
  assert.deepEqual(parsePatchPath('members[value eq "2819c223-7f76-453a-919d-413861904646"]'), {
    path: path("members"),
    filter: { op: "eq", path: path("value"), value: "2819c223-7f76-453a-919d-413861904646" },
    subAfterFilter: null,
  });
  assert.equal(
    parsePatchPath("urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department").path.attr,
    "department",
  );
  for (const bad of ["", "emails[", 'emails[type eq "x"]value', 'emails[type eq "x"].value.x', "a b"]) {
    assert.throws(
      () => parsePatchPath(bad),
      (e: unknown) => e instanceof ScimError && e.scimType === "invalidPath",
      bad,
    );
  }
});

Deno.test("filter evaluation: RFC semantics on a resource", () => {
  const user = {
    userName: "BJensen",
    active: true,
    name: { givenName: "Barbara", familyName: "Jensen" },
    emails: [{ value: "bjensen@example.com", type: "work", primary: true }, {
      value: "babs@jensen.org",
      type: "home",
    }],
    "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": { department: "Tour Operations" },
  };
  const yes = (text: string) => assert.equal(matches(parseFilter(text), user), true, text);
  const no = (text: string) => assert.equal(matches(parseFilter(text), user), false, text);
  yes('userName eq "bjensen"');
  no('userName eq "bjensen2"');
  yes('userName sw "bj"');
  yes('userName ew "SEN"');
  yes('name.familyName co "ens"');
  yes("active eq true");
  no("active eq false");
  yes('emails[type eq "work" and value co "@example.com"]');
  no('emails[type eq "work" and value co "@jensen.org"]');
  yes('emails co "jensen.org"');
  yes('emails.type eq "home"');
  yes("title pr or emails pr");
  no("title pr");
  yes("not (title pr)");
  yes('urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "tour operations"');
  yes('userName gt "a" and userName lt "c"');
  no('userName ne "BJENSEN"');
  yes("title eq null");
});

// ---------------------------------------------------------------------------
// Properties

const attrName = fc.constantFrom(
  "userName",
  "displayName",
  "title",
  "active",
  "emails",
  "name",
  "x_y",
  "$ref",
);
const subName = fc.option(fc.constantFrom("value", "type", "givenName", "primary"), { nil: null });
const schema = fc.option(
  fc.constantFrom(
    "urn:ietf:params:scim:schemas:core:2.0:User",
    "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User",
  ),
  { nil: null },
);
const attrPath = fc.record({ schema, attr: attrName, sub: subName });
const value = fc.oneof(
  fc.string({ maxLength: 8 }).filter((s) => !s.includes("\u0000")),
  fc.integer({ min: -1000, max: 1000 }),
  fc.boolean(),
  fc.constant(null),
);
const filterTree: fc.Arbitrary<Filter> = fc.letrec<{ f: Filter }>((tie) => ({
  f: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.record({ op: fc.constantFrom(...COMPARE_OPS), path: attrPath, value }) as fc.Arbitrary<Filter>,
    fc.record({ op: fc.constant("pr" as const), path: attrPath }),
    fc.record({ op: fc.constantFrom("and" as const, "or" as const), left: tie("f"), right: tie("f") }),
    fc.record({ op: fc.constant("not" as const), filter: tie("f") }),
  ),
})).f;

/** The depth the parser counts (groups and `not`). */
function depthOf(f: Filter): number {
  switch (f.op) {
    case "and":
    case "or":
      return 1 + Math.max(depthOf(f.left), depthOf(f.right));
    case "not":
    case "valuePath":
      return 1 + depthOf(f.filter);
    default:
      return 0;
  }
}
function nodesOf(f: Filter): number {
  switch (f.op) {
    case "and":
    case "or":
      return nodesOf(f.left) + nodesOf(f.right);
    case "not":
    case "valuePath":
      return nodesOf(f.filter);
    default:
      return 1;
  }
}

Deno.test("property: a filter printed and parsed again is the same filter", () => {
  fc.assert(
    fc.property(filterTree, (tree) => {
      fc.pre(depthOf(tree) < MAX_FILTER_DEPTH && nodesOf(tree) <= MAX_FILTER_NODES);
      const text = formatFilter(tree);
      fc.pre(text.length <= MAX_FILTER_LENGTH);
      assert.deepEqual(parseFilter(text), JSON.parse(JSON.stringify(tree)));
    }),
    { numRuns: 500 },
  );
});

Deno.test("property: any text parses or is refused with invalidFilter, never another error", () => {
  const alphabet = fc.constantFrom(
    ...'abc eq ne co sw pr and or not ( ) [ ] " . : 1 - e true null urn \\ '.split(""),
    " and ",
    " or ",
    "not (",
    'userName eq "x"',
  );
  fc.assert(
    fc.property(fc.array(alphabet, { maxLength: 40 }).map((parts) => parts.join("")), (text) => {
      try {
        parseFilter(text);
      } catch (e) {
        assert.ok(e instanceof ScimError && e.scimType === "invalidFilter" && e.status === 400, String(e));
      }
    }),
    { numRuns: 2000 },
  );
});

Deno.test("property: not, and, or evaluate as boolean logic", () => {
  const resource = { userName: "ada", title: "x", active: true };
  fc.assert(
    fc.property(filterTree, (tree) => {
      const m = (f: Filter) => matches(f, resource);
      switch (tree.op) {
        case "and":
          assert.equal(m(tree), m(tree.left) && m(tree.right));
          break;
        case "or":
          assert.equal(m(tree), m(tree.left) || m(tree.right));
          break;
        case "not":
          assert.equal(m(tree), !m(tree.filter));
          break;
      }
    }),
    { numRuns: 300 },
  );
});
