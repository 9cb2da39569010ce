import assert from "node:assert/strict";
import fc from "fast-check";
import {
  DEFAULT_JSON_LIMITS,
  type JsonLimits,
  jsonTextBreach,
  jsonValueBreach,
} from "../../core/json-limits.ts";

/** Reference: levels of nested containers (a scalar is 0), recursively (fine for small values). */
function referenceDepth(value: unknown): number {
  if (typeof value !== "object" || value === null) return 0;
  const members = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...members.map(referenceDepth));
}

/** Reference: the most members of one object or array anywhere in the value. */
function referenceWidth(value: unknown): number {
  if (typeof value !== "object" || value === null) return 0;
  const members = Array.isArray(value) ? value : Object.values(value);
  return Math.max(members.length, ...members.map(referenceWidth));
}

function expected(value: unknown, limits: JsonLimits): "depth" | "members" | "both" | null {
  const deep = referenceDepth(value) > limits.maxDepth;
  const wide = referenceWidth(value) > limits.maxMembers;
  return deep && wide ? "both" : deep ? "depth" : wide ? "members" : null;
}

function agrees(found: { limit: "depth" | "members" } | null, want: ReturnType<typeof expected>): boolean {
  if (want === null) return found === null;
  if (found === null) return false;
  return want === "both" || found.limit === want;
}

const limitsArb = fc.record({
  maxDepth: fc.integer({ min: 1, max: 6 }),
  maxMembers: fc.integer({ min: 1, max: 6 }),
});
// Strings full of the characters the scan must skip inside strings: brackets, commas, quotes, backslashes.
const trickyString = fc.string({ unit: fc.constantFrom("[", "]", "{", "}", ",", '"', "\\", "a", ":", " ") });
const valueArb = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.oneof(
      trickyString,
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.boolean(),
      fc.constant(null),
    ),
    fc.array(tie("value"), { maxLength: 8 }),
    fc.dictionary(trickyString, tie("value"), { maxKeys: 8 }),
  ),
})).value;

Deno.test("jsonTextBreach agrees with a reference depth and width computation (property)", () => {
  fc.assert(
    fc.property(valueArb, limitsArb, fc.constantFrom(undefined, 2), (value, limits, indent) => {
      const text = JSON.stringify(value, null, indent);
      return agrees(jsonTextBreach(text, limits), expected(value, limits));
    }),
    { numRuns: 500 },
  );
  fc.assert(
    fc.property(
      fc.jsonValue(),
      limitsArb,
      (value, limits) => agrees(jsonTextBreach(JSON.stringify(value), limits), expected(value, limits)),
    ),
    { numRuns: 300 },
  );
});

Deno.test("jsonValueBreach agrees with the same reference on parsed values (property)", () => {
  fc.assert(
    fc.property(
      valueArb,
      limitsArb,
      (value, limits) => agrees(jsonValueBreach(value, limits), expected(value, limits)),
    ),
    { numRuns: 500 },
  );
});

Deno.test("JSON limits: 100,000 levels are refused without overflowing the stack; the boundary is exact", () => {
  for (const depth of [5_000, 100_000]) {
    const text = "[".repeat(depth) + "]".repeat(depth);
    assert.equal(jsonTextBreach(text, DEFAULT_JSON_LIMITS)?.limit, "depth");
    assert.equal(jsonValueBreach(JSON.parse(text), DEFAULT_JSON_LIMITS)?.limit, "depth");
    const objects = '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
    assert.equal(jsonTextBreach(objects, DEFAULT_JSON_LIMITS)?.limit, "depth");
  }
  const at = (n: number) => "[".repeat(n) + "]".repeat(n);
  assert.equal(jsonTextBreach(at(160), DEFAULT_JSON_LIMITS), null);
  assert.equal(
    jsonTextBreach(at(161), DEFAULT_JSON_LIMITS)?.message,
    "The JSON is nested more than 160 levels deep.",
  );
  const wide = (n: number) =>
    JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])));
  assert.equal(jsonTextBreach(wide(1000), DEFAULT_JSON_LIMITS), null);
  assert.equal(
    jsonTextBreach(wide(1001), DEFAULT_JSON_LIMITS)?.message,
    "A JSON object or array has more than 1000 members.",
  );
  // Brackets and escaped quotes inside strings do not count.
  assert.equal(jsonTextBreach(JSON.stringify({ s: "[".repeat(100) + '\\"[[[' }), DEFAULT_JSON_LIMITS), null);
});
