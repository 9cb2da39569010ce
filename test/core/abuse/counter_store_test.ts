import { strict as assert } from "node:assert";
import fc from "fast-check";
import { MemoryCounterStore } from "../../../core/abuse/counter-store.ts";
import { ManualClock } from "../../../core/clock.ts";

Deno.test("memory counter store: anchored windows, sliding distinct sets, purge and sweep", async () => {
  const clock = new ManualClock(1000);
  const store = new MemoryCounterStore({ clock, sweepEvery: 5 });
  assert.deepEqual(await store.increment("k", 100), { count: 1, resetAt: 1100 });
  clock.advance(99);
  assert.deepEqual(await store.increment("k", 100), { count: 2, resetAt: 1100 });
  assert.deepEqual(await store.peek("k"), { count: 2, resetAt: 1100 });
  clock.advance(1);
  assert.deepEqual(await store.peek("k"), { count: 0, resetAt: null });
  assert.deepEqual(await store.increment("k", 100), { count: 1, resetAt: 1200 });
  await store.reset("k");
  assert.deepEqual(await store.peek("k"), { count: 0, resetAt: null });

  assert.equal(await store.addDistinct("s", "a", 100), 1);
  clock.advance(50);
  assert.equal(await store.addDistinct("s", "b", 100), 2);
  assert.equal(await store.addDistinct("s", "a", 100), 2);
  clock.advance(100);
  assert.equal(await store.addDistinct("s", "c", 100), 1);
  await store.increment("x", 10);
  clock.advance(1000);
  assert.equal(await store.purgeExpired(), 2); // x and c (a, b were dropped when c was added)
});

Deno.test("memory counter store: a counter equals the hits in its window (property)", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 60 }), async (gaps) => {
      const clock = new ManualClock(0);
      const store = new MemoryCounterStore({ clock });
      let windowStart: number | null = null, expected = 0;
      for (const gap of gaps) {
        clock.advance(gap);
        if (windowStart === null || clock.now() >= windowStart + 100) {
          [windowStart, expected] = [clock.now(), 0];
        }
        expected++;
        const value = await store.increment("k", 100);
        if (value.count !== expected || value.resetAt !== windowStart + 100) return false;
      }
      return true;
    }),
  );
});
