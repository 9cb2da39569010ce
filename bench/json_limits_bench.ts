/**
 * The cost of the JSON limits on a 64 KiB request body, beside today's validation measured in
 * the same run (the baseline of each group, so the report prints the ratio; the goal is at most
 * 1.05×):
 *
 *     deno bench -A bench/json_limits_bench.ts
 *
 * - `before: parse, recursive U+0000 walk, schema`: what `parseBody` did before the limits
 *   (`JSON.parse`, the recursive `containsNul` of every value, valibot), copied here verbatim;
 * - `with limits: scan, parse, schema`: `validateJsonText`, what `parseBody` does now (the
 *   depth and width scan of the text, `JSON.parse`, the U+0000 walk only when the text escapes
 *   U+0000, valibot);
 * - `limits scan alone`: `jsonTextBreach` on the same text.
 *
 * Two bodies of 64 KiB within the default limits: `strings` (an attribute bag of 900 string
 * values, the shape of the user and grant routes) and `mixed` (30 records of 30 fields: numbers,
 * booleans, short strings and nested lists, four levels deep).
 *
 * @module
 */
import * as v from "valibot";
import { DEFAULT_JSON_LIMITS, jsonTextBreach } from "../core/json-limits.ts";
import { validateJsonText } from "../http/validate.ts";

const TARGET = 64 * 1024;

function stringsBody(): string {
  const attributes: Record<string, string> = {};
  for (let i = 0; i < 900; i++) attributes[`attribute-${i}`] = `value ${i} `.padEnd(52, "x");
  return fit(JSON.stringify({ email: "someone@example.test", attributes }));
}

function mixedBody(): string {
  const records = Array.from(
    { length: 30 },
    (_, r) =>
      Object.fromEntries(Array.from({ length: 30 }, (_, f) => {
        const value = f % 5 === 0
          ? r * 1000 + f
          : f % 5 === 1
          ? f % 2 === 0
          : f % 5 === 2
          ? `s${r}-${f}`
          : f % 5 === 3
          ? [r, f, [r + f, { k: `v${f}` }]]
          : { x: r / 7, y: [f, f * 2] };
        return [`field${f}`, value];
      })),
  );
  return fit(JSON.stringify({ email: "someone@example.test", attributes: { records } }));
}

/** Pads the body's email to exactly 64 KiB (the default body limit). */
function fit(json: string): string {
  if (json.length > TARGET) throw new Error(`body is ${json.length} characters, over ${TARGET}`);
  return json.replace("someone@", `${"s".repeat(TARGET - json.length)}someone@`);
}

const Schema = v.object({ email: v.string(), attributes: v.record(v.string(), v.unknown()) });

/** `containsNul` as it was: recursive. */
function containsNulBefore(value: unknown): boolean {
  if (typeof value === "string") return value.includes("\0");
  if (Array.isArray(value)) return value.some(containsNulBefore);
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).some(([key, item]) => key.includes("\0") || containsNulBefore(item));
  }
  return false;
}

/** The validation of `parseBody` as it was (without the Content-Type check). */
function validateBefore(text: string): unknown {
  const data = JSON.parse(text);
  if (containsNulBefore(data)) throw new Error("U+0000");
  const result = v.safeParse(Schema, data);
  if (!result.success) throw new Error("invalid");
  return result.output;
}

for (const [name, body] of [["strings", stringsBody()], ["mixed", mixedBody()]] as const) {
  if (body.length !== TARGET) throw new Error(`${name} body is not 64 KiB`);
  validateBefore(body);
  validateJsonText(body, Schema, DEFAULT_JSON_LIMITS);
  Deno.bench({
    name: `before: parse, recursive U+0000 walk, schema (${name})`,
    group: name,
    baseline: true,
    fn: () => void validateBefore(body),
  });
  Deno.bench({
    name: `with limits: scan, parse, schema (${name})`,
    group: name,
    fn: () => void validateJsonText(body, Schema, DEFAULT_JSON_LIMITS),
  });
  Deno.bench({
    name: `limits scan alone (${name})`,
    group: name,
    fn: () => void jsonTextBreach(body, DEFAULT_JSON_LIMITS),
  });
}
