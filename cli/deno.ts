/**
 * `deno run -A cli/deno.ts <command>`: svc on Deno.
 *
 * @module
 */
import { denoRuntime } from "./deno-runtime.ts";
import { runCli } from "./run.ts";

Deno.exit(await runCli(Deno.args, denoRuntime));
