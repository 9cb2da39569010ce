/**
 * `svc` is a real command: package.json's `bin` runs `cli/svc.mjs`, so `npx svc …` works from
 * the project folder, and the hint of an unknown command names a command that exists.
 */
import assert from "node:assert/strict";
import { childEnv, ROOT } from "../support/server.ts";

async function npxSvc(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command("npx", {
    args: ["svc", ...args],
    cwd: ROOT,
    env: childEnv({}),
    clearEnv: true,
    stdin: "null",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

Deno.test("npx svc help prints the commands and the settings, exit 0", async () => {
  const package_ = JSON.parse(await Deno.readTextFile(`${ROOT}package.json`));
  assert.equal(package_.bin?.svc, "cli/svc.mjs");
  const { code, stdout, stderr } = await npxSvc("help");
  assert.equal(code, 0, stderr);
  assert.match(stdout, /^usage: svc <command>$/m);
  assert.match(stdout, /^ {2}help {13}print this help$/m);
  assert.match(stdout, /^ {2}SVC_MAX_BODY_BYTES \(integer, 1024-104857600; default: 65536\)$/m);
});

Deno.test("npx svc with an unknown command exits 2 naming the help command that works", async () => {
  const { code, stdout, stderr } = await npxSvc("nope");
  assert.equal(code, 2);
  assert.equal(stdout, "");
  const hint = stderr.split("\n").find((line) => line.startsWith("svc: "));
  assert.equal(
    hint,
    'svc: unknown command "nope"; run "svc help" (npx svc help in the project folder) for the commands',
  );
});
