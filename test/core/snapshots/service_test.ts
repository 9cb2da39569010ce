import { strict as assert } from "node:assert";
import { ManualClock } from "../../../core/clock.ts";
import { EventHub, type SvcEvent } from "../../../core/events/sink.ts";
import { decodeInvalidation, InProcessCacheBus } from "../../../core/snapshots/bus.ts";
import { INVALID_GRANTS_EVENT, SubjectSnapshots } from "../../../core/snapshots/service.ts";
import type { SubjectGrantSource, SubjectRows } from "../../../core/storage/subject-grants.ts";

/** An in-memory source whose rows the test edits, counting loads. */
function memorySource() {
  const grants = new Map<string, SubjectRows["grants"]>();
  const source = {
    loads: 0,
    pending: null as null | Promise<void>,
    set(userId: string, patterns: string[]) {
      grants.set(
        userId,
        patterns.map((pattern) => ({
          pattern,
          effect: "Allow",
          orgId: null,
          teamIds: [],
          condition: null,
          source: "t",
        })),
      );
    },
    async loadSubject(userId: string, _orgId: string | null): Promise<SubjectRows | null> {
      source.loads++;
      const rows = grants.get(userId);
      if (source.pending) await source.pending;
      if (rows === undefined) return null;
      return {
        userId,
        realmId: "r",
        status: "Active",
        attributes: {},
        isOrgMember: true,
        teamIds: [],
        grants: rows,
      };
    },
  };
  return source satisfies SubjectGrantSource;
}

function setup(options: { ttlMs?: number; maxEntries?: number } = {}) {
  const clock = new ManualClock(0);
  const source = memorySource();
  const bus = new InProcessCacheBus();
  const hub = new EventHub();
  const events: SvcEvent[] = [];
  hub.subscribe((e) => void events.push(e));
  const make = () =>
    new SubjectSnapshots({
      source,
      bus,
      events: hub,
      clock,
      ttlMs: options.ttlMs ?? 60_000,
      maxEntries: options.maxEntries ?? 100,
    });
  return { clock, source, bus, events, make };
}

Deno.test("SubjectSnapshots: get caches per (user, org) until the TTL passes", async () => {
  const { clock, source, make } = setup({ ttlMs: 1_000 });
  source.set("u1", ["a:global:read"]);
  const snapshots = make();
  await snapshots.get("u1", "o1");
  await snapshots.get("u1", "o1");
  assert.equal(source.loads, 1);
  await snapshots.get("u1", "o2");
  assert.equal(source.loads, 2);
  clock.advance(1_000);
  await snapshots.get("u1", "o1");
  assert.equal(source.loads, 3);
});

Deno.test("SubjectSnapshots: fresh never reads or fills the cache", async () => {
  const { source, make } = setup();
  source.set("u1", ["a:global:read"]);
  const snapshots = make();
  const cached = await snapshots.get("u1", null);
  source.set("u1", ["a:global:read", "a:global:write"]);
  const fresh = await snapshots.fresh("u1", null);
  assert.equal(fresh?.subject.grants.length, 2);
  assert.equal(await snapshots.get("u1", null), cached);
  assert.equal(source.loads, 2);
});

Deno.test("SubjectSnapshots: an invalidation on the bus evicts on every instance", async () => {
  const { source, make } = setup();
  source.set("u1", ["a:global:read"]);
  source.set("u2", ["a:global:read"]);
  const a = make(), b = make();
  await a.start();
  await b.start();
  await a.get("u1", "o1");
  await a.get("u2", "o1");
  assert.equal(a.cachedCount, 2);
  await b.invalidateUser("u1");
  assert.equal(a.cachedCount, 1);
  await b.invalidateAll();
  assert.equal(a.cachedCount, 0);
  await a.stop();
  await b.invalidateAll();
  await b.stop();
});

Deno.test("SubjectSnapshots: a build that raced an invalidation is not cached", async () => {
  const { source, make } = setup();
  source.set("u1", ["a:global:read"]);
  const snapshots = make();
  let release!: () => void;
  source.pending = new Promise((resolve) => release = resolve);
  const inFlight = snapshots.get("u1", null);
  await snapshots.invalidateUser("u1");
  release();
  await inFlight;
  source.pending = null;
  assert.equal(snapshots.cachedCount, 0);
});

Deno.test("SubjectSnapshots: invalid grants emit one event per build, and an unknown user is null", async () => {
  const { source, events, make } = setup();
  source.set("u1", ["a:global:read", "A:global:read"]);
  const snapshots = make();
  const built = await snapshots.get("u1", "o1");
  assert.equal(built?.skipped.length, 1);
  assert.equal(events.length, 1);
  assert.equal(events[0].kind, INVALID_GRANTS_EVENT);
  assert.equal(events[0].userId, "u1");
  assert.equal(await snapshots.get("nobody", null), null);
});

Deno.test("decodeInvalidation: anything unexpected evicts everything", () => {
  assert.deepEqual(decodeInvalidation('{"scope":"user","userId":"u"}'), { scope: "user", userId: "u" });
  for (const payload of ["", "{", "null", '{"scope":"user"}', '{"scope":"other"}']) {
    assert.deepEqual(decodeInvalidation(payload), { scope: "all" });
  }
});
