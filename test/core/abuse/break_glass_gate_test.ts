/**
 * The abuse gate's break-glass accounts (issue 25): whatever failures some addresses pile up on
 * the emergency account, an address that has not failed is never blocked by them, and a new
 * credential stamp (a rotation) unblocks every address. An ordinary account, for contrast, is
 * locked out account-wide.
 */
import { checkedSink } from "../../support/events.ts";
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { MemoryCounterStore } from "../../../core/abuse/counter-store.ts";
import { AbuseGate, DEFAULT_ABUSE_LIMITS } from "../../../core/abuse/gate.ts";
import { ManualClock } from "../../../core/clock.ts";

const LIMITS = { ...DEFAULT_ABUSE_LIMITS, perIp: { ...DEFAULT_ABUSE_LIMITS.perIp, limit: 1000 } };

function gate() {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  return new AbuseGate({
    store: new MemoryCounterStore({ clock }),
    clock,
    sink: checkedSink(() => {}),
    limits: LIMITS,
  });
}

const attempt = (ip: string, stamp: string | null) => ({
  ip,
  identifier: "break-glass@example.test",
  realmId: "realm-1",
  breakGlassStamp: stamp,
});

Deno.test("abuse gate: strangers' failures never lock a break-glass account out elsewhere", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 40 }),
      async (attackers) => {
        const g = gate();
        // Each attempt fails: its lockout slot stays.
        for (const host of attackers) await g.check(attempt(`198.51.100.${host}`, "stamp-1"));
        const owner = await g.check(attempt("203.0.113.77", "stamp-1"));
        assert.equal(owner.outcome, "Allowed");
        const rotated = await g.check(attempt(`198.51.100.${attackers[0]}`, "stamp-2"));
        assert.equal(rotated.outcome, "Allowed", "a rotation resets the attacker's own lockout too");
      },
    ),
    { numRuns: 50 },
  );
});

Deno.test("abuse gate: a break-glass address is still limited, an ordinary account locks account-wide", async () => {
  const g = gate();
  const limit = LIMITS.accountLockout.limit;
  for (let i = 0; i < limit; i++) {
    assert.equal((await g.check(attempt("198.51.100.1", "s"))).outcome, "Allowed");
  }
  assert.equal((await g.check(attempt("198.51.100.1", "s"))).outcome, "Blocked");
  for (let i = 0; i < limit; i++) {
    assert.equal((await g.check(attempt("198.51.100.1", null))).outcome, "Allowed");
  }
  assert.equal((await g.check(attempt("198.51.100.2", null))).outcome, "Blocked", "ordinary: account-wide");
});
