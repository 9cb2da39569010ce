/**
 * A shutdown step of `svc start` (`attempt`): a step that closes is reported closed, one that
 * throws is reported with its first line, and one that never settles (a connection a client
 * never closes, a query that never answers) is reported after its deadline so SIGTERM still ends
 * the process.
 */
import { strict as assert } from "node:assert";
import { attempt } from "../../cli/run.ts";

function recorder() {
  const lines: string[] = [];
  return { lines, runtime: { printError: (line: string) => void lines.push(line) } };
}

Deno.test("a shutdown step that closes is reported closed, and prints nothing", async () => {
  const { lines, runtime } = recorder();
  assert.equal(await attempt(runtime, "server", () => Promise.resolve(), 1_000), true);
  assert.deepEqual(lines, []);
});

Deno.test("a shutdown step that throws is reported with its first line", async () => {
  const { lines, runtime } = recorder();
  const failing = () => Promise.reject(new Error("socket gone\n    at somewhere (file.ts:1:1)"));
  assert.equal(await attempt(runtime, "storage", failing, 1_000), false);
  assert.deepEqual(lines, ["storage: error while closing: socket gone"]);
});

Deno.test("a shutdown step that never settles is left behind after its deadline", async () => {
  const { lines, runtime } = recorder();
  const never = () => new Promise<void>(() => {});
  assert.equal(await attempt(runtime, "server", never, 20), false);
  assert.deepEqual(lines, ["server: did not close within 0.02 s; going on"]);
});
