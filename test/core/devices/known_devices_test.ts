import { checkedSink } from "../../support/events.ts";
import { strict as assert } from "node:assert";
import { ManualClock } from "../../../core/clock.ts";
import { sha256Hex } from "../../../core/digest.ts";
import { KnownDevices, NEW_DEVICE_EVENT, type NewDeviceAlert } from "../../../core/devices/known-devices.ts";
import { EventPublisher } from "../../../core/events/publisher.ts";
import { EventHub, type SvcEvent } from "../../../core/events/sink.ts";
import { seededRandom } from "../../../core/random.ts";
import { RiskGate } from "../../../core/risk/gate.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { freshEmbedded } from "../../support/db.ts";
import { seeder } from "../../support/seed.ts";

const T0 = Date.UTC(2026, 0, 1);

Deno.test("known devices: SHA-256 keys, first sighting emits the event and the alert, later ones move last seen", async (t) => {
  const database = await freshEmbedded();
  try {
    const clock = new ManualClock(T0);
    const random = seededRandom(7);
    const storage = createSqlStorage(database, { clock, random });
    const seed = seeder(database.db);
    const realm = await seed.realm();
    const alice = await seed.user(realm);
    const bob = await seed.user(realm);

    await t.step("a first sighting alerts once; a repeat only moves last seen", async () => {
      const events: SvcEvent[] = [];
      const alerts: NewDeviceAlert[] = [];
      const devices = new KnownDevices({
        store: storage.knownDevices,
        sink: checkedSink((e) => void events.push(e)),
        clock,
        onNewDevice: (alert) => void alerts.push(alert),
      });
      assert.equal(KnownDevices.fingerprintHash("fp-laptop"), sha256Hex("fp-laptop"));
      assert.equal(await devices.isKnown(alice, "fp-laptop"), false);
      const first = await devices.recordLogin({
        userId: alice,
        realmId: realm,
        fingerprint: "fp-laptop",
        description: "Firefox on Linux",
        ip: "203.0.113.9",
        location: { country: "FR" },
      });
      assert.equal(first.isNew, true);
      assert.equal(first.device.fingerprintHash, sha256Hex("fp-laptop"));
      assert.deepEqual(first.device.firstSeenAt, new Date(T0));
      assert.equal(events.length, 1);
      assert.equal(events[0].kind, NEW_DEVICE_EVENT);
      assert.deepEqual([events[0].userId, events[0].realmId], [alice, realm]);
      assert.deepEqual(events[0].data, {
        fingerprintHash: sha256Hex("fp-laptop"),
        description: "Firefox on Linux",
        ip: "203.0.113.9",
        country: "FR",
      });
      assert.equal(alerts.length, 1);
      assert.equal(alerts[0].device.fingerprintHash, sha256Hex("fp-laptop"));
      assert.equal(
        JSON.stringify(events[0]).includes("fp-laptop"),
        false,
        "the fingerprint itself is never emitted",
      );

      clock.advance(60_000);
      const again = await devices.recordLogin({ userId: alice, fingerprint: "fp-laptop" });
      assert.equal(again.isNew, false);
      assert.deepEqual(again.device.firstSeenAt, new Date(T0));
      assert.deepEqual(again.device.lastSeenAt, new Date(T0 + 60_000));
      assert.equal(again.device.description, "Firefox on Linux");
      assert.equal(events.length, 1);
      assert.equal(alerts.length, 1);
      assert.equal(await devices.isKnown(alice, "fp-laptop"), true);
      // Devices are per user.
      assert.equal(await devices.isKnown(bob, "fp-laptop"), false);
      assert.equal((await devices.recordLogin({ userId: bob, fingerprint: "fp-laptop" })).isNew, true);
      assert.equal(alerts.length, 2);
      assert.deepEqual((await devices.list(alice)).map((d) => d.fingerprintHash), [sha256Hex("fp-laptop")]);
    });

    await t.step("a failing alert hook is reported and does not fail the login", async () => {
      const reported: unknown[] = [];
      const devices = new KnownDevices({
        store: storage.knownDevices,
        sink: checkedSink(() => {}),
        clock,
        onNewDevice: () => Promise.reject(new Error("mail down")),
        onAlertError: (error) => reported.push(error),
      });
      const result = await devices.recordLogin({ userId: alice, fingerprint: "fp-phone" });
      assert.equal(result.isNew, true);
      assert.equal((reported[0] as Error).message, "mail down");
    });

    await t.step(
      "through the event publisher the new device lands in the user's security ledger",
      async () => {
        const hub = new EventHub();
        const publisher = new EventPublisher({ storage, sink: hub, random });
        const announced = new Promise<SvcEvent>((resolve) => hub.subscribe(resolve));
        const devices = new KnownDevices({ store: storage.knownDevices, sink: publisher, clock });
        await devices.recordLogin({
          userId: alice,
          realmId: realm,
          fingerprint: "fp-tablet",
          ip: "198.51.100.4",
        });
        assert.equal((await announced).kind, NEW_DEVICE_EVENT);
        const ledger = await storage.securityEvents.listByUser(alice);
        assert.equal(ledger[0].kind, NEW_DEVICE_EVENT);
      },
    );

    await t.step("the risk gate asks the known devices", async () => {
      const devices = new KnownDevices({ store: storage.knownDevices, sink: checkedSink(() => {}), clock });
      const gate = new RiskGate({ clock, sink: checkedSink(() => {}), devices });
      const known = await gate.evaluate({ userId: alice, deviceId: "fp-laptop" });
      assert.equal(known.signals[0].fired, false);
      const unknown = await gate.evaluate({ userId: alice, deviceId: "fp-stranger" });
      assert.deepEqual([unknown.signals[0].fired, unknown.score, unknown.outcome], [true, 30, "Allow"]);
      // Evaluating never records the device: only a completed login does.
      assert.equal(await devices.isKnown(alice, "fp-stranger"), false);
    });
  } finally {
    await database.close();
  }
});
