import { checkedSink } from "../../support/events.ts";
import { strict as assert } from "node:assert";
import { sql } from "kysely";
import { TestCaptchaProvider } from "../../../core/abuse/captcha.ts";
import { type CounterStore, MemoryCounterStore } from "../../../core/abuse/counter-store.ts";
import {
  ABUSE_BLOCKED,
  ABUSE_COUNTER_STORE_UNAVAILABLE,
  AbuseGate,
  type AbuseGateOptions,
  type AbuseLimits,
  DEFAULT_ABUSE_LIMITS,
  type LoginAttempt,
} from "../../../core/abuse/gate.ts";
import { ManualClock } from "../../../core/clock.ts";
import { loadConfig } from "../../../core/config/load.ts";
import { StorageError } from "../../../core/errors.ts";
import type { SvcEvent } from "../../../core/events/sink.ts";
import { createSqlCounterStore } from "../../../storage/sql/abuse-counters.ts";
import { freshEmbedded, freshPostgres } from "../../support/db.ts";

const T0 = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;

interface Setup {
  readonly store: (clock: ManualClock) => CounterStore;
  readonly clear: () => Promise<void>;
  readonly close: () => Promise<void>;
}

const setups: { name: string; open: () => Promise<Setup> }[] = [
  {
    name: "memory",
    open: () =>
      Promise.resolve({
        store: (clock) => new MemoryCounterStore({ clock }),
        clear: () => Promise.resolve(),
        close: () => Promise.resolve(),
      }),
  },
  ...[{ name: "sql/pglite", open: freshEmbedded }, { name: "sql/postgres", open: () => freshPostgres() }].map(
    (
      driver,
    ) => ({
      name: driver.name,
      open: async (): Promise<Setup> => {
        const database = await driver.open();
        return {
          store: (clock: ManualClock) => createSqlCounterStore(database.db, { clock }),
          clear: async () => {
            await sql`DELETE FROM abuse_counters`.execute(database.db);
          },
          close: () => database.close(),
        };
      },
    }),
  ),
];

function recorder() {
  const events: SvcEvent[] = [];
  return { events, sink: checkedSink((e: SvcEvent) => void events.push(e)) };
}

function limits(overrides: Partial<Record<keyof AbuseLimits, Record<string, unknown>>>): AbuseLimits {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(DEFAULT_ABUSE_LIMITS)) {
    out[key] = { ...value, ...(overrides[key as keyof AbuseLimits] ?? {}) };
  }
  return out as unknown as AbuseLimits;
}

