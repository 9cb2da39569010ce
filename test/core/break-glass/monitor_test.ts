/**
 * Break-glass health (issue 12): the drill window's edges with an injected clock (ok within it,
 * failing from the due instant on; an account never drilled is due one window after its creation,
 * so a new account is not overdue; a realm without an account is not counted), `breakglass.rotation_required` on readiness evaluations at most hourly per realm until
 * the password is rotated.
 */
import { checkedSink } from "../../support/events.ts";
import { strict as assert } from "node:assert";
import { createBreakGlassAccount, rotateBreakGlassPassword } from "../../../core/break-glass/account.ts";
import { BreakGlassDrillOverdueError, BreakGlassMonitor, DAY_MS } from "../../../core/break-glass/monitor.ts";
import { EventPublisher } from "../../../core/events/publisher.ts";
import type { SvcEvent } from "../../../core/events/sink.ts";
import { loginBed } from "../../support/login.ts";

const HOUR = 3_600_000;

Deno.test("break-glass monitor: drill window edges, hourly rotation reminders until rotation", async (t) => {
  const bed = await loginBed();
  try {
    const events: SvcEvent[] = [];
    const publisher = new EventPublisher({
      storage: bed.storage,
      sink: checkedSink((e) => void events.push(e)),
      random: bed.random,
    });
    const monitor = new BreakGlassMonitor({
      storage: bed.storage,
      clock: bed.clock,
      events: publisher,
      drillWindowMs: 90 * DAY_MS,
    });
    const core = {
      storage: bed.storage,
      passwords: bed.login.passwords,
      random: bed.random,
      clock: bed.clock,
      events: publisher,
    };
    const actor = { id: "test", kind: "System" as const };

    await t.step("a realm without a break-glass account has nothing to drill: ready", async () => {
      await monitor.check();
      assert.equal((await monitor.status(bed.realmId)).drillOverdue, false);
    });

    await t.step("an account never drilled: due one window after its creation, not before", async () => {
      const created = bed.clock.now();
      await createBreakGlassAccount(core, { realmId: bed.realmId, actor });
      const fresh = await monitor.status(bed.realmId);
      assert.equal(fresh.drillOverdue, false, "created seconds ago");
      assert.deepEqual(fresh.drillDueAt, new Date(created + 90 * DAY_MS));
      await monitor.check();
      bed.clock.advance(90 * DAY_MS - 1);
      await monitor.check();
      bed.clock.advance(1);
      assert.equal((await monitor.status(bed.realmId)).drillOverdue, true);
      await assert.rejects(monitor.check(), BreakGlassDrillOverdueError);
    });

    await t.step(
      "within the window ok; one millisecond before the due instant ok; at it overdue",
      async () => {
        const drilled = await bed.storage.breakGlass.recordDrill(bed.realmId);
        await monitor.check();
        const status = await monitor.status(bed.realmId);
        assert.deepEqual(status.drillDueAt, new Date(drilled.lastDrillAt!.getTime() + 90 * DAY_MS));
        bed.clock.advance(90 * DAY_MS - 1);
        await monitor.check();
        bed.clock.advance(1);
        await assert.rejects(
          monitor.check(),
          (e) => e instanceof BreakGlassDrillOverdueError && e.realmIds[0] === bed.realmId,
        );
        await bed.storage.breakGlass.recordDrill(bed.realmId);
        await monitor.check();
      },
    );

    const reminders = () => events.filter((e) => e.kind === "breakglass.rotation_required").length;
    await t.step("after a use: reminded on evaluations, at most once per hour", async () => {
      await bed.storage.breakGlass.recordLogin(bed.realmId); // the login emits its own first reminder
      assert.equal((await monitor.evaluate()).reminded.length, 0, "the login just reminded");
      bed.clock.advance(HOUR - 1);
      await monitor.evaluate();
      assert.equal(reminders(), 0, "59:59.999 later: not yet");
      bed.clock.advance(1);
      const results = await Promise.all([monitor.evaluate(), monitor.evaluate(), monitor.evaluate()]);
      assert.equal(results.filter((r) => r.reminded.length === 1).length, 1, "one of concurrent evaluations");
      assert.equal(reminders(), 1);
      const event = events.find((e) => e.kind === "breakglass.rotation_required")!;
      assert.equal(event.realmId, bed.realmId);
      bed.clock.advance(30 * 60_000);
      await monitor.evaluate();
      assert.equal(reminders(), 1, "half an hour later: still one");
      bed.clock.advance(30 * 60_000);
      await monitor.evaluate();
      assert.equal(reminders(), 2, "an hour after the last: again");
      assert.equal((await monitor.status(bed.realmId)).rotationRequired, true);
    });

    await t.step("a rotation clears rotation_required: no more reminders", async () => {
      await rotateBreakGlassPassword(core, { realmId: bed.realmId, actor });
      assert.equal((await monitor.status(bed.realmId)).rotationRequired, false);
      bed.clock.advance(5 * HOUR);
      await monitor.evaluate();
      assert.equal(reminders(), 2);
    });
  } finally {
    await bed.close();
  }
});
