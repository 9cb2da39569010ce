/**
 * What `svc start` loads before it serves (issue 29, memory): the modules a server needs only for
 * a feature it may never use are imported when the feature is first used, not with the server.
 * Read from Deno's module graph of `cli/deno.ts` (`deno info --json`): following only static
 * value imports (no `import type`, no `import()`), none of these packages is reached, nor any
 * built-in plugin's module. A static import of one of them anywhere on the start path fails this
 * test. The same holds for the bundles `npm start` and `npm run start:node` run (`dist/deno/cli/deno.js`,
 * `dist/node/cli/node.js`, `cli/bundle.ts`), read from their build's metafile: each `import()` stays
 * a chunk of its own, and each package is either carried by the bundle or imported, never both.
 */
import assert from "node:assert/strict";
import { isBuiltin } from "node:module";
import { buildDenoBundle, buildNodeBundle, ROOT, RUNTIMES } from "../support/server.ts";
import { BUILTIN_PLUGINS } from "../../plugins/builtin-catalog.ts";
import { BUNDLE_EXTERNAL } from "../../cli/bundle.ts";

/** Packages loaded on first use, with what loads them. */
const LOADED_ON_USE: Record<string, string> = {
  "@simplewebauthn/server": "core/passkeys/service.ts, on the first passkey ceremony",
  "nodemailer": "cli/mail-relay.ts, on the first SMTP delivery",
  "@electric-sql/pglite": "storage/open.ts, when an embedded database opens",
  "postgres": "storage/open.ts, when a Postgres database opens",
  "kysely-postgres-js": "storage/open.ts, when a Postgres database opens",
  "xml-crypto": "plugins/builtin-catalog.ts, when SVC_PLUGINS enables saml",
  "@xmldom/xmldom": "plugins/builtin-catalog.ts, when SVC_PLUGINS enables saml",
  "@peculiar/asn1-schema": "plugins/builtin-catalog.ts, when SVC_PLUGINS enables saml",
  "hash-wasm":
    "core/passwords/bcrypt.ts and argon2id-hash-wasm.ts, on the first bcrypt check or WebAssembly argon2id fallback",
};

interface GraphDependency {
  code?: { specifier: string };
  isDynamic?: boolean;
}

/** The module graph of `entry` and the modules its static value imports reach. */
async function staticGraph(entry: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const graph = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    roots: string[];
    modules: { specifier: string; dependencies?: GraphDependency[] }[];
  };
  const byUrl = new Map(graph.modules.map((m) => [m.specifier, m]));
  const reached = new Set<string>();
  const pending = [...graph.roots];
  while (pending.length > 0) {
    const url = pending.pop()!;
    if (reached.has(url)) continue;
    reached.add(url);
    for (const dependency of byUrl.get(url)?.dependencies ?? []) {
      if (dependency.code && !dependency.isDynamic) pending.push(dependency.code.specifier);
    }
  }
  return { graph, byUrl, reached };
}

/** Asserts that none of {@link LOADED_ON_USE} is among the `reached` modules. */
function assertNotAtStart(reached: Set<string>): void {
  const packages = [...reached].filter((url) => url.includes("/node_modules/"));
  assert.ok(packages.some((url) => url.includes("/node_modules/hono/")), "the walk reaches the packages");
  for (const [name, where] of Object.entries(LOADED_ON_USE)) {
    const found = packages.filter((url) => url.includes(`/node_modules/${name}/`));
    assert.deepEqual(found, [], `${name} is loaded at start; it belongs to ${where}`);
  }
}

Deno.test("svc start: the packages loaded on first use are not static imports of cli/deno.ts's graph", async () => {
  const { graph, byUrl, reached } = await staticGraph("cli/deno.ts");
  assertNotAtStart(reached);
  // The built-in plugins' modules load when SVC_PLUGINS enables them (plugins/builtin-catalog.ts).
  for (const { name } of BUILTIN_PLUGINS) {
    const module = new URL(`plugins/${name}/mod.ts`, `file://${ROOT}`).href;
    assert.ok(!reached.has(module), `plugins/${name}/mod.ts is loaded at start`);
    assert.ok(byUrl.has(module), `plugins/${name}/mod.ts is still part of the graph`);
  }
  // The outbound guard's pinning connector (node:http, node:https) loads with the first outbound request.
  const pinned = new URL("cli/pinned-fetch.ts", `file://${ROOT}`).href;
  assert.ok(
    !reached.has(pinned) && byUrl.has(pinned),
    "cli/pinned-fetch.ts is loaded at start, or not at all",
  );
  // The dynamic imports are in the graph (a compiled binary includes them).
  for (const name of Object.keys(LOADED_ON_USE)) {
    assert.ok(
      graph.modules.some((m) => m.specifier.includes(`/node_modules/${name}/`)),
      `${name} is still part of the graph`,
    );
  }
});

/** esbuild's metafile of a bundle (`meta.json` in its folder): the parts read here. */
interface Metafile {
  outputs: Record<string, {
    imports: { path: string; kind: string; external?: boolean }[];
    inputs: Record<string, unknown>;
  }>;
}

