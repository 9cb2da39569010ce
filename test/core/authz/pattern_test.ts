/** Permission patterns: wildcard grammar, matching and the parse/print round trip. */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  parsePermissionId,
  parsePermissionPattern,
  PermissionFormatError,
  type PermissionFormatReason,
  SCOPES,
  segmentMatches,
} from "../../../core/authz/mod.ts";

const MATCHES: [string, string, boolean][] = [
  ["docs:org:read", "docs:org:read", true],
  ["docs:org:read", "docs:org:write", false],
  ["docs:org:read", "docs:team:read", false],
  ["docs:org:read", "docs:org:reader", false],
  ["*:*:*", "billing:self:export", true],
  ["docs:*:read", "docs:global:read", true],
  ["docs:*:read", "docs:self:read", true],
  ["docs:org:*", "docs:global:delete", false],
  ["*:org:read", "invoices:org:read", true],
  ["docs:org:read*", "docs:org:read", true],
  ["docs:org:read*", "docs:org:read_all", true],
  ["docs:org:read*", "docs:org:rea", false],
  ["docs:org:*_all", "docs:org:read_all", true],
  ["docs:org:*all", "docs:org:all", true],
  ["docs:org:re*d", "docs:org:reload", true],
  ["docs:org:re*d", "docs:org:red", true],
  ["docs:org:re*d", "docs:org:reads", false],
  ["docs:org:ab*ba", "docs:org:aba", false],
  ["docs:org:ab*ba", "docs:org:abba", true],
  ["doc*:org:read", "docs:org:read", true],
  ["*-api:global:call", "billing-api:global:call", true],
  ["*-api:global:call", "billing_api:global:call", false],
  ["b*g:global:x", "billing:global:x", true],
  ["docs*:*:*", "mydocs:org:read", false],
];

Deno.test("patterns match per segment; * matches zero or more characters of one segment", () => {
  for (const [pattern, id, expected] of MATCHES) {
    const compiled = parsePermissionPattern(pattern);
    const parsed = parsePermissionId(id);
    assert.equal(compiled.matches(parsed), expected, `${pattern} vs ${id}`);
    assert.equal(compiled.matchesParts(parsed.service, parsed.scope, parsed.action), expected);
  }
});

Deno.test("compiled segments expose prefix and suffix", () => {
  const p = parsePermissionPattern("do*s:*:read");
  assert.deepEqual({ ...p.service }, { text: "do*s", wildcard: true, prefix: "do", suffix: "s" });
  assert.deepEqual({ ...p.action }, { text: "read", wildcard: false, prefix: "read", suffix: "" });
  assert.equal(p.scope, "*");
  assert.ok(Object.isFrozen(p));
  assert.ok(segmentMatches(p.service, "docs"));
  assert.ok(!segmentMatches(p.service, "dos_"));
});

const INVALID: [string, PermissionFormatReason][] = [
  ["docs:org:*re*", "two_wildcards"],
  ["**:org:read", "two_wildcards"],
  ["d*c*:org:read", "two_wildcards"],
  ["docs:gl*:read", "partial_scope_wildcard"],
  ["docs:*al:read", "partial_scope_wildcard"],
  ["docs:o*g:read", "partial_scope_wildcard"],
  ["docs:org:Read*", "uppercase"],
  ["docs:Org:read", "uppercase"],
  ["docs.*:org:read", "dotted_segment"],
  ["docs:org:read.*", "dotted_segment"],
  ["docs:tenant:read", "unknown_scope"],
  ["docs:org:", "empty_segment"],
  [":org:read", "empty_segment"],
  ["docs:*", "segment_count"],
  ["*", "segment_count"],
  ["*:*:*:*", "segment_count"],
  ["docs:org:re?d", "invalid_character"],
  ["docs:org: read", "invalid_character"],
];

Deno.test("parsePermissionPattern rejects with a typed error naming the reason", () => {
  for (const [text, reason] of INVALID) {
    assert.throws(() => parsePermissionPattern(text), (error: unknown) => {
      assert.ok(error instanceof PermissionFormatError, text);
      assert.equal(error.reason, reason, text);
      assert.match(error.message, /permission pattern/);
      return true;
    });
  }
});

const LETTERS = [..."abcdefghijklmnopqrstuvwxyz0123456789_-"];
const concrete = fc.array(fc.constantFrom(...LETTERS), { minLength: 1, maxLength: 6 }).map((a) => a.join(""));
const short = fc.array(fc.constantFrom(...LETTERS), { maxLength: 4 }).map((a) => a.join(""));
const wildSegment = fc.oneof(concrete, fc.tuple(short, short).map(([a, b]) => `${a}*${b}`));
const scopeOrStar = fc.constantFrom<string>("*", ...SCOPES);
const patternText = fc.tuple(wildSegment, scopeOrStar, wildSegment).map((parts) => parts.join(":"));

Deno.test("property: parse and print of patterns round-trip", () => {
  fc.assert(fc.property(patternText, (text) => {
    const parsed = parsePermissionPattern(text);
    assert.equal(parsed.toString(), text);
    assert.equal(`${parsed}`, text);
    const again = parsePermissionPattern(parsed.toString());
    assert.deepEqual({ ...again.service }, { ...parsed.service });
    assert.deepEqual({ ...again.action }, { ...parsed.action });
    assert.equal(again.scope, parsed.scope);
  }));
});

/** A plain regular-expression reference matcher. */
function regexMatches(pattern: string, id: string): boolean {
  const source = pattern.split(":").map((segment) =>
    segment === "*" ? "[^:]*" : segment.split("*").map((s) => s.replace(/[-]/g, "\\-")).join("[^:]*")
  ).join(":");
  return new RegExp(`^${source}$`).test(id);
}

Deno.test("property: matching agrees with a regular-expression reference", () => {
  const idText = fc.tuple(concrete, fc.constantFrom(...SCOPES), concrete).map((parts) => parts.join(":"));
  fc.assert(
    fc.property(patternText, idText, (pattern, id) => {
      assert.equal(parsePermissionPattern(pattern).matches(parsePermissionId(id)), regexMatches(pattern, id));
    }),
    { numRuns: 2000 },
  );
});

Deno.test("property: a valid id is also a valid pattern that matches itself", () => {
  const idText = fc.tuple(concrete, fc.constantFrom(...SCOPES), concrete).map((parts) => parts.join(":"));
  fc.assert(fc.property(idText, (id) => {
    assert.ok(parsePermissionPattern(id).matches(parsePermissionId(id)));
  }));
});
