/**
 * Runs a script in a new Deno process, for tests of process-wide state (allocator settings, the
 * heap) that must not leak into the test runner.
 */
import { strict as assert } from "node:assert";
import { ROOT } from "./server.ts";

/** Runs `code` in a new Deno process (from standard input, in the repository) with `flags`; its standard output. */
export async function runDenoScript(code: string, flags: readonly string[]): Promise<string> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, "-"],
    cwd: ROOT,
    env: { DENO_NO_PROMPT: "1" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(code));
  await writer.close();
  const { success, stdout, stderr } = await child.output();
  assert.ok(success, new TextDecoder().decode(stderr));
  return new TextDecoder().decode(stdout).trim();
}
