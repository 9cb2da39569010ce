/**
 * `npm test` runs `cli/test-runner.mjs`: deno's output passes through with its exit code, and a
 * SIGTERM or SIGINT to npm stops the whole deno test process tree, even a test that listens for
 * SIGTERM itself (as the server's shutdown handler does) and a subprocess a test started.
 */
import assert from "node:assert/strict";
import { childEnv, ROOT } from "../support/server.ts";

const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** True while `pid` is a live (not zombie) process; Linux /proc. */
async function alive(pid: number): Promise<boolean> {
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

async function waitFor(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return check();
}

function npmTest(dir: string, file: string, extraEnv: Record<string, string> = {}): Deno.ChildProcess {
  return new Deno.Command("npm", {
    args: ["test", "--silent", "--", file],
    cwd: ROOT,
    env: childEnv({ SVC_TEST_TMP: dir, ...extraEnv }),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

Deno.test("npm test passes deno's summary line and exit code through", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-test-runner-" });
  try {
    await Deno.writeTextFile(
      `${dir}/tiny_test.ts`,
      `Deno.test("one", () => {});\nDeno.test("two", () => { if (Deno.env.get("FAIL_TWO")) throw new Error("no"); });\n`,
    );
    const ok = await npmTest(dir, `${dir}/tiny_test.ts`).output();
    assert.equal(ok.code, 0, decode(ok.stderr));
    assert.match(decode(ok.stdout), /^ok \| 2 passed \| 0 failed/m);

    const failed = await npmTest(dir, `${dir}/tiny_test.ts`, { FAIL_TWO: "1" }).output();
    assert.equal(failed.code, 1);
    assert.match(decode(failed.stdout), /^FAILED \| 1 passed \| 1 failed/m);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.test(`${signal} to npm test stops deno test and what a test started, within seconds`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "svc-test-runner-" });
    try {
      // A test that ignores SIGTERM and SIGINT, starts a subprocess, writes both pids and never ends.
      await Deno.writeTextFile(
        `${dir}/forever_test.ts`,
        `Deno.test({ name: "forever", sanitizeOps: false, sanitizeResources: false, fn: async () => {
  Deno.addSignalListener("SIGTERM", () => {});
  Deno.addSignalListener("SIGINT", () => {});
  const sleeper = new Deno.Command("sleep", { args: ["300"], stdin: "null", stdout: "null", stderr: "null" }).spawn();
  await Deno.writeTextFile(Deno.env.get("SVC_TEST_TMP") + "/pids", Deno.pid + " " + sleeper.pid);
  await new Promise(() => {});
} });
`,
      );
      const npm = npmTest(dir, `${dir}/forever_test.ts`, { SVC_TEST_KILL_GRACE_MS: "1500" });
      const started = await waitFor(async () => {
        try {
          return (await Deno.readTextFile(`${dir}/pids`)).includes(" ");
        } catch {
          return false;
        }
      }, 30_000);
      assert.ok(started, "the long-running test did not start");
      const [denoPid, sleepPid] = (await Deno.readTextFile(`${dir}/pids`)).split(" ").map(Number);
      assert.ok(await alive(denoPid));
      assert.ok(await alive(sleepPid));

      const sentAt = Date.now();
      npm.kill(signal);
      const status = await npm.status;
      await npm.stdout.cancel();
      await npm.stderr.cancel();
      assert.ok(Date.now() - sentAt < 8_000, `npm test took ${Date.now() - sentAt} ms to stop`);
      assert.notEqual(status.code, 0);
      assert.ok(await waitFor(async () => !(await alive(denoPid)), 3_000), "deno test is still running");
      assert.ok(
        await waitFor(async () => !(await alive(sleepPid)), 3_000),
        "the test's subprocess is still running",
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}
