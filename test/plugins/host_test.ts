import { strict as assert } from "node:assert";
import * as v from "valibot";
import { ConfigError, loadConfig } from "../../core/config/mod.ts";
import {
  claimMerger,
  loadPluginConfig,
  pluginEnvNames,
  pluginEventCatalog,
  selectPlugins,
  tokenGrantRegistry,
} from "../../plugins/host.ts";
import { definePlugin, PluginError, type SvcPlugin } from "../../plugins/plugin.ts";
import { greetingPlugin } from "../../examples/greeting-plugin.ts";

const builtin = definePlugin({ name: "oidc-provider" });

Deno.test("SVC_PLUGINS: built-ins are enabled by name, host plugins always run, unknown names stop boot", () => {
  const host = greetingPlugin();
  assert.deepEqual(selectPlugins([], [builtin], [host]).map((p) => p.name), ["greeting"]);
  assert.deepEqual(
    selectPlugins(["oidc-provider", "greeting"], [builtin], [host]).map((p) => p.name),
    ["greeting", "oidc-provider"],
  );
  assert.throws(
    () => selectPlugins(["oidc-provider", "federaton"], [builtin], []),
    (err) =>
      err instanceof ConfigError &&
      err.message ===
        'config: SVC_PLUGINS: "federaton" is not a plugin of svc; set SVC_PLUGINS to names among oidc-provider',
  );
  const { config } = loadConfig({ env: { SVC_PLUGINS: "oidc-provider, greeting" } });
  assert.deepEqual(config.plugins.enabled, ["oidc-provider", "greeting"]);
  assert.throws(() => loadConfig({ env: { SVC_PLUGINS: "Bad Name" } }), /SVC_PLUGINS: .*plugin name/);
});

Deno.test("a plugin's variables are accepted only when a plugin declares them", () => {
  const env = { SVC_GREETING_MESSAGE: "Hi" };
  assert.throws(() => loadConfig({ env }), /SVC_GREETING_MESSAGE: is not a setting of svc/);
  loadConfig({ env, pluginEnv: pluginEnvNames([greetingPlugin()]) });
});

Deno.test("a plugin's config section: file, then its variables, validated with one-line errors", () => {
  const plugin = greetingPlugin();
  const fileText = JSON.stringify({ plugins: { config: { greeting: { message: "From file" } } } });
  const { config } = loadConfig({ env: {}, fileText });
  assert.deepEqual(loadPluginConfig(plugin, config, {}), { message: "From file" });
  assert.deepEqual(loadPluginConfig(plugin, config, { SVC_GREETING_MESSAGE: "From env" }), {
    message: "From env",
  });
  assert.deepEqual(loadPluginConfig(plugin, loadConfig({ env: {} }).config, {}), { message: "Hello" });
  const long = "x".repeat(101);
  assert.throws(
    () => loadPluginConfig(plugin, config, { SVC_GREETING_MESSAGE: long }),
    (err) =>
      err instanceof ConfigError && !err.message.includes("\n") &&
      err.message.startsWith(`config: SVC_GREETING_MESSAGE: "${long}" is not valid (plugin greeting:`) &&
      err.message.includes("set SVC_GREETING_MESSAGE to"),
  );
  const bad = loadConfig({
    env: {},
    fileText: JSON.stringify({ plugins: { config: { greeting: { message: 3 } } } }),
  });
  assert.throws(
    () => loadPluginConfig(plugin, bad.config, {}),
    /config: plugins\.config\.greeting\.message in the config file \(or SVC_GREETING_MESSAGE\): 3 is not valid/,
  );
});

Deno.test("definePlugin: tables carry the plugin's prefix, events a family of svc or the plugin's own", () => {
  const cases: [Partial<SvcPlugin>, RegExp][] = [
    [
      { tables: ["CREATE TABLE IF NOT EXISTS visits (x int)"] },
      /visits: its name must start with my_plugin_/,
    ],
    [{ tables: ["CREATE TABLE visits (x int)"] }, /IF NOT EXISTS/],
    [{ tables: ["DROP TABLE users"] }, /CREATE TABLE\|INDEX IF NOT EXISTS/],
    [
      { tables: ["CREATE INDEX IF NOT EXISTS my_plugin_i ON users (email)"] },
      /users: its name must start with my_plugin_/,
    ],
    [{ events: [{ kind: "reports.generated", description: "" }] }, /"reports\.generated"/],
    [{ events: [{ kind: "My.kind", description: "" }] }, /"My\.kind"/],
    [{ config: { schema: v.object({}), settings: [{ env: "MY_X", key: "x", doc: "" }] } }, /MY_X/],
  ];
  for (const [part, expected] of cases) {
    assert.throws(() => definePlugin({ name: "my-plugin", ...part }), (err) => {
      assert.ok(err instanceof PluginError);
      assert.match(err.message, expected);
      return true;
    });
  }
  definePlugin({
    name: "my-plugin",
    tables: [
      "CREATE TABLE IF NOT EXISTS my_plugin_visits (x int)",
      'create unique index if not exists "my_plugin_i" on my_plugin_visits (x)',
    ],
    events: [{ kind: "my_plugin.done", description: "" }, { kind: "oidc.custom", description: "" }],
  });
});

Deno.test("plugin event kinds join the catalog once", () => {
  const catalog = pluginEventCatalog([greetingPlugin()]);
  assert.ok(
    catalog.some((entry) => entry.kind === "greeting.said" && entry.description.includes("greeting")),
  );
  assert.ok(catalog.some((entry) => entry.kind === "oidc.*"));
  assert.throws(
    () =>
      pluginEventCatalog([
        definePlugin({ name: "a", events: [{ kind: "webhook.test", description: "" }] }),
      ]),
    /webhook\.test is already in the catalog/,
  );
});

Deno.test("claim contributors: merged, reserved claims dropped, a failing contributor skipped", async () => {
  const errors: string[] = [];
  const merge = claimMerger([
    definePlugin({ name: "a", claims: () => ({ sub: "evil", iss: "evil", tenant: "t1" }) }),
    definePlugin({
      name: "b",
      claims: () => {
        throw new Error("down");
      },
    }),
    definePlugin({ name: "c", claims: (r) => ({ tenant: "t2", scopes: r.scopes.length }) }),
  ], (line) => errors.push(line));
  const claims = await merge({ token: "id", realmId: "r", subject: "s", clientId: "c", scopes: ["openid"] });
  assert.deepEqual(claims, { tenant: "t1", scopes: 1 });
  assert.deepEqual(errors, ["plugin b: claims failed: down"]);
});

Deno.test("tokenGrantRegistry: every plugin's extension grants, the first of a duplicate kept and reported", () => {
  const grant = (grantType: string, label: string) => ({
    grantType,
    handle: () => Promise.resolve(new Response(label)),
  });
  const a = definePlugin({ name: "a", tokenGrants: () => [grant("urn:example:one", "a1")] });
  const b = definePlugin({
    name: "b",
    tokenGrants: () => [grant("urn:example:one", "b1"), grant("urn:example:two", "b2")],
  });
  const registry = tokenGrantRegistry();
  assert.deepEqual(registry.list(), []);
  const errors: string[] = [];
  // deno-lint-ignore no-explicit-any
  const context = {} as any;
  registry.install([{ plugin: a, context }, { plugin: b, context }], (line) => errors.push(line));
  assert.deepEqual(registry.list().map((g) => g.grantType), ["urn:example:one", "urn:example:two"]);
  assert.equal(errors.length, 1);
  assert.match(errors[0], /plugin b: grant type urn:example:one is already served/);
});
