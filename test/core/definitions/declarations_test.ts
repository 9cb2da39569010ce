import { strict as assert } from "node:assert";
import {
  type DeclaredRole,
  DefinitionError,
  planDefinitions,
} from "../../../core/definitions/declarations.ts";
import { SVC_PERMISSIONS } from "../../../core/definitions/svc-permissions.ts";

const role = (pattern: string, extra: Partial<DeclaredRole["grants"][number]> = {}): DeclaredRole => ({
  key: "r",
  displayName: "R",
  grants: [{ pattern, effect: "Allow", ...extra }],
});

Deno.test("planDefinitions: svc's permissions come first, then the declared ones", () => {
  const plan = planDefinitions({
    permissions: [{ id: "docs:org:read", description: "Read documents" }, { id: "docs:org:write" }],
    roles: [role("docs:org:read"), {
      key: "w",
      displayName: "W",
      grants: [{ pattern: "docs:*:*", effect: "Allow" }],
    }],
  });
  assert.deepEqual(plan.permissions.map((p) => p.id), [
    ...SVC_PERMISSIONS.map((p) => p.id),
    "docs:org:read",
    "docs:org:write",
  ]);
  assert.equal(plan.roles.length, 2);
  assert.ok(SVC_PERMISSIONS.every((p) => p.id.startsWith("svc:")));
});

Deno.test("planDefinitions: a bad declaration stops boot with a message naming it", () => {
  const cases: [string, Parameters<typeof planDefinitions>[0], RegExp][] = [
    [
      "dotted segment",
      { permissions: [{ id: "docs.v2:org:read" }], roles: [] },
      /authz\.permissions\[0\]\.id "docs\.v2:org:read"/,
    ],
    ["uppercase", { permissions: [{ id: "Docs:org:read" }], roles: [] }, /"Docs:org:read"/],
    ["wildcard", { permissions: [{ id: "docs:org:*" }], roles: [] }, /"docs:org:\*"/],
    ["unknown scope", { permissions: [{ id: "docs:tenant:read" }], roles: [] }, /"docs:tenant:read"/],
    ["reserved service", { permissions: [{ id: "svc:global:anything" }], roles: [] }, /reserved/],
    ["declared twice", { permissions: [{ id: "a:org:b" }, { id: "a:org:b" }], roles: [] }, /declared twice/],
    [
      "unpublished id in a grant",
      { permissions: [], roles: [role("docs:org:read")] },
      /authz\.roles\[0\]\.grants\[0\]\.pattern "docs:org:read" names a permission id that is not published/,
    ],
    ["dotted grant pattern", { permissions: [], roles: [role("docs.x:org:*")] }, /"docs\.x:org:\*"/],
    ["bad condition", {
      permissions: [{ id: "a:org:b" }],
      roles: [role("a:org:b", { condition: { version: 1 } })],
    }, /authz\.roles\[0\]\.grants\[0\]\.condition/],
    [
      "duplicate role",
      { permissions: [], roles: [role("a:*:*"), role("a:*:*")] },
      /authz\.roles\[1\]\.key "r": declared twice/,
    ],
  ];
  for (const [name, declared, message] of cases) {
    assert.throws(() => planDefinitions(declared), (error: unknown) => {
      assert.ok(error instanceof DefinitionError, name);
      assert.equal(error.code, "definition_invalid");
      assert.match(error.message, message, name);
      assert.ok(!error.message.includes("\n"), `${name}: one line`);
      return true;
    });
  }
});

Deno.test("planDefinitions: a grant may name one of svc's own permissions", () => {
  const plan = planDefinitions({ permissions: [], roles: [role(SVC_PERMISSIONS[0].id)] });
  assert.equal(plan.roles[0].grants[0].pattern, SVC_PERMISSIONS[0].id);
});
