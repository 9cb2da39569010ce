/** The example host file installs the example third-party plugin, which answers through the real server. */
import { strict as assert } from "node:assert";
import { ROOT, startTestServer } from "../support/server.ts";

Deno.test("examples/host.ts serves the greeting plugin: config, table, event kind, readiness, start and stop", async () => {
  const server = await startTestServer({ SVC_GREETING_MESSAGE: "Hi" }, [
    `${ROOT}node_modules/.bin/deno`,
    "run",
    "-A",
    "examples/host.ts",
  ]);
  let stopped = false;
  try {
    const first = await fetch(`${server.url}/greeting/hello?name=Ada`);
    assert.equal(first.status, 200);
    assert.deepEqual(await first.json(), { message: "Hi, Ada!", visits: 1 });
    const second = await (await fetch(`${server.url}/greeting/hello?name=Ada`)).json();
    assert.equal(second.visits, 2);
    const bad = await fetch(`${server.url}/greeting/hello?name=${encodeURIComponent("<x>")}`);
    assert.equal(bad.status, 400);
    await bad.body?.cancel();
    const ready = await fetch(`${server.url}/readyz`);
    const body = await ready.json();
    assert.equal(ready.status, 200, JSON.stringify(body));
    assert.ok(JSON.stringify(body).includes("plugin:greeting"), JSON.stringify(body));
    await server.close();
    stopped = true;
    const out = await server.stdout;
    assert.match(out, /greeting: started with "Hi"/);
    assert.match(out, /plugins: greeting/);
    assert.match(out, /greeting: stopped/);
  } finally {
    if (!stopped) await server.close();
  }
});

Deno.test("an unknown SVC_PLUGINS name stops boot with one line", async () => {
  const child = new Deno.Command(`${ROOT}node_modules/.bin/deno`, {
    args: ["run", "-A", "cli/deno.ts", "start"],
    cwd: ROOT,
    env: { SVC_PLUGINS: "oidc-provider,nope", SVC_PORT: "0", SVC_DATA_DIR: await Deno.makeTempDir() },
    stdout: "piped",
    stderr: "piped",
  });
  const { code, stderr } = await child.output();
  assert.equal(code, 1);
  assert.match(new TextDecoder().decode(stderr), /^config: SVC_PLUGINS: "nope" is not a plugin of svc;/m);
});

Deno.test("svc help lists the plugins' settings", async () => {
  const { code, stdout } = await new Deno.Command(`${ROOT}node_modules/.bin/deno`, {
    args: ["run", "-A", "examples/host.ts", "help"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(code, 0);
  const text = new TextDecoder().decode(stdout);
  for (const name of ["SVC_PLUGINS", "SVC_OIDC_SIGN_IN_URL", "SVC_GREETING_MESSAGE"]) {
    // `  NAME (type[, bounds]; default: …)`
    assert.match(text, new RegExp(`\\n  ${name} \\([^;\\n]+; default: `), `${name} missing from svc help`);
  }
});
