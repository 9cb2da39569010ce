/**
 * `deno run -A cli/deno.ts <command>`: svc on Deno, from the source. `npm start` runs this module's
 * bundle, `dist/deno/cli/deno.js` (`cli/build-deno.ts`), which names the password worker's place:
 * the bundle's second entry, `dist/deno/core/passwords/worker.js`.
 *
 * @module
 */
import { denoRuntime, denoRuntimeWith } from "./deno-runtime.ts";
import { runCli } from "./run.ts";

const runtime = import.meta.url.endsWith(".ts")
  ? denoRuntime
  : denoRuntimeWith(new URL("../core/passwords/worker.js", import.meta.url));

Deno.exit(await runCli(Deno.args, runtime));
