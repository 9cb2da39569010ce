/**
 * `limitRetainedFreeMemory` (cli/deno-malloc-trim.ts): after a thread frees what it allocated,
 * glibc gives the memory back instead of keeping it resident in the thread's arena. Each case
 * runs in its own Deno process (the setting is process-wide): a worker thread frees one 30 MiB
 * block (which raises glibc's adaptive thresholds: trim at 60 MiB), then fills and frees 48 MiB
 * of 32 KiB blocks; the process reports how much its resident memory grew. Without the setting glibc keeps
 * the freed 48 MiB (so the test would notice the setting doing nothing); with it, it does not.
 * Linux with glibc only, as the setting.
 */
import assert from "node:assert/strict";
import { ROOT } from "../support/server.ts";
import { runDenoScript } from "../support/deno-script.ts";

const MIB = 1024 * 1024;

const WORKER = `
const libc = Deno.dlopen("libc.so.6", {
  malloc: { parameters: ["usize"], result: "pointer" },
  free: { parameters: ["pointer"], result: "void" },
  memset: { parameters: ["pointer", "i32", "usize"], result: "pointer" },
});
const big = libc.symbols.malloc(30n * 1024n * 1024n);
libc.symbols.free(big);
const blocks = [];
for (let i = 0; i < 1536; i++) {
  const block = libc.symbols.malloc(32n * 1024n);
  libc.symbols.memset(block, 1, 32n * 1024n);
  blocks.push(block);
}
for (const block of blocks.reverse()) libc.symbols.free(block);
self.postMessage("freed");
`;

const script = (limit: boolean) => `
import { limitRetainedFreeMemory } from ${
  JSON.stringify(new URL("cli/deno-malloc-trim.ts", `file://${ROOT}`).href)
};
const set = ${limit} ? limitRetainedFreeMemory() : false;
const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(Deno.readTextFileSync("/proc/self/status"))[1]) * 1024;
const before = rss();
const url = URL.createObjectURL(new Blob([${JSON.stringify(WORKER)}], { type: "text/javascript" }));
const worker = new Worker(url, { type: "module" });
await new Promise((resolve) => worker.onmessage = resolve);
console.log(JSON.stringify({ set, grown: rss() - before }));
worker.terminate();
`;

const run = async (limit: boolean): Promise<{ set: boolean; grown: number }> =>
  JSON.parse(await runDenoScript(script(limit), ["-A"]));

const glibc = Deno.build.os === "linux" && (() => {
  try {
    Deno.dlopen("libc.so.6", { mallopt: { parameters: ["i32", "i32"], result: "i32" } }).close();
    return true;
  } catch {
    return false;
  }
})();

Deno.test({
  name: "limitRetainedFreeMemory: a thread's freed memory is given back, not kept in its arena",
  ignore: !glibc,
  async fn() {
    const [kept, limited] = await Promise.all([run(false), run(true)]);
    assert.equal(kept.set, false);
    // The worker's own isolate grows both by 10-15 MiB.
    assert.ok(kept.grown > 40 * MIB, `without the setting the freed blocks stay resident: ${kept.grown}`);
    assert.equal(limited.set, true);
    assert.ok(
      limited.grown < kept.grown - 32 * MIB,
      `with it they are given back: ${limited.grown} bytes grown, against ${kept.grown}`,
    );
  },
});

Deno.test({
  name: "limitRetainedFreeMemory: without the FFI permission it sets nothing and asks for nothing",
  ignore: !glibc,
  async fn() {
    const printed = await runDenoScript(
      `import { limitRetainedFreeMemory } from ${
        JSON.stringify(new URL("cli/deno-malloc-trim.ts", `file://${ROOT}`).href)
      }; console.log(limitRetainedFreeMemory());`,
      [],
    );
    assert.equal(printed, "false");
  },
});
