#!/usr/bin/env node
/**
 * `npm test`: runs `deno test` on the whole project (or on the paths given as arguments) in its
 * own process group and stops that whole group on SIGTERM or SIGINT. The old script line ran
 * `deno test` under npm's shell, which did not pass npm's signal on, and a test that listens for
 * SIGTERM (the server's shutdown handler) kept deno alive. package.json runs this file with
 * `exec`, so npm signals the runner itself.
 *
 * deno's output goes through untouched (.ci/run reads its `ok | N passed | N failed` line) and
 * the runner exits with deno's exit code. On a signal: the signal goes to the group, and if the
 * group is still there after SVC_TEST_KILL_GRACE_MS (default 5000) it gets SIGKILL.
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

const defaultPaths = [
  "test/",
  "mod.ts",
  "server.ts",
  "authz.ts",
  "webhooks.ts",
  "passwords.ts",
  "core/",
  "http/",
  "storage/",
  "plugins/",
  "cli/",
];
const given = process.argv.slice(2);
const args = [
  "test",
  "-A",
  "--no-check=remote",
  "--parallel",
  "--doc",
  ...(given.length > 0 ? given : defaultPaths),
];
const graceMs = Number(process.env.SVC_TEST_KILL_GRACE_MS ?? 5000);
const env = { ...process.env, DENO_JOBS: process.env.DENO_JOBS || "4" };

const isWindows = process.platform === "win32";
const child = spawn(deno, args, { stdio: "inherit", env, detached: !isWindows });

/** Sends `signal` to deno's process group (deno, its test workers' subprocesses); false when it is gone. */
function signalGroup(signal) {
  try {
    if (isWindows) child.kill(signal);
    else process.kill(-child.pid, signal);
    return true;
  } catch {
    return false;
  }
}

let stopping = false;
function stop(signal) {
  signalGroup(signal);
  if (stopping) return;
  stopping = true;
  setTimeout(() => signalGroup("SIGKILL"), Number.isFinite(graceMs) ? graceMs : 5000).unref();
}
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => stop(signal));
// npm's script shell may not pass a signal on (package.json runs the runner with `exec` so that the
// runner is npm's child); if whoever started the runner is gone all the same, the run stops.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) stop("SIGTERM");
}, 250).unref();
child.on("error", (err) => {
  console.error(`npm test: cannot run Deno (${deno}): ${err.message}; install the dependencies with npm ci`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  // What deno left behind in its group (a server a test started) goes too.
  if (!isWindows) signalGroup("SIGKILL");
  process.exit(code ?? (signal === "SIGINT" ? 130 : 143));
});
