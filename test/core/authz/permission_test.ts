/** Permission ids: the grammar of section 1 of the semantics page, table-driven. */
import assert from "node:assert/strict";
import {
  isScope,
  parsePermissionId,
  parsePermissionIdCached,
  PermissionFormatError,
  type PermissionFormatReason,
  SCOPES,
} from "../../../core/authz/mod.ts";

const VALID: [string, string, string, string][] = [
  ["docs:org:read", "docs", "org", "read"],
  ["docs:global:read", "docs", "global", "read"],
  ["docs:team:share", "docs", "team", "share"],
  ["profile:self:update", "profile", "self", "update"],
  ["a_b-1:self:x-y_z", "a_b-1", "self", "x-y_z"],
  ["0:global:9", "0", "global", "9"],
];

Deno.test("parsePermissionId accepts concrete ids and splits them", () => {
  for (const [text, service, scope, action] of VALID) {
    const id = parsePermissionId(text);
    assert.deepEqual({ ...id }, { text, service, scope, action }, text);
    assert.ok(Object.isFrozen(id));
  }
});

const INVALID: [string, PermissionFormatReason][] = [
  ["docs:org:*", "wildcard_in_id"],
  ["*:org:read", "wildcard_in_id"],
  ["docs:*:read", "wildcard_in_id"],
  ["docs:org:read*", "wildcard_in_id"],
  ["Docs:org:read", "uppercase"],
  ["docs:ORG:read", "uppercase"],
  ["docs:org:reaD", "uppercase"],
  ["docs.files:org:read", "dotted_segment"],
  ["docs:org:read.", "dotted_segment"],
  ["docs:org:files.read", "dotted_segment"],
  ["docs::read", "empty_segment"],
  [":org:read", "empty_segment"],
  ["docs:org:", "empty_segment"],
  ["", "segment_count"],
  ["docs", "segment_count"],
  ["docs:read", "segment_count"],
  ["docs:org:read:extra", "segment_count"],
  ["docs:realm:read", "unknown_scope"],
  ["docs:orgs:read", "unknown_scope"],
  ["docs:org:re ad", "invalid_character"],
  ["docs/v2:org:read", "invalid_character"],
  ["d\u00f6cs:org:read", "invalid_character"],
];

Deno.test("parsePermissionId rejects with a typed error naming the reason", () => {
  for (const [text, reason] of INVALID) {
    assert.throws(() => parsePermissionId(text), (error: unknown) => {
      assert.ok(error instanceof PermissionFormatError, text);
      assert.equal(error.reason, reason, text);
      assert.equal(error.code, "permission_format");
      assert.equal(error.text, text);
      assert.equal((error.details as Record<string, unknown>).reason, reason);
      return true;
    });
  }
});

Deno.test("parsePermissionId rejects non-strings", () => {
  for (const value of [null, undefined, 1, {}, ["docs", "org", "read"]]) {
    assert.throws(() => parsePermissionId(value as unknown as string), PermissionFormatError);
  }
});

Deno.test("parsePermissionIdCached returns the same parse and still rejects invalid ids", () => {
  const a = parsePermissionIdCached("docs:org:read");
  assert.equal(parsePermissionIdCached("docs:org:read"), a);
  assert.deepEqual(a, parsePermissionId("docs:org:read"));
  for (let i = 0; i < 2; i++) {
    assert.throws(() => parsePermissionIdCached("docs:org:*"), PermissionFormatError);
  }
  for (let i = 0; i < 5000; i++) parsePermissionIdCached(`s${i}:global:a`); // eviction keeps working
  assert.equal(parsePermissionIdCached("s4999:global:a").service, "s4999");
});

Deno.test("SCOPES and isScope", () => {
  assert.deepEqual([...SCOPES], ["global", "org", "team", "self"]);
  for (const scope of SCOPES) assert.ok(isScope(scope));
  for (const value of ["*", "Org", "realm", "", null, 1]) assert.ok(!isScope(value));
});
