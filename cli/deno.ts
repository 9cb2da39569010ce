/**
 * `deno run -A cli/deno.ts <command>`: svc on Deno, from the source. `npm start` runs this module's
 * bundle, `dist/deno/cli/deno.js` (`cli/build-deno.ts`), whose files sit elsewhere: the password
 * worker is bundled beside it and the prepared cluster stays in the tree's `node_modules`.
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
