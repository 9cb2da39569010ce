/**
 * The package's entry points (deno.json `exports`): `./authz` and `./webhooks` bundle for the
 * browser without a single Node built-in, and `./authz` stays under 30 KB minified; every entry
 * point named in deno.json exists and loads.
 */
import assert from "node:assert/strict";
import { REPO_ROOT } from "./support/browser.ts";

async function minifiedBrowserBundle(entry: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "svc-entry-" });
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["bundle", "--quiet", "--platform", "browser", "--minify", "-o", `${dir}/out.js`, entry],
      cwd: REPO_ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    return await Deno.readTextFile(`${dir}/out.js`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const NODE_IMPORT =
  /(?:from\s*["']node:|import\(\s*["']node:|require\(\s*["'](?:node:)?(?:fs|path|crypto|os|worker_threads|net)["'])/;

Deno.test("entry points: ./authz bundles for the browser with no Node built-in, under 30 KB minified", async () => {
  const bundle = await minifiedBrowserBundle("authz.ts");
  assert.doesNotMatch(bundle, NODE_IMPORT);
  const bytes = new TextEncoder().encode(bundle).length;
  assert.ok(bytes < 30 * 1024, `./authz is ${bytes} bytes minified`);
});

Deno.test("entry points: ./webhooks bundles for the browser with no Node built-in", async () => {
  assert.doesNotMatch(await minifiedBrowserBundle("webhooks.ts"), NODE_IMPORT);
});

Deno.test("entry points: every export of deno.json exists and loads", async () => {
  const config = JSON.parse(await Deno.readTextFile(`${REPO_ROOT}deno.json`));
  const exports = config.exports as Record<string, string>;
  assert.deepEqual(Object.keys(exports).sort(), [".", "./authz", "./passwords", "./webhooks"]);
  for (const [name, path] of Object.entries(exports)) {
    const module = await import(new URL(path, `file://${REPO_ROOT}`).href);
    assert.ok(Object.keys(module).length > 0, `${name} exports nothing`);
  }
  const authz = await import(`${REPO_ROOT}authz.ts`);
  const subject = authz.compileSubject({
    id: "u1",
    orgId: "o1",
    teamIds: [],
    attributes: {},
    grants: [{ pattern: "docs:org:*", effect: "Allow", source: "role:editor" }],
  });
  assert.equal(
    authz.evaluate(subject, { permission: "docs:org:read", resourceOrgId: "o1" }).decision,
    "Allowed",
  );
});
