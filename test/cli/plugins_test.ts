/**
 * A host runs svc's CLI with a plugin: its permission is published, its route is served
 * under svc's app, and it receives svc's events.
 */
import { strict as assert } from "node:assert";
import { runCli, type RuntimeAdapter } from "../../cli/run.ts";
import type { SvcEvent } from "../../core/events/sink.ts";
import { definePlugin } from "../../plugins/plugin.ts";

Deno.test("runCli start installs a plugin's permissions, routes and event subscriber", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "svc-plugin-" });
  const events: SvcEvent[] = [];
  const plugin = definePlugin({
    name: "reports",
    permissions: [{ id: "reports:org:read", description: "Read reports" }],
    routes: [(app) => app.get("/reports/ping", (c) => c.json({ pong: true }))],
    onEvent: (event) => void events.push(event),
  });
  let fetchHandler!: (req: Request) => Response | Promise<Response>;
  let shutdown!: () => Promise<void>;
  const printed: string[] = [];
  const listening = Promise.withResolvers<void>();
  const runtime: RuntimeAdapter = {
    name: "deno",
    env: () => ({ SVC_DATA_DIR: `${dataDir}/data`, SVC_PORT: "0" }),
    readTextFile: (path) => Deno.readTextFile(path),
    serve: (fetch) => {
      fetchHandler = fetch;
      return Promise.resolve({ port: 41_000, close: () => Promise.resolve() });
    },
    onShutdown: (handler) => shutdown = handler,
    createPasswordHasher: undefined,
    print: (line) => {
      printed.push(line);
      if (line.startsWith("svc listening")) listening.resolve();
    },
    printError: (line) => printed.push(`stderr: ${line}`),
  };
  const exit = runCli(["start"], runtime, { plugins: [plugin] });
  await Promise.race([listening.promise, exit.then(() => assert.fail(printed.join("\n")))]);
  try {
    const res = await fetchHandler(new Request("http://127.0.0.1:41000/reports/ping"));
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { pong: true });
    assert.ok(printed.some((line) => /^definitions: \d+ permissions published/.test(line)));
    // An event svc emits reaches the plugin: a refresh-token replay is one; any emitted kind will do,
    // so ask for a login with an unknown user, which records a failed login.
    await fetchHandler(
      new Request("http://127.0.0.1:41000/auth/login", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ email: "nobody@example.test", password: "wrong password" }),
      }),
    );
    for (let i = 0; i < 100 && events.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(events.length > 0, `the plugin saw svc's events\n${printed.join("\n")}`);
  } finally {
    await shutdown();
    assert.equal(await exit, 0, printed.join("\n"));
    await Deno.remove(dataDir, { recursive: true });
  }
});
