/**
 * What `svc start` loads before it serves (issue 29, memory): the modules a server needs only for
 * a feature it may never use are imported when the feature is first used, not with the server.
 * Read from Deno's module graph of `cli/deno.ts` (`deno info --json`): following only static
 * value imports (no `import type`, no `import()`), none of these packages is reached, nor any
 * built-in plugin's module. A static import of one of them anywhere on the start path fails this
 * test. The same holds for the bundle `npm start` runs (`dist/deno/cli/deno.js`, `cli/build-deno.ts`):
 * each `import()` stays a chunk of its own.
 */
import assert from "node:assert/strict";
import { buildDenoBundle, ROOT, RUNTIMES } from "../support/server.ts";
import { BUILTIN_PLUGINS } from "../../plugins/builtin-catalog.ts";

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
  // The dynamic imports are in the graph (a compiled binary includes them).
  for (const name of Object.keys(LOADED_ON_USE)) {
    assert.ok(
      graph.modules.some((m) => m.specifier.includes(`/node_modules/${name}/`)),
      `${name} is still part of the graph`,
    );
  }
});

Deno.test("npm start: in the bundle too, the packages and plugins loaded on first use are chunks loaded on use", async () => {
  await buildDenoBundle();
  const { graph, reached } = await staticGraph("dist/deno/cli/deno.js");
  assertNotAtStart(reached);
  const chunks = graph.modules.filter((m) => m.specifier.includes("/dist/deno/"));
  const onUse = chunks.filter((m) => !reached.has(m.specifier));
  // One chunk per built-in plugin at least (their modules share no code with the start path's chunk).
  assert.ok(
    onUse.length >= BUILTIN_PLUGINS.length,
    `${onUse.length} of ${chunks.length} chunks load on use: ${onUse.map((m) => m.specifier).join(", ")}`,
  );
  for (const name of ["@electric-sql/pglite", "postgres"]) {
    assert.ok(
      graph.modules.some((m) => m.specifier.includes(`/node_modules/${name}/`)),
      `${name} is in the graph`,
    );
  }
});

Deno.test("npm start: the bundle keeps every class's name (errors are named after theirs)", async () => {
  await buildDenoBundle();
  // esbuild renames a top-level name that two modules share by adding a number (`NotFoundError2`);
  // `core/errors.ts` names an error after its class, so a renamed class would change error names.
  const renamed: string[] = [];
  for await (const entry of Deno.readDir(`${ROOT}dist/deno/cli`)) {
    if (!entry.name.endsWith(".js")) continue;
    const text = await Deno.readTextFile(`${ROOT}dist/deno/cli/${entry.name}`);
    for (const [, name, base] of text.matchAll(/\b(([A-Za-z_$][\w$]*?)\d+)=class\b/g)) {
      const declared = await new Deno.Command("git", {
        args: ["grep", "-q", "-E", `class ${base}\\b`, "--", "*.ts"],
        cwd: ROOT,
      }).output();
      if (declared.success) renamed.push(`${name} (${entry.name})`);
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
