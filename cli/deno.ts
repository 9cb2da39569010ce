/**
 * `deno run -A cli/deno.ts <command>`: svc on Deno, from the source. `npm start` runs this module's
 * bundle, `dist/deno/cli/deno.js` (`cli/build-deno.ts`), which names the files the source finds
 * beside itself: the password worker, the bundle's second entry (`dist/deno/core/passwords/worker.js`),
 * and the prepared cluster, still in the tree's `node_modules`.
 *
 * @module
 */
import { denoRuntime, denoRuntimeWith } from "./deno-runtime.ts";
import { runCli } from "./run.ts";

const bundled = !import.meta.url.endsWith(".ts");
const runtime = bundled
  ? denoRuntimeWith({
    passwordWorker: new URL("../core/passwords/worker.js", import.meta.url),
    preparedCluster: new URL("../../../node_modules/.cache/svc/cluster.tar.gz", import.meta.url),
  })
  : denoRuntime;

Deno.exit(await runCli(Deno.args, runtime));
