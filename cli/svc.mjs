#!/usr/bin/env node
/**
 * The `svc` command (package.json `bin`): `npx svc <command>` runs `cli/deno.ts` on the
 * project's Deno (node_modules/.bin/deno, else deno on the PATH) with the project's deno.json,
 * in the caller's folder, passing signals on and exiting with svc's exit code.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import process from "node:process";

const root = fileURLToPath(new URL("../", import.meta.url));
const localDeno = `${root}node_modules/.bin/deno`;
const deno = existsSync(localDeno) ? localDeno : "deno";

const child = spawn(
  deno,
  ["run", "-A", "--config", `${root}deno.json`, `${root}cli/deno.ts`, ...process.argv.slice(2)],
  { stdio: "inherit" },
);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("error", (err) => {
  console.error(`svc: cannot run Deno (${deno}): ${err.message}; install the dependencies with npm ci`);
  process.exit(1);
});
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 + 15 : 1)));
