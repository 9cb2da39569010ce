/**
 * `deno run -A cli/build-deno.ts`: the bundle `npm start` runs on Deno (`dist/deno/cli/deno.js`, with
 * the password worker at `dist/deno/core/passwords/worker.js`), built from the current source
 * (`cli/bundle.ts`: what goes in, and how the files are replaced).
 *
 * Why a bundle: Deno keeps every module's source in the V8 heap for the process's life, and a
 * TypeScript module's is the JavaScript it was compiled to plus an inline source map that holds
 * the original text again (base64), two bytes a character when the file has one character outside
 * Latin-1. The start path is ASCII JavaScript without source maps, types, comments or the packages'
 * unused parts (docs/operations/memory.md). `npm start` runs it with `--no-code-cache`: Deno's code
 * cache is a file mapped into each process (about 4 MiB resident), and the bundle compiles quickly
 * without.
 *
 * @module
 */
import { buildBundle, runBuild } from "./bundle.ts";

/** The bundle's folder, from the repository root. */
export const DENO_BUNDLE_DIR = "dist/deno";

/** Builds the bundle into `outdir` (a path from the repository root); resolves to the files rewritten. */
export function buildDenoBundle(outdir: string = DENO_BUNDLE_DIR): Promise<number> {
  return buildBundle({ entryPoints: ["cli/deno.ts", "core/passwords/worker.ts"], outdir, target: "esnext" });
}

if (import.meta.main) await runBuild(() => buildDenoBundle());
