import { strict as assert } from "node:assert";
import { planDefinitions } from "../../core/definitions/declarations.ts";
import { EventHub } from "../../core/events/sink.ts";
import { eventLogPlugin } from "../../plugins/event-log.ts";
import { checkPlugins, definePlugin, PluginError } from "../../plugins/plugin.ts";

Deno.test("definePlugin and checkPlugins refuse what cannot be installed", () => {
  const cases: [string, () => unknown, RegExp][] = [
    ["bad name", () => definePlugin({ name: "Reports!" }), /a name is 1 to 64/],
    [
      "bad permission",
      () => definePlugin({ name: "r", permissions: [{ id: "r.x:org:read", description: "" }] }),
      /"r\.x:org:read"/,
    ],
    [
      "reserved service",
      () => definePlugin({ name: "r", permissions: [{ id: "svc:global:x", description: "" }] }),
      /reserved/,
    ],
    ["twice", () => checkPlugins([{ name: "r" }, { name: "r" }]), /installed twice/],
    [
      "one permission, two plugins",
      () =>
        checkPlugins([
          { name: "a", permissionNamespace: "r", permissions: [{ id: "r:org:read", description: "" }] },
          { name: "b", permissionNamespace: "r", permissions: [{ id: "r:org:read", description: "" }] },
        ]),
      /already published by plugin a/,
    ],
    [
      "a permission outside the plugin's namespace",
      () =>
        definePlugin({
          name: "r",
          permissions: [{ id: "federation:global:providers-manage", description: "" }],
        }),
      /own namespace \(r:…\)/,
    ],
    [
      "one namespace, two plugins",
      () =>
        checkPlugins([
          { name: "a", permissionNamespace: "r", permissions: [{ id: "r:org:read", description: "" }] },
          { name: "b", permissionNamespace: "r", permissions: [{ id: "r:org:write", description: "" }] },
        ]),
      /permission namespace r is already published by plugin a/,
    ],
  ];
  for (const [name, run, message] of cases) {
    assert.throws(run, (error: unknown) => {
      assert.ok(error instanceof PluginError, name);
      assert.equal(error.code, "plugin_invalid");
      assert.match(error.message, message, name);
      return true;
    });
  }
});

Deno.test("plugin permissions are published by definition sync and usable in declared grants", () => {
  const plan = planDefinitions(
    {
      permissions: [],
      roles: [{
        key: "viewer",
        displayName: "Viewer",
        grants: [{ pattern: "reports:org:read", effect: "Allow" }],
      }],
    },
    [{ id: "reports:org:read", description: "Read reports" }],
  );
  assert.ok(plan.permissions.some((p) => p.id === "reports:org:read"));
  assert.throws(
    () =>
      planDefinitions({ permissions: [{ id: "reports:org:read" }], roles: [] }, [{
        id: "reports:org:read",
        description: "",
      }]),
    /a plugin already publishes it/,
  );
});

Deno.test("eventLogPlugin writes the kept kinds as JSON lines", () => {
  const lines: string[] = [];
  const plugin = eventLogPlugin({
    write: (line) => lines.push(line),
    kinds: ["login.*", "token.refresh_reuse_detected"],
  });
  const hub = new EventHub();
  hub.subscribe(plugin.onEvent!);
  const at = Date.UTC(2026, 0, 1);
  hub.emit({ kind: "login.succeeded", occurredAt: at, userId: "u1", data: { ip: "192.0.2.1" } });
  hub.emit({ kind: "webhook.endpoint_disabled", occurredAt: at, data: {} });
  hub.emit({ kind: "token.refresh_reuse_detected", occurredAt: at, data: {} });
  assert.deepEqual(lines.map((line) => JSON.parse(line).kind), [
    "login.succeeded",
    "token.refresh_reuse_detected",
  ]);
  assert.deepEqual(JSON.parse(lines[0]), {
    kind: "login.succeeded",
    occurredAt: "2026-01-01T00:00:00.000Z",
    realmId: null,
    orgId: null,
    userId: "u1",
    data: { ip: "192.0.2.1" },
  });
});
