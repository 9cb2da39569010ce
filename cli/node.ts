/**
 * svc on Node (20 or later): `node dist/node/cli/node.js <command>` runs the bundle `npm ci`
 * builds (`npm run build:node`, no transpiling at start), and `tsx cli/node.ts <command>` runs
 * the source.
 *
 * @module
 */
import process from "node:process";
import { nodeRuntime } from "./node-runtime.ts";
import { runCli } from "./run.ts";

process.exit(await runCli(process.argv.slice(2), nodeRuntime));