/** The package a module path of `node_modules` belongs to, or an import specifier names. */
function packageOf(path: string): string {
  const name = path.includes("node_modules/") ? path.slice(path.lastIndexOf("node_modules/") + 13) : path;
  const parts = name.split("/");
  return name.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** Whether BUNDLE_EXTERNAL names the package: an entry, `name/*` (its subpaths) or `@scope/*`. */
function declaredExternal(name: string): boolean {
  return Object.keys(BUNDLE_EXTERNAL).some((pattern) =>
    pattern === name ||
    (pattern.endsWith("/*") && (name === pattern.slice(0, -2) || name.startsWith(pattern.slice(0, -1))))
  );
}

/** Whether an external import is one of the runtime's own modules (`node:net`, or `net` as postgres.js writes it). */
function builtin(specifier: string): boolean {
  return specifier.startsWith("node:") || isBuiltin(specifier);
}

/** Reads a bundle's metafile and walks its outputs from `entry` along static imports. */
async function bundleGraph(dir: string, entry: string) {
  const meta = JSON.parse(await Deno.readTextFile(`${ROOT}${dir}/meta.json`)) as Metafile;
  const reached = new Set<string>();
  const pending = [`${dir}/${entry}`];
  while (pending.length > 0) {
    const output = pending.pop()!;
    if (reached.has(output)) continue;
    reached.add(output);
    for (const imported of meta.outputs[output]?.imports ?? []) {
      if (!imported.external && imported.kind === "import-statement") pending.push(imported.path);
    }
  }
  // The packages of `outputs`: those carried in them, and those they import (statically only, with `statically`).
  const packagesIn = (outputs: string[], statically: boolean) => {
    const carried = new Set<string>();
    const imported = new Set<string>();
    for (const output of outputs) {
      for (const input of Object.keys(meta.outputs[output].inputs)) {
        if (input.includes("node_modules/")) carried.add(packageOf(input));
      }
      for (const dependency of meta.outputs[output].imports) {
        if (!dependency.external || builtin(dependency.path)) continue;
        if (!statically || dependency.kind === "import-statement") imported.add(packageOf(dependency.path));
      }
    }
    return { carried, imported, both: new Set([...carried, ...imported]) };
  };
  const all = Object.keys(meta.outputs).filter((output) => output.endsWith(".js"));
  return { reached, all, atStart: packagesIn([...reached], true).both, anywhere: packagesIn(all, false) };
}

/** The two bundles: the npm script that runs each, its folder, its entry and its build. */
const BUNDLES = [
  ["npm start", "dist/deno", "cli/deno.js", buildDenoBundle],
  ["npm run start:node", "dist/node", "cli/node.js", buildNodeBundle],
] as const;

for (const [name, dir, entry, build] of BUNDLES) {
  Deno.test(`${name}: in the bundle too, the packages and plugins loaded on first use are chunks loaded on use`, async () => {
    await build();
    const { reached, all, atStart, anywhere } = await bundleGraph(dir, entry);
    assert.ok(atStart.has("valibot") && atStart.has("kysely"), "the walk reaches the packages");
    for (const [pkg, where] of Object.entries(LOADED_ON_USE)) {
      assert.ok(!atStart.has(pkg), `${pkg} is loaded at start; it belongs to ${where}`);
      assert.ok(anywhere.both.has(pkg), `${pkg} is still part of the bundle's graph`);
    }
    // One chunk per built-in plugin at least (their modules share no code with the start path's chunk).
    const onUse = all.filter((output) => !reached.has(output));
    assert.ok(onUse.length >= BUILTIN_PLUGINS.length, `${onUse.length} of ${all.length} chunks load on use`);
  });

  Deno.test(`${name}: each package is carried by the bundle or imported from node_modules, never both`, async () => {
    await build();
    const { anywhere: { carried, imported } } = await bundleGraph(dir, entry);
    // Two copies of a package (kysely's classes, valibot's) would fail `instanceof` across them.
    assert.deepEqual([...carried].filter((pkg) => imported.has(pkg)), []);
    assert.deepEqual(
      [...imported].filter((pkg) => !declaredExternal(pkg)),
      [],
      "imported but not in BUNDLE_EXTERNAL",
    );
    assert.deepEqual([...carried].filter(declaredExternal), [], "in BUNDLE_EXTERNAL but carried");
  });
}

Deno.test("npm start and start:node: the bundles keep every class's name (errors are named after theirs)", async () => {
  await Promise.all(BUNDLES.map(([, , , build]) => build()));
  // esbuild renames a top-level name that two modules share by adding a number (`NotFoundError2`);
  // `core/errors.ts` names an error after its class, so a renamed class would change error names.
  // Only this build's files (its metafile's outputs): older chunks may still sit in the folder.
  const renamed: string[] = [];
  for (const [, dir, entry] of BUNDLES) {
    const { all } = await bundleGraph(dir, entry);
    for (const output of all) {
      const text = await Deno.readTextFile(`${ROOT}${output}`);
      for (const [, name, base] of text.matchAll(/\b(([A-Za-z_$][\w$]*?)\d+)=class\b/g)) {
        const declared = await new Deno.Command("git", {
          args: ["grep", "-q", "-E", `class ${base}\\b`, "--", "*.ts"],
          cwd: ROOT,
        }).output();
        if (declared.success) renamed.push(`${name} (${output})`);
      }
    }
  }
  assert.deepEqual(renamed, []);
});

Deno.test("npm start: its command is the one the tests and benches start on Deno", async () => {
  const { scripts } = JSON.parse(await Deno.readTextFile(`${ROOT}package.json`));
  const [build, run] = (scripts.start as string).split(" && exec ");
  assert.equal(build, "deno run -A cli/build-deno.ts");
  assert.deepEqual(run.split(" "), ["deno", ...RUNTIMES.deno.slice(1), "start"]);
});
