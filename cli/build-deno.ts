/**
 * `deno run -A cli/build-deno.ts`: the bundle `npm start` runs on Deno (`dist/deno/cli/deno.js`, with
 * the password worker at `dist/deno/core/passwords/worker.js`), built from the current source.
 *
 * Why a bundle: Deno keeps every module's source in the V8 heap for the process's life, and a
 * TypeScript module's is the JavaScript it was compiled to plus an inline source map that holds
 * the original text again (base64), two bytes a character when the file has one character outside
 * Latin-1. The bundle is 1.3 MB of ASCII JavaScript on the start path, without source maps, types
 * or whitespace: servers idle 10 to 12 MiB lower (docs/operations/memory.md). Names are not
 * minified, so a stack trace names the source's functions and classes keep their names (errors
 * take theirs from the class: `core/errors.ts`). Packages stay imports of `node_modules`, and each
 * `import()` stays a chunk of its own, loaded on first use as from the source (plugins, drivers).
 * The chunks sit beside the entry (`cli/`), so a path relative to `import.meta.url` resolves from
 * any of them as from `cli/deno.js`. `npm start` runs it with `--no-code-cache`: Deno's code cache
 * is a file mapped into each process (about 4 MiB resident), and the bundle compiles quickly without.
 *
 * Each file is written beside its place and renamed over it, and a file whose bytes did not change
 * is left alone: a server already running from `dist/deno/` (another instance, or a chunk it has
 * not loaded yet) never reads a half-written file. Chunks are named by their content, so the ones
 * of an older build stay valid for the processes that use them.
 *
 * @module
 */
import * as esbuild from "esbuild";

/** The bundle's folder, from the repository root. */
export const DENO_BUNDLE_DIR = "dist/deno";

const ROOT = new URL("../", import.meta.url).pathname;

/** Builds the bundle into `outdir` (a path from the repository root); resolves to the files rewritten. */
export async function buildDenoBundle(outdir: string = DENO_BUNDLE_DIR): Promise<number> {
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: ["cli/deno.ts", "core/passwords/worker.ts"],
    outbase: ".",
    outdir,
    bundle: true,
    splitting: true,
    chunkNames: "cli/[name]-[hash]",
    format: "esm",
    platform: "node",
    target: "esnext",
    packages: "external",
    charset: "ascii",
    // Not the names: `keepNames` would wrap every function made at run time (closures per request).
    minifyWhitespace: true,
    minifySyntax: true,
    write: false,
    logLevel: "warning",
  });
  let written = 0;
  for (const file of result.outputFiles) {
    const current = await Deno.readFile(file.path).catch(() => null);
    if (current !== null && sameBytes(current, file.contents)) continue;
    await Deno.mkdir(file.path.slice(0, file.path.lastIndexOf("/")), { recursive: true });
    const partial = `${file.path}.${Deno.pid}.partial`;
    await Deno.writeFile(partial, file.contents);
    await Deno.rename(partial, file.path);
    written++;
  }
  return written;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

if (import.meta.main) {
  try {
    await buildDenoBundle();
  } finally {
    await esbuild.stop();
  }
}
