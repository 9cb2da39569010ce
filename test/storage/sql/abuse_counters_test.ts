import { strict as assert } from "node:assert";
import fc from "fast-check";
import { ManualClock } from "../../../core/clock.ts";
import { createSqlCounterStore } from "../../../storage/sql/abuse-counters.ts";
import { freshPostgres } from "../../support/db.ts";

const T0 = Date.UTC(2026, 0, 1);

Deno.test("abuse counters (postgres): concurrent hits are counted race-free across a pool", async () => {
  const database = await freshPostgres({ maxConnections: 20 });
  try {
    const clock = new ManualClock(T0);
    // Many stores over one pool stand for many svc instances.
    const stores = Array.from({ length: 4 }, () => createSqlCounterStore(database.db, { clock }));

    const counts = await Promise.all(
      Array.from({ length: 100 }, (_, i) => stores[i % 4].increment("ip:192.0.2.1", 300_000)),
    );
    assert.deepEqual(
      counts.map((c) => c.count).sort((a, b) => a - b),
      Array.from({ length: 100 }, (_, i) => i + 1),
    );
    assert.ok(counts.every((c) => c.resetAt === T0 + 300_000));
    assert.deepEqual(await stores[0].peek("ip:192.0.2.1"), { count: 100, resetAt: T0 + 300_000 });

    const distinct = await Promise.all(
      Array.from({ length: 100 }, (_, i) => stores[i % 4].addDistinct("stuff:192.0.2.1", `m${i}`, 600_000)),
    );
    assert.ok(distinct.every((n) => n >= 1 && n <= 100));
    assert.equal(await stores[1].addDistinct("stuff:192.0.2.1", "m0", 600_000), 100);

    // Concurrent hits when the window has just ended restart it exactly once.
    clock.advance(300_000);
    const restarted = await Promise.all(
      Array.from({ length: 50 }, (_, i) => stores[i % 4].increment("ip:192.0.2.1", 300_000)),
    );
    assert.deepEqual(
      restarted.map((c) => c.count).sort((a, b) => a - b),
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
  } finally {
    await database.close();
  }
});

Deno.test("abuse counters (postgres): windows, peek, reset and purge follow the injected clock", async () => {
  const database = await freshPostgres();
  try {
    const clock = new ManualClock(T0);
    const store = createSqlCounterStore(database.db, { clock });
    assert.deepEqual(await store.peek("k"), { count: 0, resetAt: null });
    assert.deepEqual(await store.increment("k", 1000), { count: 1, resetAt: T0 + 1000 });
    clock.advance(999);
    assert.deepEqual(await store.increment("k", 1000), { count: 2, resetAt: T0 + 1000 });
    clock.advance(1);
    assert.deepEqual(await store.peek("k"), { count: 0, resetAt: null });
    assert.deepEqual(await store.increment("k", 1000), { count: 1, resetAt: T0 + 2000 });

    assert.equal(await store.addDistinct("s", "a", 1000), 1);
    clock.advance(500);
    assert.equal(await store.addDistinct("s", "b", 1000), 2);
    clock.advance(500); // "a" (last seen 1000 ms ago) has left the sliding window.
    assert.equal(await store.addDistinct("s", "b", 1000), 1);
    await assert.rejects(store.addDistinct("s", "", 1000));

    await store.reset("s");
    assert.equal(await store.addDistinct("s", "c", 1000), 1);
    clock.advance(10_000);
    assert.equal(await store.purgeExpired(), 2); // k and c (reset removed the whole set "s" before)
    assert.equal(await store.purgeExpired(), 0);
  } finally {
    await database.close();
  }
});

Deno.test("abuse counters (postgres): concurrent reservations never exceed the limit across a pool", async () => {
  const database = await freshPostgres({ maxConnections: 20 });
  try {
    const clock = new ManualClock(T0);
    const stores = Array.from({ length: 4 }, () => createSqlCounterStore(database.db, { clock }));
    const reserveAll = (n: number) =>
      Promise.all(Array.from({ length: n }, (_, i) => stores[i % 4].reserve("acct:x", 5, 900_000)));

    const first = await reserveAll(60);
    const granted = first.filter((r) => r.granted);
    assert.equal(granted.length, 5);
    assert.deepEqual(granted.map((r) => r.count).sort(), [1, 2, 3, 4, 5]);
    assert.ok(first.every((r) => r.resetAt === T0 + 900_000));
    assert.ok(first.filter((r) => !r.granted).every((r) => r.count === 5));
    assert.deepEqual(await stores[0].peek("acct:x"), { count: 5, resetAt: T0 + 900_000 });

    // Two reservations given back: exactly two more fit, however many race for them.
    assert.deepEqual(
      await Promise.all([
        stores[1].release("acct:x", T0 + 900_000),
        stores[2].release("acct:x", T0 + 900_000),
      ]),
      [true, true],
    );
    assert.equal((await reserveAll(40)).filter((r) => r.granted).length, 2);

    // A release bound to an ended window leaves the next one alone; the next one starts once.
    clock.advance(900_000);
    const next = await reserveAll(40);
    assert.equal(next.filter((r) => r.granted).length, 5);
    assert.ok(next.every((r) => r.resetAt === T0 + 1_800_000));
    assert.equal(await stores[3].release("acct:x", T0 + 900_000), false);
    assert.deepEqual(await stores[0].peek("acct:x"), { count: 5, resetAt: T0 + 1_800_000 });
  } finally {
    await database.close();
  }
});

Deno.test("abuse counters (postgres): reserveAll answers as reserve ×3 and addDistinct do, in one statement (property)", async () => {
  const database = await freshPostgres({ maxConnections: 4 });
  try {
    const clock = new ManualClock(T0);
    const store = createSqlCounterStore(database.db, { clock });
    const op = fc.record({
      advance: fc.integer({ min: 0, max: 1500 }),
      limits: fc.tuple(
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 3 }),
      ),
      ip: fc.constantFrom("a", "b"),
      member: fc.constantFrom("m1", "m2", "m3"),
    });
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
        run++;
        for (const o of ops) {
          clock.advance(o.advance);
          const keys = (
            p: string,
          ) => [`${p}${run}:ip:${o.ip}`, `${p}${run}:ipacc:${o.ip}`, `${p}${run}:acct`];
          const windows = [1000, 700, 1200];
          const batched = await store.reserveAll!(
            keys("B").map((key, i) => ({ key, limit: o.limits[i], windowMs: windows[i] })),
            { key: `B${run}:stuff:${o.ip}`, member: o.member, windowMs: 900 },
          );
          const single = await Promise.all(
            keys("S").map((key, i) => store.reserve(key, o.limits[i], windows[i])),
          );
          const n = await store.addDistinct(`S${run}:stuff:${o.ip}`, o.member, 900);
          assert.deepEqual(batched, { reservations: single, distinct: n });
        }
      }),
      { numRuns: 25 },
    );

    // Concurrent batches never grant more than a limit.
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        createSqlCounterStore(database.db, { clock }).reserveAll!(
          [{ key: "race:ip", limit: 100, windowMs: 60_000 }, {
            key: "race:acct",
            limit: 5,
            windowMs: 60_000,
          }],
          { key: "race:stuff", member: `m${i}`, windowMs: 60_000 },
        )),
    );
    assert.equal(results.filter((r) => r.reservations[1].granted).length, 5);
    assert.equal(results.filter((r) => r.reservations[0].granted).length, 30);
    assert.deepEqual(await store.peek("race:acct"), { count: 5, resetAt: clock.now() + 60_000 });
    assert.equal(Math.max(...results.map((r) => r.distinct)) <= 30, true);
    assert.equal(await store.addDistinct("race:stuff", "m0", 60_000), 30);
  } finally {
    await database.close();
  }
});