for (const setup of setups) {
  Deno.test(`abuse gate: each layer trips at its exact limit and resets after its window (${setup.name})`, async (t) => {
    const env = await setup.open();
    const gateWith = (clock: ManualClock, options: Partial<AbuseGateOptions> = {}) => {
      const { sink, events } = recorder();
      return { gate: new AbuseGate({ store: env.store(clock), clock, sink, ...options }), events };
    };
    try {
      await t.step("per IP: 30 attempts per 5 minutes", async () => {
        await env.clear();
        const clock = new ManualClock(T0);
        const { gate, events } = gateWith(clock);
        const attempt = (i: number): LoginAttempt => ({
          ip: "203.0.113.7",
          identifier: `user${i}@example.com`,
        });
        for (let i = 1; i <= 30; i++) {
          const d = await gate.check(attempt(i));
          assert.equal(d.outcome, "Allowed", `attempt ${i}`);
          assert.equal(d.layers.find((l) => l.layer === "perIp")!.count, i);
        }
        const blocked = await gate.check(attempt(31));
        assert.equal(blocked.outcome, "Blocked");
        assert.deepEqual(blocked.layers.filter((l) => l.state === "blocked").map((l) => l.layer), ["perIp"]);
        assert.equal(blocked.retryAfterSeconds, 300);
        assert.equal(events.at(-1)!.kind, ABUSE_BLOCKED);
        // Another IP is unaffected.
        assert.equal(
          (await gate.check({ ip: "203.0.113.8", identifier: "x@example.com" })).outcome,
          "Allowed",
        );
        clock.advance(5 * MINUTE - 1000);
        const stillBlocked = await gate.check(attempt(32));
        assert.equal(stillBlocked.outcome, "Blocked");
        assert.equal(stillBlocked.retryAfterSeconds, 1);
        clock.advance(1000);
        const after = await gate.check(attempt(33));
        assert.equal(after.outcome, "Allowed");
        assert.equal(after.layers.find((l) => l.layer === "perIp")!.count, 1);
      });

      await t.step("per IP and account: 10 attempts per 15 minutes", async () => {
        await env.clear();
        const clock = new ManualClock(T0);
        const { gate } = gateWith(clock);
        const attempt = { ip: "198.51.100.20", identifier: "Alice@Example.com", realmId: "r1" };
        // Right passwords: each attempt gives its lockout slot back, so only this layer counts.
        const check = async (a: LoginAttempt) => {
          const d = await gate.check(a);
          await gate.release(a, d);
          return d;
        };
        for (let i = 1; i <= 10; i++) {
          assert.equal((await check(attempt)).outcome, "Allowed", `attempt ${i}`);
        }
        // The identifier is normalised: case and spaces do not make a new account.
        const blocked = await check({ ...attempt, identifier: "  alice@example.COM " });
        assert.equal(blocked.outcome, "Blocked");
        assert.deepEqual(blocked.layers.filter((l) => l.state === "blocked").map((l) => l.layer), [
          "perIpAccount",
        ]);
        assert.equal(blocked.retryAfterSeconds, 900);
        // Another account from the same IP, the same account from another IP or realm: allowed.
        assert.equal((await check({ ...attempt, identifier: "bob@example.com" })).outcome, "Allowed");
        assert.equal((await check({ ...attempt, ip: "198.51.100.21" })).outcome, "Allowed");
        assert.equal((await check({ ...attempt, realmId: "r2" })).outcome, "Allowed");
        clock.advance(15 * MINUTE - 1);
        assert.equal((await check(attempt)).outcome, "Blocked");
        clock.advance(1);
        assert.equal((await check(attempt)).outcome, "Allowed");
      });

      await t.step("account lockout: 5 failures per 15 minutes, from any IP", async () => {
        await env.clear();
        const clock = new ManualClock(T0);
        const { gate } = gateWith(clock);
        const from = (n: number) => ({ ip: `192.0.2.${n}`, identifier: "carol@example.com" });
        for (let i = 1; i <= 5; i++) {
          // The attempt holds its slot from the check on: without a release it is a failure.
          const d = await gate.check(from(i));
          assert.equal(d.outcome, "Allowed", `attempt ${i}`);
          assert.equal(d.layers.find((l) => l.layer === "accountLockout")!.count, i);
          assert.notEqual(d.reservation, null);
          clock.advance(MINUTE);
        }
        const blocked = await gate.check(from(6));
        assert.equal(blocked.outcome, "Blocked");
        assert.deepEqual(blocked.layers.filter((l) => l.state === "blocked").map((l) => l.layer), [
          "accountLockout",
        ]);
        // The window started at the first failure: 10 minutes have passed, 5 remain.
        assert.equal(blocked.retryAfterSeconds, 600);
        assert.equal((await gate.check({ ...from(7), identifier: "dave@example.com" })).outcome, "Allowed");
        clock.advance(10 * MINUTE - 1);
        assert.equal((await gate.check(from(8))).outcome, "Blocked");
        clock.advance(1);
        assert.equal((await gate.check(from(9))).outcome, "Allowed");

        // A success clears the failures.
        for (let i = 0; i < 4; i++) await gate.check(from(10));
        await gate.recordSuccess(from(10));
        const cleared = await gate.check(from(11));
        assert.equal(cleared.layers.find((l) => l.layer === "accountLockout")!.count, 1);
        // A right password gives its slot back: it is no failure.
        await gate.release(from(11), cleared);
        assert.equal((await gate.check(from(12))).layers.find((l) => l.layer === "accountLockout")!.count, 1);
      });

      await t.step("account lockout: concurrent attempts never get more than the limit", async () => {
        await env.clear();
        const clock = new ManualClock(T0);
        const { gate } = gateWith(clock, { limits: limits({ perIp: { limit: 1000 } }) });
        const decisions = await Promise.all(
          Array.from(
            { length: 30 },
            (_, i) => gate.check({ ip: `192.0.2.${1 + (i % 5)}`, identifier: "race@example.com" }),
          ),
        );
        const allowed = decisions.filter((d) => d.outcome === "Allowed");
        assert.equal(allowed.length, 5);
        // Two right passwords give their slots back: exactly two more get through, however many race.
        await gate.release({ ip: "192.0.2.1", identifier: "race@example.com" }, allowed[0]);
        await gate.release({ ip: "192.0.2.1", identifier: "race@example.com" }, allowed[1]);
        const again = await Promise.all(
          Array.from(
            { length: 20 },
            (_, i) => gate.check({ ip: `192.0.2.${1 + (i % 5)}`, identifier: "race@example.com" }),
          ),
        );
        assert.equal(again.filter((d) => d.outcome === "Allowed").length, 2);
        // A blocked attempt holds no slot, and releasing it gives nothing back.
        const blocked = again.find((d) => d.outcome === "Blocked")!;
        assert.equal(blocked.reservation, null);
        await gate.release({ ip: "192.0.2.1", identifier: "race@example.com" }, blocked);
        assert.equal(
          (await gate.check({ ip: "192.0.2.9", identifier: "race@example.com" })).outcome,
          "Blocked",
        );
      });

      await t.step("credential stuffing: 200 distinct identifiers per IP per 10 minutes", async () => {
        await env.clear();
        const clock = new ManualClock(T0);
        const { gate } = gateWith(clock, { limits: limits({ perIp: { limit: 100_000 } }) });
        const attempt = (i: number) => ({ ip: "2001:db8:1:2::99", identifier: `victim${i}@example.com` });
        for (let i = 1; i <= 200; i++) {
          const d = await gate.check(attempt(i));
          if (d.outcome !== "Allowed") assert.fail(`attempt ${i}: ${d.outcome}`);
        }
        // Repeating a known identifier adds nothing.
        const repeat = await gate.check(attempt(1));
        assert.equal(repeat.outcome, "Allowed");
        assert.equal(repeat.layers.find((l) => l.layer === "credentialStuffing")!.count, 200);
        const blocked = await gate.check(attempt(201));
        assert.equal(blocked.outcome, "Blocked");
        assert.deepEqual(blocked.layers.filter((l) => l.state === "blocked").map((l) => l.layer), [
          "credentialStuffing",
        ]);
        // IPv6 is counted per /64: another address of the prefix is the same client.
        assert.equal(
          (await gate.check({ ip: "2001:db8:1:2::1", identifier: "victim1@example.com" })).outcome,
          "Blocked",
        );
        assert.equal(
          (await gate.check({ ip: "2001:db8:1:3::1", identifier: "victim1@example.com" })).outcome,
          "Allowed",
        );
        clock.advance(10 * MINUTE);
        const after = await gate.check(attempt(202));
        assert.equal(after.outcome, "Allowed");
        assert.equal(after.layers.find((l) => l.layer === "credentialStuffing")!.count, 1);
      });

      await t.step("adaptive CAPTCHA engages past half a limit; blocking wins", async () => {
        await env.clear();
        const clock = new ManualClock(T0);
        const captcha = new TestCaptchaProvider({ siteKey: "site-1" });
        const { gate } = gateWith(clock, { captcha });
        const attempt = (i: number, captchaToken?: string): LoginAttempt => ({
          ip: "203.0.113.50",
          identifier: `u${i}@example.com`,
          captchaToken,
        });
        for (let i = 1; i <= 15; i++) {
          assert.equal((await gate.check(attempt(i, "test-pass"))).outcome, "Allowed");
        }
        assert.equal(captcha.calls.length, 0, "no CAPTCHA is verified below the threshold");
        const demanded = await gate.check(attempt(16));
        assert.equal(demanded.outcome, "CaptchaRequired");
        assert.deepEqual(demanded.captcha, { provider: "test", siteKey: "site-1", errorCodes: [] });
        const wrong = await gate.check(attempt(17, "nope"));
        assert.equal(wrong.outcome, "CaptchaRequired");
        assert.deepEqual(wrong.captcha!.errorCodes, ["invalid-input-response"]);
        for (let i = 18; i <= 30; i++) {
          const d = await gate.check(attempt(i, "test-pass"));
          assert.equal(d.outcome, "Allowed");
          assert.equal(d.captchaVerified, true);
        }
        assert.deepEqual(captcha.calls.at(-1), { token: "test-pass", remoteIp: "203.0.113.50" });
        assert.equal((await gate.check(attempt(31, "test-pass"))).outcome, "Blocked");

        // The lockout layer: after 2 of 5 failures, a CAPTCHA is demanded.
        const victim = { ip: "203.0.113.60", identifier: "erin@example.com" };
        assert.equal((await gate.check(victim)).outcome, "Allowed"); // failure 1
        assert.equal((await gate.check(victim)).outcome, "Allowed"); // failure 2
        const demandedAgain = await gate.check(victim);
        assert.equal(demandedAgain.outcome, "CaptchaRequired");
        assert.equal(demandedAgain.reservation, null, "an attempt sent to the CAPTCHA holds no slot");
        const solved = await gate.check({ ...victim, captchaToken: "test-pass" });
        assert.equal(solved.outcome, "Allowed");
        assert.equal(solved.layers.find((l) => l.layer === "accountLockout")!.count, 3);
      });
    } finally {
      await env.close();
    }
  });
}

