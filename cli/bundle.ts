/**
 * The bundles `npm start` and `npm run start:node` run (`cli/build-deno.ts`, `cli/build-node.ts`):
 * esbuild's build of a runtime's entry points, shared by both, and how its files are written.
 *
 * What goes in: svc's modules and the packages they import, each package cut to the parts svc
 * uses (valibot's 403 KB module is 23 KB in the bundle, kysely's hundred files 228 KB). A runtime
 * keeps every loaded module's source in the V8 heap for the process's life, comments and unused
 * exports included: an idle server on Postgres holds 4 MiB (Deno) to 9 MiB (Node) less this way
 * (docs/operations/memory.md). Each `import()` stays a chunk of its own, loaded on first use, and
 * the chunks sit beside the entry (`cli/`), so a path relative to `import.meta.url` resolves from
 * any of them as from the entry. Whitespace and syntax are minified, names are not: a stack trace
 * names the source's functions, and classes keep their names, which errors take (`core/errors.ts`).
 * esbuild's `keepNames` is off: it would wrap every function made at run time (closures per request).
 *
 * What stays an import of `node_modules` ({@link BUNDLE_EXTERNAL}): packages that find files of
 * their own next to their modules, native addons, the packages of features loaded on first use
 * (bundling them gains nothing at start), and Hono, whose types and errors are part of the plugin
 * API: a plugin's `hono` and svc's must be the same module for `instanceof HTTPException`.
 *
 * Each file is written beside its place and renamed over it, and a file whose bytes did not change
 * is left alone: a server already running from the folder (another instance, or a chunk it has not
 * loaded yet) never reads a half-written file. Chunks are named by their content, so the ones of
 * an older build stay valid for the processes that use them. The build's metafile is written as
 * `meta.json` in the folder: `test/cli/startup_modules_test.ts` reads from it what the start path loads.
 *
 * @module
 */
import * as esbuild from "esbuild";

/** The repository root. */
const ROOT = new URL("../", import.meta.url).pathname;

/** The packages a bundle imports from `node_modules` instead of carrying them, with why. */
export const BUNDLE_EXTERNAL: Readonly<Record<string, string>> = {
  "@electric-sql/pglite": "reads its WebAssembly and data files next to its modules",
  "@node-rs/argon2": "a native addon",
  "@phi-ag/argon2": "reads its WebAssembly file next to its modules",
  "hono": "the plugin API's types and errors (one module for svc and its plugins)",
  "hono/*": "the same package",
  "@hono/node-server": "imports hono",
  "@simplewebauthn/server": "loaded on the first passkey ceremony",
  "nodemailer": "loaded on the first SMTP delivery",
  "xml-crypto": "the saml plugin's, loaded when it is enabled",
  "@xmldom/xmldom": "the saml plugin's, loaded when it is enabled",
  "@peculiar/*": "the saml plugin's and @simplewebauthn/server's (one copy for both)",
};

/** What a bundle is built from and into. */
export interface BundleOptions {
  /** The entry points, from the repository root. */
  readonly entryPoints: readonly string[];
  /** The output folder, from the repository root (or absolute). */
  readonly outdir: string;
  /** esbuild's target (`esnext` for Deno, `node20` for Node). */
  readonly target: string;
}

/** Builds a bundle into `outdir` (files replaced by a rename, `meta.json` beside them); resolves to the files rewritten. */
export async function buildBundle(options: BundleOptions): Promise<number> {
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [...options.entryPoints],
    outbase: ".",
    outdir: options.outdir,
    bundle: true,
    splitting: true,
    chunkNames: "cli/[name]-[hash]",
    format: "esm",
    platform: "node",
    target: options.target,
    external: Object.keys(BUNDLE_EXTERNAL),
    charset: "ascii",
    // Not the names: `keepNames` would wrap every function made at run time (closures per request).
    minifyWhitespace: true,
    minifySyntax: true,
    metafile: true,
    write: false,
    logLevel: "warning",
  });
  const outdir = options.outdir.startsWith("/") ? options.outdir : `${ROOT}${options.outdir}`;
  const files = [
    ...result.outputFiles.map((file) => ({ path: file.path, contents: file.contents })),
    { path: `${outdir}/meta.json`, contents: new TextEncoder().encode(JSON.stringify(result.metafile)) },
  ];
  let written = 0;
  for (const file of files) {
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

/** Runs `build` as a script's main, then stops esbuild's service (which would keep the process alive). */
export async function runBuild(build: () => Promise<unknown>): Promise<void> {
  try {
    await build();
  } finally {
    await esbuild.stop();
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
