/**
 * The house's arrows run one way (ARCHITECTURE.md): this test reads every source file's relative
 * imports and fails when one breaks the stated direction.
 *
 * - `core/` imports nothing of `storage/`, `http/`, `plugins/`, `cli/` or `console/`: the storage
 *   contract is core's port (`core/storage/`), and `storage/` only implements it.
 * - `storage/` imports only `core/` (and itself); `http/` never imports `plugins/` or `cli/` (it may embed
 *   `console/`'s built pages).
 * - A plugin (`plugins/<name>/`) imports only its own folder and the package's public entry points
 *   (`mod.ts`, `authz.ts`, `webhooks.ts`, `passwords.ts`), as a third party's plugin would.
 * - `mod.ts` and the other entry points never import `cli/` (the command line belongs to `./server`).
 * - No source file takes part in an import circle.
 */
import assert from "node:assert/strict";

const root = new URL("../", import.meta.url);
const SOURCE_ROOTS = ["core", "storage", "http", "plugins", "cli", "console"];
const ENTRY_POINTS = ["mod.ts", "authz.ts", "webhooks.ts", "passwords.ts", "server.ts", "api-types.ts"];
const PUBLIC_ENTRY_POINTS = new Set(["mod.ts", "authz.ts", "webhooks.ts", "passwords.ts"]);
const SPECIFIER =
  /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s*["'](\.{1,2}\/[^"']+)["']|\bimport\s*\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;

function normalize(path: string): string {
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== "." && part !== "") parts.push(part);
  }
  return parts.join("/");
}

async function sourceFiles(): Promise<string[]> {
  const files: string[] = [...ENTRY_POINTS];
  async function walk(dir: string): Promise<void> {
    for await (const entry of Deno.readDir(new URL(`${dir}/`, root))) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) {
        if (entry.name !== "generated" && entry.name !== "node_modules") await walk(path);
      } else if (/\.(ts|tsx)$/.test(entry.name) && !/_test\.tsx?$/.test(entry.name)) files.push(path);
    }
  }
  for (const dir of SOURCE_ROOTS) await walk(dir);
  return files.sort();
}

async function importGraph(): Promise<Map<string, string[]>> {
  const graph = new Map<string, string[]>();
  for (const file of await sourceFiles()) {
    const text = await Deno.readTextFile(new URL(file, root));
    const dir = file.includes("/") ? file.slice(0, file.lastIndexOf("/")) : "";
    const targets: string[] = [];
    for (const m of text.matchAll(SPECIFIER)) {
      const spec = m[1] ?? m[2];
      targets.push(normalize(`${dir}/${spec}`));
    }
    graph.set(file, targets);
  }
  return graph;
}

const roomOf = (path: string) => path.includes("/") ? path.slice(0, path.indexOf("/")) : path;

Deno.test("imports follow the house's directions", async () => {
  const graph = await importGraph();
  const broken: string[] = [];
  for (const [file, targets] of graph) {
    const room = roomOf(file);
    for (const target of targets) {
      const to = roomOf(target);
      const say = () => broken.push(`${file} -> ${target}`);
      if (room === "core" && to !== "core") say();
      else if (room === "storage" && to !== "storage" && to !== "core") say();
      else if (room === "http" && ["plugins", "cli"].includes(to)) say();
      else if (PUBLIC_ENTRY_POINTS.has(file) && to === "cli") say();
      else if (room === "plugins" && file.split("/").length > 2) {
        const own = file.split("/").slice(0, 2).join("/");
        if (!target.startsWith(`${own}/`) && !PUBLIC_ENTRY_POINTS.has(target)) say();
      }
    }
  }
  assert.deepEqual(broken, []);
});

Deno.test("no source file takes part in an import circle", async () => {
  const graph = await importGraph();
  const state = new Map<string, "open" | "done">();
  const circles: string[] = [];
  const visit = (file: string, path: string[]) => {
    state.set(file, "open");
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      const seen = state.get(target);
      if (seen === "open") circles.push([...path.slice(path.indexOf(target)), target].join(" -> "));
      else if (seen === undefined) visit(target, [...path, target]);
    }
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file, [file]);
  assert.deepEqual(circles, []);
});
