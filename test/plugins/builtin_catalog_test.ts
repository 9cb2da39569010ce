/**
 * plugins/builtin-catalog.ts, which `svc start` reads instead of loading every built-in plugin:
 * its names, order and variables are the plugins' own (`builtinPlugins()`), and each entry loads
 * the plugin it names. A plugin that gains, loses or renames a setting without the catalog
 * following fails here (a server would otherwise refuse the variable as unknown, or accept a
 * misspelt one).
 */
import assert from "node:assert/strict";
import { BUILTIN_PLUGINS, loadBuiltinPlugins } from "../../plugins/builtin-catalog.ts";
import { builtinPlugins } from "../../plugins/builtin.ts";

const envOf = (plugin: { config?: { settings?: readonly { env: string }[] } }) =>
  (plugin.config?.settings ?? []).map((setting) => setting.env);

Deno.test("builtin catalog: the names, in order, and the variables of builtinPlugins()", () => {
  const plugins = builtinPlugins();
  assert.deepEqual(BUILTIN_PLUGINS.map((entry) => entry.name), plugins.map((plugin) => plugin.name));
  for (const [i, plugin] of plugins.entries()) {
    assert.deepEqual([...BUILTIN_PLUGINS[i].env], envOf(plugin), plugin.name);
  }
});

Deno.test("builtin catalog: each entry loads the plugin it names, and only the ones asked for", async () => {
  for (const entry of BUILTIN_PLUGINS) {
    const plugin = await entry.load();
    assert.equal(plugin.name, entry.name);
    assert.deepEqual(envOf(plugin), [...entry.env]);
  }
  assert.deepEqual(
    (await loadBuiltinPlugins()).map((plugin) => plugin.name),
    BUILTIN_PLUGINS.map((e) => e.name),
  );
  assert.deepEqual((await loadBuiltinPlugins(["saml", "scim", "nope"])).map((plugin) => plugin.name), [
    "scim",
    "saml",
  ]);
  assert.deepEqual(await loadBuiltinPlugins([]), []);
});
