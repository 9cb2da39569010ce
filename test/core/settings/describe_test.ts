/**
 * `settingShape` reads a setting's type and bounds from its valibot schema: the builders of
 * `core/settings/fields.ts`, plugins' own schemas (numbers given as digits in the environment),
 * wrappers and lists.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import * as v from "valibot";
import { settingShape, shapeBounds } from "../../../core/settings/describe.ts";
import { flag, int, origins, retrySchedule, settingType } from "../../../core/settings/fields.ts";

Deno.test("settingShape: the builders' types and bounds", () => {
  assert.deepEqual(settingShape(v.optional(int(60, 86400, "seconds"), 600)), {
    type: "integer",
    min: 60,
    max: 86400,
  });
  assert.deepEqual(settingShape(v.optional(flag(), false)), { type: "boolean" });
  assert.deepEqual(settingShape(v.picklist(["a", "b"])), { type: "one of: a, b" });
  assert.deepEqual(settingShape(v.optional(origins())), {
    type: "list of origins",
    limits: "at least 1 item",
  });
  assert.deepEqual(settingShape(retrySchedule()), {
    type: "list of integers",
    limits: "each 1-604800, at most 20 items",
  });
  assert.deepEqual(
    settingShape(v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(200))), null)),
    { type: "string", limits: "1-200 characters" },
  );
  assert.deepEqual(settingShape(v.pipe(v.string(), settingType("URL"))), { type: "URL" });
  assert.equal(shapeBounds({ type: "integer", min: 0, max: 10, limits: "x" }), "0-10, x");
  assert.equal(shapeBounds({ type: "string" }), "");
});

Deno.test("settingShape: a plugin's number-or-digits field is an integer with its bounds", () => {
  const seconds = v.pipe(
    v.union([v.number(), v.pipe(v.string(), v.regex(/^\d{1,9}$/), v.transform(Number))]),
    v.integer(),
    v.minValue(10),
    v.maxValue(600),
  );
  assert.deepEqual(settingShape(v.optional(seconds, 60)), { type: "integer", min: 10, max: 600 });
});

Deno.test("property: the bounds read from int(min, max) are exactly the values it accepts", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: -1000, max: 1000 }),
      fc.integer({ min: 0, max: 1000 }),
      fc.integer({ min: -2000, max: 3000 }),
      (min, width, n) => {
        const schema = int(min, min + width);
        const shape = settingShape(schema);
        assert.equal(shape.type, "integer");
        assert.equal(v.safeParse(schema, n).success, n >= shape.min! && n <= shape.max!);
      },
    ),
  );
});
