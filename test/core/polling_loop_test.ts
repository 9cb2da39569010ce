import { strict as assert } from "node:assert";
import { PollingLoop } from "../../core/polling-loop.ts";

Deno.test("polling loop: a full batch runs the next at once; wake polls now; a failure is reported and the loop goes on", async () => {
  // Batches the loop will get, in order; an Error is a failing batch.
  const script: (number[] | Error)[] = [[1, 2], [3], new Error("boom"), [4]];
  const errors: unknown[] = [];
  const ran: number[][] = [];
  let idle = Promise.withResolvers<void>();
  const loop = new PollingLoop<number>({
    runOnce: () => {
      const next = script.shift() ?? [];
      if (next instanceof Error) return Promise.reject(next);
      ran.push(next);
      if (next.length < 2) idle.resolve();
      return Promise.resolve(next);
    },
    batchSize: 2,
    pollIntervalMs: 60_000,
    onError: (error) => errors.push(error),
  });
  loop.start();
  loop.start(); // idempotent
  await idle.promise;
  assert.deepEqual(ran, [[1, 2], [3]], "the full batch was followed at once by the next");
  idle = Promise.withResolvers<void>();
  loop.wake(); // the failing batch
  while (errors.length === 0) await new Promise((r) => setTimeout(r, 1));
  assert.equal((errors[0] as Error).message, "boom");
  loop.wake();
  await idle.promise;
  assert.deepEqual(ran, [[1, 2], [3], [4]], "the loop went on after the failure");
  await loop.stop();
});

Deno.test("polling loop: drain runs batches until one is empty", async () => {
  const script = [[1], [2, 3], []];
  const loop = new PollingLoop<number>({
    runOnce: () => Promise.resolve(script.shift() ?? []),
    batchSize: 10,
    pollIntervalMs: 60_000,
    onError: () => {},
  });
  assert.deepEqual(await loop.drain(), [1, 2, 3]);
  assert.deepEqual(script, []);
});
