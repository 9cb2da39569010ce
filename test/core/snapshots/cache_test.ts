import { strict as assert } from "node:assert";
import fc from "fast-check";
import { ManualClock } from "../../../core/clock.ts";
import { TtlLruCache } from "../../../core/snapshots/cache.ts";

Deno.test("TtlLruCache: an entry expires after its TTL", () => {
  const clock = new ManualClock(1_000);
  const cache = new TtlLruCache<string, number>(clock, { ttlMs: 100, maxEntries: 10 });
  cache.set("a", 1);
  clock.advance(99);
  assert.equal(cache.get("a"), 1);
  clock.advance(1);
  assert.equal(cache.get("a"), undefined);
  assert.equal(cache.size, 0);
});

Deno.test("TtlLruCache: the least recently used entry is evicted beyond the bound", () => {
  const clock = new ManualClock(0);
  const cache = new TtlLruCache<string, number>(clock, { ttlMs: 1_000, maxEntries: 2 });
  cache.set("a", 1);
  cache.set("b", 2);
  assert.equal(cache.get("a"), 1); // a is now the most recent
  cache.set("c", 3);
  assert.equal(cache.get("b"), undefined);
  assert.equal(cache.get("a"), 1);
  assert.equal(cache.get("c"), 3);
});

Deno.test("TtlLruCache: a zero TTL or a zero bound disables caching", () => {
  const clock = new ManualClock(0);
  for (const options of [{ ttlMs: 0, maxEntries: 10 }, { ttlMs: 10, maxEntries: 0 }]) {
    const cache = new TtlLruCache<string, number>(clock, options);
    cache.set("a", 1);
    assert.equal(cache.get("a"), undefined);
    assert.equal(cache.enabled, false);
  }
});

Deno.test("TtlLruCache: deleteWhere and clear remove entries", () => {
  const cache = new TtlLruCache<string, number>(new ManualClock(0), { ttlMs: 10, maxEntries: 10 });
  cache.set("u1|a", 1);
  cache.set("u1|b", 2);
  cache.set("u2|a", 3);
  assert.equal(cache.deleteWhere((k) => k.startsWith("u1|")), 2);
  assert.equal(cache.get("u2|a"), 3);
  cache.clear();
  assert.equal(cache.size, 0);
});

Deno.test("TtlLruCache: agrees with a model of recency and expiry under random operations", () => {
  type Op = { kind: "set"; key: number; value: number } | { kind: "get"; key: number } | {
    kind: "tick";
    ms: number;
  };
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant("set" as const), key: fc.nat(6), value: fc.nat() }),
    fc.record({ kind: fc.constant("get" as const), key: fc.nat(6) }),
    fc.record({ kind: fc.constant("tick" as const), ms: fc.nat(60) }),
  );
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 5 }),
      fc.integer({ min: 1, max: 100 }),
      fc.array(op),
      (max, ttl, ops) => {
        const clock = new ManualClock(0);
        const cache = new TtlLruCache<number, number>(clock, { ttlMs: ttl, maxEntries: max });
        // The model: a list of [key, value, expiresAt], most recent last.
        let model: [number, number, number][] = [];
        for (const o of ops) {
          if (o.kind === "tick") clock.advance(o.ms);
          else if (o.kind === "set") {
            model = model.filter(([k]) => k !== o.key);
            model.push([o.key, o.value, clock.now() + ttl]);
            if (model.length > max) model = model.slice(model.length - max);
            cache.set(o.key, o.value);
          } else {
            const found = model.find(([k]) => k === o.key);
            model = model.filter(([k]) => k !== o.key);
            let expected: number | undefined;
            if (found && found[2] > clock.now()) {
              expected = found[1];
              model.push(found);
            }
            assert.equal(cache.get(o.key), expected);
          }
          assert.ok(cache.size <= max);
        }
      },
    ),
  );
});
