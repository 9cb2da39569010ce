/**
 * `deno run -A cli/build-node.ts [--outdir <folder>]` (`npm run build:node`; `npm ci` runs it): the
 * bundle `npm run start:node` runs (`dist/node/cli/node.js`, with the password worker beside it at
 * `dist/node/cli/node-password-worker.js`), built from the current source for Node 20
 * (`cli/bundle.ts`: what goes in, and how the files are replaced, so that a server or a test
 * running from the folder never reads a half-written file). Node runs it without transpiling.
 *
 * @module
 */
import { buildBundle, runBuild } from "./bundle.ts";

/** The bundle's folder, from the repository root. */
export const NODE_BUNDLE_DIR = "dist/node";

/** Builds the bundle into `outdir` (from the repository root, or absolute); resolves to the files rewritten. */
export function buildNodeBundle(outdir: string = NODE_BUNDLE_DIR): Promise<number> {
  return buildBundle({
    entryPoints: ["cli/node.ts", "cli/node-password-worker.ts"],
    outdir,
    target: "node20",
  });
}

if (import.meta.main) {
  const at = Deno.args.indexOf("--outdir");
  await runBuild(() => buildNodeBundle(at >= 0 ? Deno.args[at + 1] : NODE_BUNDLE_DIR));
}