/** A store whose chosen operations throw as a store that is down does. */
function brokenStore(clock: ManualClock, broken: ReadonlySet<keyof CounterStore>): CounterStore {
  const inner = new MemoryCounterStore({ clock });
  const fail = () => Promise.reject(new StorageError("counter store unreachable"));
  return {
    increment: (k, w) => broken.has("increment") ? fail() : inner.increment(k, w),
    reserve: (k, l, w) => broken.has("reserve") ? fail() : inner.reserve(k, l, w),
    release: (k, r) => broken.has("release") ? fail() : inner.release(k, r),
    peek: (k) => broken.has("peek") ? fail() : inner.peek(k),
    reset: (k) => broken.has("reset") ? fail() : inner.reset(k),
    addDistinct: (k, m, w) => broken.has("addDistinct") ? fail() : inner.addDistinct(k, m, w),
    purgeExpired: () => broken.has("purgeExpired") ? fail() : inner.purgeExpired(),
  };
}

const ALL: ReadonlySet<keyof CounterStore> = new Set([
  "increment",
  "reserve",
  "release",
  "peek",
  "reset",
  "addDistinct",
  "purgeExpired",
]);

Deno.test("abuse gate: counter store down fails open by default, with the event", async () => {
  const clock = new ManualClock(T0);
  const { sink, events } = recorder();
  const gate = new AbuseGate({ store: brokenStore(clock, ALL), clock, sink });
  const attempt = { ip: "192.0.2.1", identifier: "a@example.com", realmId: "realm-1" };
  for (let i = 0; i < 40; i++) assert.equal((await gate.check(attempt)).outcome, "Allowed");
  const d = await gate.check(attempt);
  assert.deepEqual(d.layers.map((l) => l.state), [
    "unavailable",
    "unavailable",
    "unavailable",
    "unavailable",
  ]);
  const unavailable = events.filter((e) => e.kind === ABUSE_COUNTER_STORE_UNAVAILABLE);
  assert.equal(unavailable.length, 41);
  assert.equal(unavailable[0].realmId, "realm-1");
  assert.deepEqual(unavailable[0].data.layers, [
    { layer: "perIp", failMode: "open" },
    { layer: "perIpAccount", failMode: "open" },
    { layer: "accountLockout", failMode: "open" },
    { layer: "credentialStuffing", failMode: "open" },
  ]);
  assert.equal(unavailable[0].data.error, "counter store unreachable");
  assert.equal(events.some((e) => e.kind === ABUSE_BLOCKED), false);

  // A store that answered the reservation but fails its release: reported, never thrown.
  const flaky = new AbuseGate({ store: brokenStore(clock, new Set(["release", "reset"])), clock, sink });
  const held = await flaky.check(attempt);
  assert.notEqual(held.reservation, null);
  await flaky.release(attempt, held);
  await flaky.recordSuccess(attempt);
  assert.deepEqual(events.slice(-2).map((e) => [e.kind, e.data.operation]), [
    [ABUSE_COUNTER_STORE_UNAVAILABLE, "release"],
    [ABUSE_COUNTER_STORE_UNAVAILABLE, "recordSuccess"],
  ]);
});

