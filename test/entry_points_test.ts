/**
 * The package's entry points (deno.json `exports`): `./authz` and `./webhooks` bundle for the
 * browser without a single Node built-in, and `./authz` stays under 30 KB minified; `./server`
 * bundles for Node, runs there, and its Node adapter hashes passwords in worker threads (on Node
 * and on Deno); every entry point
 * named in deno.json exists and loads.
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
  assert.deepEqual(Object.keys(exports).sort(), [".", "./authz", "./passwords", "./server", "./webhooks"]);
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

Deno.test("entry points: ./server bundled for Node carries the CLI and adapters, and hashes off the event loop", async () => {
  // The layout `npm run build:node` uses: the worker's bundle beside the module that starts it.
  await Deno.mkdir(`${REPO_ROOT}.tmp`, { recursive: true });
  const dir = await Deno.makeTempDir({ dir: `${REPO_ROOT}.tmp`, prefix: "entry-server-" });
  try {
    const build = await new Deno.Command(`${REPO_ROOT}node_modules/.bin/esbuild`, {
      args: [
        "server.ts",
        "cli/node-password-worker.ts",
        "--bundle",
        "--platform=node",
        "--format=esm",
        "--packages=external",
        `--outdir=${dir}`,
        "--entry-names=[name]",
        "--log-level=warning",
      ],
      cwd: REPO_ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(build.success, new TextDecoder().decode(build.stderr));
    const script = `
      const server = await import(${JSON.stringify(`file://${dir}/server.js`)});
      const names = ["runCli", "createApp", "openDatabase", "createSqlStorage", "loadConfig", "definePlugin"];
      const missing = names.filter((name) => typeof server[name] !== "function");
      const hasher = server.nodeRuntime.createPasswordHasher(1);
      const params = { memoryKiB: 8192, iterations: 1, parallelism: 1 };
      const encoded = await hasher.hashArgon2id("correct horse", params, new Uint8Array(16).fill(7));
      const right = await hasher.verify("argon2id", encoded, "correct horse");
      const wrong = await hasher.verify("argon2id", encoded, "wrong horse");
      await hasher.close();
      console.log(JSON.stringify({
        missing,
        adapters: [server.denoRuntime.name, server.nodeRuntime.name, server.bunAdapter().name],
        kind: hasher.kind,
        right,
        wrong,
        inThread: server.nodeRuntime.createPasswordHasher(0, undefined, { native: false }).kind,
        pool: server.nodeRuntime.createPasswordHasher(1, undefined, { native: false }).kind,
      }));
    `;
    await Deno.writeTextFile(`${dir}/probe.mjs`, script);
    const run = await new Deno.Command("node", {
      args: [`${dir}/probe.mjs`],
      cwd: REPO_ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(run.success, new TextDecoder().decode(run.stderr));
    assert.deepEqual(JSON.parse(new TextDecoder().decode(run.stdout)), {
      missing: [],
      adapters: ["deno", "node", "bun"],
      // argon2id on the @node-rs/argon2 addon (Node 20 has no crypto.argon2); SVC_ARGON2_NATIVE=false: the pool.
      kind: "native",
      right: true,
      wrong: false,
      inThread: "in-thread",
      pool: "workers",
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("entry points: the Node adapter of ./server hashes in a worker_threads pool, off the event loop", async () => {
  const { nodeRuntime, DEFAULT_ARGON2ID_PARAMS } = await import(`${REPO_ROOT}server.ts`).then(async (m) => ({
    ...m,
    ...(await import(`${REPO_ROOT}passwords.ts`)),
  }));
  const hasher = nodeRuntime.createPasswordHasher(1, undefined, { native: false });
  try {
    assert.equal(hasher.kind, "workers");
    const params = { ...DEFAULT_ARGON2ID_PARAMS, memoryKiB: 8192, iterations: 1 };
    const encoded = await hasher.hashArgon2id("correct horse", params, new Uint8Array(16).fill(7));
    assert.equal(await hasher.verify("argon2id", encoded, "correct horse"), true);
    assert.equal(await hasher.verify("argon2id", encoded, "wrong horse"), false);
  } finally {
    await hasher.close();
  }
  assert.equal(nodeRuntime.createPasswordHasher(0, undefined, { native: false }).kind, "in-thread");
});
