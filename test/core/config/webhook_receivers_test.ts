import { strict as assert } from "node:assert";
import { ConfigError, loadConfig } from "../../../core/config/mod.ts";

Deno.test("config: SVC_WEBHOOK_ALLOW_PRIVATE_RECEIVERS defaults to public receivers only", () => {
  assert.deepEqual(loadConfig({ env: {} }).config.webhooks.allowPrivateReceivers, []);
  const { config } = loadConfig({
    env: { SVC_WEBHOOK_ALLOW_PRIVATE_RECEIVERS: "127.0.0.1, 10.0.0.0/8,hooks.internal,fd00::/8" },
  });
  assert.deepEqual(config.webhooks.allowPrivateReceivers, [
    "127.0.0.1",
    "10.0.0.0/8",
    "hooks.internal",
    "fd00::/8",
  ]);
  assert.deepEqual(
    loadConfig({
      env: {},
      fileText: JSON.stringify({ webhooks: { allowPrivateReceivers: ["127.0.0.0/8"] } }),
    })
      .config.webhooks.allowPrivateReceivers,
    ["127.0.0.0/8"],
  );
});

Deno.test("config: a bad receiver allow-list entry stops boot naming the setting", () => {
  assert.throws(
    () => loadConfig({ env: { SVC_WEBHOOK_ALLOW_PRIVATE_RECEIVERS: "10.0.0.0/99" } }),
    (error: unknown) =>
      error instanceof ConfigError &&
      /SVC_WEBHOOK_ALLOW_PRIVATE_RECEIVERS.*is not a host name, IP address or CIDR range/.test(error.message),
  );
});