Deno.test("abuse gate: a fail-closed layer blocks when the store is down; the others still count", async () => {
  const clock = new ManualClock(T0);
  const { sink, events } = recorder();
  // Only the distinct sets are down.
  const partial = new AbuseGate({ store: brokenStore(clock, new Set(["addDistinct"])), clock, sink });
  const attempt = { ip: "192.0.2.2", identifier: "b@example.com" };
  const open = await partial.check(attempt);
  assert.equal(open.outcome, "Allowed");
  assert.deepEqual(open.layers.map((l) => l.state), ["ok", "ok", "ok", "unavailable"]);
  assert.deepEqual(events.at(-1)!.data.layers, [{ layer: "credentialStuffing", failMode: "open" }]);

  const closed = new AbuseGate({
    store: brokenStore(clock, new Set(["addDistinct"])),
    clock,
    sink,
    limits: limits({ credentialStuffing: { failMode: "closed" } }),
  });
  const d = await closed.check(attempt);
  assert.equal(d.outcome, "Blocked");
  assert.equal(d.retryAfterSeconds, null);
  assert.deepEqual(events.at(-2)!.data.layers, [{ layer: "credentialStuffing", failMode: "closed" }]);
  assert.equal(events.at(-1)!.kind, ABUSE_BLOCKED);
  assert.deepEqual(events.at(-1)!.data.failClosed, ["credentialStuffing"]);

  // Fail-closed from the configuration (SVC_ABUSE_PER_IP_FAIL_MODE=closed).
  const { config } = loadConfig({ env: { SVC_ABUSE_PER_IP_FAIL_MODE: "closed" } });
  const fromConfig = AbuseGate.fromConfig(config.abuse, { store: brokenStore(clock, ALL), clock, sink });
  assert.equal((await fromConfig.check(attempt)).outcome, "Blocked");
  const fromDefaults = AbuseGate.fromConfig(loadConfig({ env: {} }).config.abuse, {
    store: brokenStore(clock, ALL),
    clock,
    sink,
  });
  assert.equal((await fromDefaults.check(attempt)).outcome, "Allowed");
});

Deno.test("abuse gate: the defaults are spec section 8", () => {
  const { config } = loadConfig({ env: {} });
  assert.deepEqual(
    {
      perIp: config.abuse.perIp,
      perIpAccount: config.abuse.perIpAccount,
      accountLockout: config.abuse.accountLockout,
      credentialStuffing: config.abuse.credentialStuffing,
    },
    DEFAULT_ABUSE_LIMITS,
  );
});
