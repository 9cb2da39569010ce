/**
 * `EventPublisher.publish` (issue 29), on Postgres: an event is one statement and no transaction,
 * its ledger entry and its deliveries (matched in SQL, as `eventPatternMatches` matches them)
 * together; the event reaches the sink once, after it is recorded; a ledger failure rejects and
 * announces nothing.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../../../core/clock.ts";
import { EventPublisher } from "../../../core/events/publisher.ts";
import type { SvcEvent } from "../../../core/events/sink.ts";
import { seededRandom } from "../../../core/random.ts";
import { eventPatternMatches } from "../../../core/storage/webhooks.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { freshPostgres } from "../../support/db.ts";
import { recordSpans, stopRecording } from "../../support/spans.ts";

Deno.test("publish: one statement and no transaction, with or without subscribers (issue 29)", async () => {
  const database = await freshPostgres();
  try {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const random = seededRandom(3);
    const storage = createSqlStorage(database, { clock, random });
    const seen: SvcEvent[] = [];
    const publisher = new EventPublisher({ storage, sink: { emit: (e) => void seen.push(e) }, random });
    const realm = await storage.realms.create({ name: "p", displayName: "P", isDefault: true });
    const user = await storage.users.create({ realmId: realm.id, email: "p@example.test" });
    const event = (kind: string): SvcEvent => ({
      kind,
      realmId: realm.id,
      userId: user.id,
      occurredAt: clock.now(),
      data: { n: 1 },
    });

    let spans = recordSpans();
    try {
      await publisher.publish(event("login.failed"), { ipAddress: "192.0.2.1", deviceDescription: null });
    } finally {
      stopRecording();
    }
    const names = spans.filter((s) => s.attributes["db.system.name"] === "postgresql").map((s) => s.name);
    assert.deepEqual(names, ["WITH"]);
    assert.equal(seen.length, 1);
    const ledger = await storage.securityEvents.listByUser(user.id);
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0].ipAddress, "192.0.2.1");

    const endpoint = await storage.webhooks.createEndpoint({
      realmId: realm.id,
      url: "https://hooks.example.test/in",
      secret: "s".repeat(32),
      eventPatterns: ["login.*"],
    });
    spans = recordSpans();
    try {
      await publisher.publish(event("login.failed"));
    } finally {
      stopRecording();
    }
    const withHooks = spans.filter((s) => s.attributes["db.system.name"] === "postgresql").map((s) => s.name);
    assert.deepEqual(withHooks, ["WITH"]);
    assert.equal((await storage.securityEvents.listByUser(user.id)).length, 2);
    const deliveries = await storage.webhooks.listDeliveries(endpoint.id);
    assert.equal(deliveries.length, 1);
    assert.equal(deliveries[0].eventKind, "login.failed");
    assert.equal(seen.length, 2);

    // A kind outside the ledger and without subscribers: nothing written, still announced.
    await publisher.publish(event("token.issued"));
    assert.equal((await storage.securityEvents.listByUser(user.id)).length, 2);
    assert.equal(seen.length, 3);

    // The ledger refuses (a realm id that is not a uuid): rejected, not announced.
    await assert.rejects(
      publisher.publish({ ...event("login.failed"), realmId: undefined, userId: "not-a-uuid" }),
    );
    assert.equal(seen.length, 3);
  } finally {
    await database.close();
  }
});

Deno.test("publish: the statement's pattern match is eventPatternMatches (`*` any text; %, _ and \\ literal)", async () => {
  const database = await freshPostgres();
  try {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const random = seededRandom(5);
    const storage = createSqlStorage(database, { clock, random });
    const publisher = new EventPublisher({ storage, sink: { emit: () => {} }, random });
    const realm = await storage.realms.create({ name: "q", displayName: "Q", isDefault: true });
    const patterns = [
      "login.*",
      "*",
      "login.new_device",
      "login.new%device",
      "login_new_device",
      "*.failed",
      "lo*in.*ed",
      "%",
      "_ogin.failed",
      "login.failed*",
      "*login*",
      "a\\b*",
      "token.*",
    ];
    const endpoints = [];
    for (const pattern of patterns) {
      endpoints.push(
        await storage.webhooks.createEndpoint({
          realmId: realm.id,
          url: "https://hooks.example.test/in",
          secret: "s".repeat(32),
          eventPatterns: [pattern],
        }),
      );
    }
    for (
      const kind of ["login.failed", "login.new_device", "login.newXdevice", "a\\bc", "abc", "token.issued"]
    ) {
      await publisher.publish({ kind, realmId: realm.id, occurredAt: clock.now(), data: {} });
    }
    for (const [i, endpoint] of endpoints.entries()) {
      const got = (await storage.webhooks.listDeliveries(endpoint.id)).map((d) => d.eventKind).sort();
      const want = ["login.failed", "login.new_device", "login.newXdevice", "a\\bc", "abc", "token.issued"]
        .filter((kind) => eventPatternMatches(patterns[i], kind)).sort();
      assert.deepEqual(got, want, patterns[i]);
    }
  } finally {
    await database.close();
  }
});

Deno.test("emit: settled() waits for every fire-and-forget event, so a shutdown loses none", async () => {
  const database = await freshPostgres();
  try {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const random = seededRandom(7);
    const storage = createSqlStorage(database, { clock, random });
    const seen: SvcEvent[] = [];
    const errors: unknown[] = [];
    const publisher = new EventPublisher({
      storage,
      sink: { emit: (e) => void seen.push(e) },
      random,
      onError: (error) => void errors.push(error),
    });
    const realm = await storage.realms.create({ name: "s", displayName: "S", isDefault: true });
    const user = await storage.users.create({ realmId: realm.id, email: "s@example.test" });
    for (let i = 0; i < 30; i++) {
      publisher.emit({
        kind: "login.failed",
        realmId: realm.id,
        userId: user.id,
        occurredAt: clock.now(),
        data: {},
      });
    }
    assert.ok(seen.length < 30, "the events are still on their way when emit returns");
    await publisher.settled();
    assert.equal(seen.length, 30);
    assert.deepEqual(errors, []);
    assert.equal((await storage.securityEvents.listByUser(user.id, { limit: 100 })).length, 30);
    // Nothing in flight: settles at once.
    await publisher.settled();
  } finally {
    await database.close();
  }
});
