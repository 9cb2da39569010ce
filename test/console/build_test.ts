/**
 * The page build pipeline (`console/build.ts`):
 *
 * - every app under `console/` rebuilt from source gives exactly its committed
 *   `console/generated/<app>.ts` (a stale module fails: run `deno task build:pages`);
 * - asset names carry their content hash, and the shell references exactly its assets;
 * - the admin console's JavaScript stays within its budget of 150 KB gzipped in total.
 */
import { strict as assert } from "node:assert";
import { buildApp, discoverApps, GENERATED_DIR, moduleText } from "../../console/build.ts";
import type { EmbeddedApp } from "../../console/embedded.ts";
import { app as adminConsole } from "../../console/generated/admin.ts";

/** The console's JavaScript budget (issue 13): 150 KB gzipped, all scripts together. */
const ADMIN_JS_BUDGET_GZIP_BYTES = 150 * 1024;

async function gzipSize(text: string): Promise<number> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
  return (await new Response(stream).arrayBuffer()).byteLength;
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("every page app rebuilt from source is exactly its committed generated module", async (t) => {
  const apps = await discoverApps();
  assert.ok(apps.includes("admin"), `apps found: ${apps.join(", ")}`);
  for (const name of apps) {
    await t.step(name, async () => {
      const built = await buildApp(name);
      let committed: string;
      try {
        committed = await Deno.readTextFile(`${GENERATED_DIR}${name}.ts`);
      } catch {
        assert.fail(`console/generated/${name}.ts is missing: run \`deno task build:pages ${name}\``);
      }
      assert.ok(
        committed === moduleText(built),
        `console/generated/${name}.ts is stale: run \`deno task build:pages ${name}\` and commit it`,
      );
    });
  }
});

Deno.test("assets are named by their content hash and the shell loads exactly them", async () => {
  const app: EmbeddedApp = adminConsole;
  const names = Object.keys(app.assets);
  assert.ok(names.some((n) => n.endsWith(".js")) && names.some((n) => n.endsWith(".css")));
  for (const name of names) {
    const [, hash] = name.split(".");
    assert.equal(hash, (await sha256Hex(app.assets[name].body)).slice(0, 12), name);
    assert.ok(app.shell.includes(`"assets/${name}"`), `the shell references ${name}`);
  }
  assert.doesNotMatch(app.shell, /<script(?![^>]*\bsrc=)/, "no inline script in the shell");
  assert.doesNotMatch(app.shell, /\son[a-z]+=/i, "no inline event handler in the shell");
});

Deno.test("the admin console's JavaScript is at most 150 KB gzipped in total", async () => {
  let total = 0;
  for (const [name, asset] of Object.entries(adminConsole.assets)) {
    if (name.endsWith(".js")) total += await gzipSize(asset.body);
  }
  assert.ok(total > 0);
  assert.ok(total <= ADMIN_JS_BUDGET_GZIP_BYTES, `${total} bytes gzipped > ${ADMIN_JS_BUDGET_GZIP_BYTES}`);
});
