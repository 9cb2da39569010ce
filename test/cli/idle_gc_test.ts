/**
 * `cli/idle-gc.ts`: the quiet collector's policy on injected timers (collect once when a period had
 * no request and the heap grew, not otherwise), and the inspector's collection in a Deno process of
 * its own: a heap grown by 100 MiB of garbage stays that size without it (nothing allocates, so V8
 * collects nothing) and shrinks with it; without `--allow-sys=inspector` it is null and asks nothing.
 */
import assert from "node:assert/strict";
import { collectGarbageWhenQuiet, type QuietCollectorOptions } from "../../cli/idle-gc.ts";
import { ROOT } from "../support/server.ts";
import { runDenoScript } from "../support/deno-script.ts";

const MIB = 1024 * 1024;

/** A collector on a manual timer: `tick()` runs one period and waits for what it started. */
function harness(overrides: Partial<QuietCollectorOptions> = {}) {
  let callback: (() => void) | null = null;
  let heap = 50 * MIB;
  const events: string[] = [];
  const collector = collectGarbageWhenQuiet({
    collect: () => {
      events.push("collect");
      heap = 20 * MIB;
      return Promise.resolve();
    },
    afterCollect: () => events.push("trim"),
    quietMs: 10_000,
    minGrowthBytes: 8 * MIB,
    heapSize: () => heap,
    setInterval: (cb, ms) => {
      assert.equal(ms, 10_000);
      callback = cb;
      return 1;
    },
    clearInterval: () => callback = null,
    ...overrides,
  });
  return {
    collector,
    events,
    setHeap: (bytes: number) => heap = bytes,
    stopped: () => callback === null,
    async tick() {
      callback?.();
      await new Promise((resolve) => setTimeout(resolve, 0));
    },
  };
}

Deno.test("collectGarbageWhenQuiet: a quiet period collects once, then trims", async () => {
  const h = harness();
  await h.tick(); // the boot's heap (50 MiB) is above 0 + 8 MiB
  assert.deepEqual(h.events, ["collect", "trim"]);
  await h.tick(); // 20 MiB after it: not grown
  await h.tick();
  assert.deepEqual(h.events, ["collect", "trim"]);
  h.setHeap(27 * MIB); // grown by less than 8 MiB
  await h.tick();
  assert.deepEqual(h.events, ["collect", "trim"]);
  h.setHeap(29 * MIB);
  await h.tick();
  assert.deepEqual(h.events, ["collect", "trim", "collect", "trim"]);
});

Deno.test("collectGarbageWhenQuiet: a period with a request does not collect; the next quiet one does", async () => {
  const h = harness();
  h.collector.noteRequest();
  await h.tick();
  assert.deepEqual(h.events, []);
  h.collector.noteRequest();
  h.collector.noteRequest();
  await h.tick();
  assert.deepEqual(h.events, []);
  await h.tick();
  assert.deepEqual(h.events, ["collect", "trim"]);
});

Deno.test("collectGarbageWhenQuiet: a failed collection is reported, not retried until the heap grows", async () => {
  const errors: unknown[] = [];
  let calls = 0;
  const h = harness({
    collect: () => {
      calls++;
      return Promise.reject(new Error("no inspector"));
    },
    onError: (error) => errors.push(error),
  });
  await h.tick();
  await h.tick();
  assert.equal(calls, 1);
  assert.equal(errors.length, 1);
  assert.deepEqual(h.events, []); // no trim after a failure
  h.collector.stop();
  assert.ok(h.stopped());
});

const script = (collect: boolean) => `
import { inspectorGarbageCollector } from ${JSON.stringify(new URL("cli/idle-gc.ts", `file://${ROOT}`).href)};
import { getHeapStatistics } from "node:v8";
const keepAlive = setInterval(() => {}, 1000);
const heap = () => getHeapStatistics().total_heap_size;
let garbage = [];
for (let i = 0; i < 1_500_000; i++) garbage.push({ i, text: "garbage " + i });
garbage = null;
const grown = heap();
const collect = inspectorGarbageCollector();
// Twice: the session of the first is closed before the second opens one.
if (${collect}) { await collect(); await collect(); }
console.log(JSON.stringify({ available: collect !== null, grown, after: heap() }));
clearInterval(keepAlive);
`;

/** Runs `code` on Node (`tsx` loads the TypeScript); its standard output. */
async function node(code: string): Promise<string> {
  const file = await Deno.makeTempFile({ dir: `${ROOT}.tmp`, suffix: ".ts" }).catch(async () => {
    await Deno.mkdir(`${ROOT}.tmp`, { recursive: true });
    return Deno.makeTempFile({ dir: `${ROOT}.tmp`, suffix: ".ts" });
  });
  try {
    await Deno.writeTextFile(file, code);
    const child = new Deno.Command("node", {
      args: ["--import", "tsx", file],
      cwd: ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    // A collection that never returns (Node 20's disconnect inside the answer's callback did)
    // would hang the test: it fails instead.
    const hang = setTimeout(() => child.kill("SIGKILL"), 60_000);
    const { success, stdout, stderr } = await child.output().finally(() => clearTimeout(hang));
    assert.ok(success, `node did not finish: ${new TextDecoder().decode(stderr)}`);
    return new TextDecoder().decode(stdout).trim();
  } finally {
    await Deno.remove(file);
  }
}

const hasNode = await new Deno.Command("node", { args: ["--version"], stdout: "null", stderr: "null" })
  .output().then((out) => out.success, () => false);

Deno.test("inspectorGarbageCollector: the heap a load's garbage grew is given back with it, kept without", async () => {
  const [kept, collected] = await Promise.all([
    runDenoScript(script(false), ["--allow-sys=inspector"]).then(JSON.parse),
    runDenoScript(script(true), ["--allow-sys=inspector"]).then(JSON.parse),
  ]);
  assert.equal(kept.available, true);
  assert.equal(collected.available, true);
  assert.ok(kept.grown > 80 * MIB && collected.grown > 80 * MIB, `the garbage grew the heap: ${kept.grown}`);
  assert.ok(kept.after > 80 * MIB, `without a collection the heap stays: ${kept.after}`);
  assert.ok(collected.after < 30 * MIB, `with it the heap shrinks: ${collected.after}`);
});

Deno.test({
  name: "inspectorGarbageCollector: on Node, the collection returns and gives the heap back",
  ignore: !hasNode,
  async fn() {
    const collected = JSON.parse(await node(script(true)));
    assert.equal(collected.available, true);
    assert.ok(collected.grown > 80 * MIB, `the garbage grew the heap: ${collected.grown}`);
    assert.ok(collected.after < 30 * MIB, `the collection shrank it: ${collected.after}`);
  },
});

Deno.test("inspectorGarbageCollector: without --allow-sys=inspector it is null and asks for nothing", async () => {
  const printed = await runDenoScript(
    `import { inspectorGarbageCollector } from ${
      JSON.stringify(new URL("cli/idle-gc.ts", `file://${ROOT}`).href)
    }; console.log(inspectorGarbageCollector() === null);`,
    [],
  );
  assert.equal(printed, "true");
});
