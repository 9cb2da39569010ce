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

Deno.test("memory counter store: reserve grants up to the limit per window, release gives one back", async () => {
  const clock = new ManualClock(0);
  const store = new MemoryCounterStore({ clock });
  for (let i = 1; i <= 3; i++) {
    assert.deepEqual(await store.reserve("k", 3, 100), { granted: true, count: i, resetAt: 100 });
  }
  assert.deepEqual(await store.reserve("k", 3, 100), { granted: false, count: 3, resetAt: 100 });
  assert.equal(await store.release("k", 100), true);
  assert.deepEqual(await store.reserve("k", 3, 100), { granted: true, count: 3, resetAt: 100 });
  // A release bound to a window that has ended does not touch the next window.
  clock.advance(100);
  assert.deepEqual(await store.reserve("k", 3, 100), { granted: true, count: 1, resetAt: 200 });
  assert.equal(await store.release("k", 100), false);
  assert.deepEqual(await store.peek("k"), { count: 1, resetAt: 200 });
  assert.equal(await store.release("k", 200), true);
  assert.equal(await store.release("k", 200), false, "never below zero");
});

Deno.test("memory counter store: reservations never exceed the limit (model)", async () => {
  type Op = { kind: "reserve" } | { kind: "release"; pick: number } | { kind: "wait"; ms: number };
  const op = fc.oneof(
    fc.constant<Op>({ kind: "reserve" }),
    fc.nat(20).map((pick): Op => ({ kind: "release", pick })),
    fc.integer({ min: 1, max: 60 }).map((ms): Op => ({ kind: "wait", ms })),
  );
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.array(op, { maxLength: 80 }), async (limit, ops) => {
      const clock = new ManualClock(0);
      const store = new MemoryCounterStore({ clock });
      // The model: the live window's end and the reservations held in it.
      let windowEnd = -1, held = 0;
      const granted: number[] = [];
      for (const o of ops) {
        if (o.kind === "wait") {
          clock.advance(o.ms);
          continue;
        }
        const now = clock.now();
        if (now >= windowEnd) [windowEnd, held] = [-1, 0];
        if (o.kind === "reserve") {
          const r = await store.reserve("k", limit, 100);
          const expected = held < limit;
          if (r.granted !== expected) return false;
          if (expected) {
            if (windowEnd === -1) windowEnd = now + 100;
            held++;
            granted.push(windowEnd);
          }
          if (r.count !== held || r.count > limit || r.resetAt !== windowEnd) return false;
        } else if (granted.length > 0) {
          const [resetAt] = granted.splice(o.pick % granted.length, 1);
          const released = await store.release("k", resetAt);
          const expected = resetAt === windowEnd && now < windowEnd && held > 0;
          if (released !== expected) return false;
          if (expected) held--;
        }
        const peeked = await store.peek("k");
        if (peeked.count !== held || peeked.count > limit) return false;
      }
      return true;
    }),
  );
});
