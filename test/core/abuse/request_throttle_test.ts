import { strict as assert } from "node:assert";
import { MemoryCounterStore } from "../../../core/abuse/counter-store.ts";
import { DEFAULT_REQUEST_THROTTLE_LIMITS, RequestThrottle } from "../../../core/abuse/request-throttle.ts";
import { ManualClock } from "../../../core/clock.ts";
import type { SvcEvent } from "../../../core/events/sink.ts";
import { createSqlCounterStore } from "../../../storage/sql/abuse-counters.ts";
import { freshPostgres } from "../../support/db.ts";

const T0 = Date.UTC(2026, 0, 1);

Deno.test("request throttle (postgres): a limit holds under concurrency across instances", async () => {
  const database = await freshPostgres({ maxConnections: 20 });
  try {
    const clock = new ManualClock(T0);
    const sink = { emit: () => {} };
    // Four throttles over one database stand for four svc instances.
    const throttles = Array.from(
      { length: 4 },
      () => new RequestThrottle({ store: createSqlCounterStore(database.db, { clock }), clock, sink }),
    );
    const forgot = await Promise.all(Array.from({ length: 40 }, (_, i) =>
      throttles[i % 4].forgotPassword({
        ip: `198.51.100.${i + 1}`,
        realmId: "realm",
        email: i % 2 ? "Ada@Example.test " : "ada@example.test",
      })));
    assert.equal(forgot.filter((d) => d.allowed).length, 3, "3 per account, normalised address");
    assert.ok(forgot.filter((d) => !d.allowed).every((d) => d.retryAfterSeconds === 3600));

    const options = await Promise.all(
      Array.from({ length: 80 }, (_, i) => throttles[i % 4].passkeyOptions({ ip: "192.0.2.9" })),
    );
    assert.equal(options.filter((d) => d.allowed).length, 30);
    clock.advance(120_000);
    const later = await throttles[0].passkeyOptions({ ip: "192.0.2.9" });
    assert.deepEqual(later, { allowed: false, retryAfterSeconds: 180 });
    clock.advance(180_000);
    assert.equal((await throttles[1].passkeyOptions({ ip: "192.0.2.9" })).allowed, true, "the window reset");

    const keys = await database.db.selectFrom("abuse_counters").select("key").execute();
    assert.ok(keys.every((k) => !/192\.0\.2\.9|198\.51|ada/i.test(k.key)), "keys hold digests only");
  } finally {
    await database.close();
  }
});

Deno.test("request throttle: separate windows per throttle; fails open with an event when the store is down", async () => {
  const clock = new ManualClock(T0);
  const events: SvcEvent[] = [];
  const sink = { emit: (e: SvcEvent) => void events.push(e) };
  const throttle = new RequestThrottle({ store: new MemoryCounterStore({ clock }), clock, sink });
  const verify = DEFAULT_REQUEST_THROTTLE_LIMITS.emailVerification.perAccount.limit;
  for (let i = 0; i < verify; i++) {
    assert.equal((await throttle.emailVerification({ ip: null, realmId: "r", userId: "u" })).allowed, true);
  }
  assert.equal((await throttle.emailVerification({ ip: null, realmId: "r", userId: "u" })).allowed, false);
  assert.equal((await throttle.emailVerification({ ip: null, realmId: "r", userId: "v" })).allowed, true);
  assert.equal(
    (await throttle.forgotPassword({ ip: null, realmId: "r", email: "u@example.test" })).allowed,
    true,
    "the verification counter is not the forgot-password one",
  );

  class DownStore extends MemoryCounterStore {
    override increment(): never {
      throw new Error("connection refused");
    }
  }
  const down = new RequestThrottle({ store: new DownStore({ clock }), clock, sink });
  assert.deepEqual(await down.passkeyOptions({ ip: "192.0.2.1" }), {
    allowed: true,
    retryAfterSeconds: null,
  });
  assert.equal(events.at(-1)?.kind, "abuse.counter_store_unavailable");
  assert.equal(events.at(-1)?.data?.throttle, "passkeyOptions");
});
