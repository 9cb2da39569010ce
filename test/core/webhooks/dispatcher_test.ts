import { strict as assert } from "node:assert";
import { ManualClock } from "../../../core/clock.ts";
import { EventPublisher } from "../../../core/events/publisher.ts";
import { EventHub, type SvcEvent } from "../../../core/events/sink.ts";
import { seededRandom } from "../../../core/random.ts";
import { WebhookDispatcher, type WebhookDispatcherOptions } from "../../../core/webhooks/dispatcher.ts";
import { testOutbound } from "../../support/outbound.ts";
import { WEBHOOK_RETRY_DELAYS_MS } from "../../../core/storage/webhooks.ts";
import { createSqlStorage, type Storage } from "../../../storage/storage.ts";
import { freshEmbedded } from "../../support/db.ts";
import { seeder } from "../../support/seed.ts";
import { independentVerify, startReceiver } from "../../support/webhook-receiver.ts";

const MIN = 60_000;

Deno.test("webhook dispatcher against a loopback receiver", async (t) => {
  const database = await freshEmbedded();
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const random = seededRandom(7);
  const storage = createSqlStorage(database, { clock, random });
  const hub = new EventHub();
  const seen: SvcEvent[] = [];
  hub.subscribe((e) => {
    seen.push(e);
  });
  const publisher = new EventPublisher({ storage, sink: hub, random });
  const realm = await seeder(database.db).realm();
  const secrets = new Set<string>();
  const receiver = startReceiver({
    secrets: () => [...secrets],
    nowSeconds: () => Math.floor(clock.now() / 1000),
  });
  const dispatcher = (over: Partial<WebhookDispatcherOptions> = {}) =>
    new WebhookDispatcher({
      storage,
      outbound: testOutbound({ allowPrivate: ["127.0.0.1"] }),
      clock,
      publisher,
      // Long enough for a loaded machine (test modules run in parallel); the hang outlasts it.
      timeoutMs: 2_000,
      ...over,
    });
  let n = 0;
  const endpoint = async (patterns: string[], url = receiver.url) => {
    const secret = `whsec_test_${++n}`;
    secrets.add(secret);
    return await storage.webhooks.createEndpoint({ realmId: realm, url, secret, eventPatterns: patterns });
  };
  const emit = (kind: string, data: Record<string, unknown> = {}) =>
    publisher.transaction((_tx, send) =>
      send({ kind, occurredAt: clock.now(), realmId: realm, orgId: null, userId: null, data })
    );
  const deliveriesOf = async (endpointId: string) =>
    await storage.webhooks.listDeliveries(endpointId, { limit: 500 });

  try {
    await t.step(
      "exact retry schedule over 500s, a timeout, a refused connection; dead-letter; replay",
      async () => {
        const ep = await endpoint(["login.*"]);
        await emit("login.succeeded", { attempt: "schedule" });
        const [delivery] = await deliveriesOf(ep.id);
        const d = dispatcher();
        // Attempt 1: 500. Attempt 2: the receiver hangs past the timeout. Attempt 3: nothing listens.
        // Attempt 4: a redirect (never followed, a failure). Attempts 5 and 6: 500.
        receiver.faults.push("500", "timeout");
        const faultsAfter: Record<number, () => Promise<void> | void> = {
          3: () => receiver.stop(),
          4: () => {
            receiver.restart();
            receiver.faults.push({ status: 302 }, "500", "500");
          },
        };
        const before = receiver.received.length;
        for (let attempt = 1; attempt <= 6; attempt++) {
          await faultsAfter[attempt]?.();
          if (attempt > 1) {
            const delay = WEBHOOK_RETRY_DELAYS_MS[attempt - 2];
            clock.advance(delay - 1);
            assert.deepEqual(await d.runOnce(), [], `attempt ${attempt} is not due 1 ms early`);
            clock.advance(1);
          }
          const outcomes = await d.runOnce();
          assert.equal(outcomes.length, 1, `attempt ${attempt}`);
          assert.equal(outcomes[0].ok, false);
          const after = (await storage.webhooks.getDelivery(delivery.id))!;
          assert.equal(after.attempts, attempt);
          if (attempt === 3) {
            // Nothing listens: a readable reason, not the runtime's "TypeError: fetch failed".
            assert.equal(after.lastError, "could not connect: connection refused");
          }
          // Failed attempts with retries left are not failed deliveries.
          assert.equal(
            (await storage.webhooks.getEndpoint(ep.id))!.consecutiveFailures,
            attempt < 6 ? 0 : 1,
          );
          if (attempt < 6) {
            assert.equal(after.status, "retrying");
            assert.equal(after.nextAttemptAt.getTime() - clock.now(), WEBHOOK_RETRY_DELAYS_MS[attempt - 1]);
          } else {
            assert.equal(after.status, "dead_letter");
          }
        }
        const outcomesErrors = (await storage.webhooks.getDelivery(delivery.id))!;
        assert.equal(outcomesErrors.lastError, "receiver answered 500");
        const got = receiver.received.slice(before);
        assert.deepEqual(got.map((r) => r.answered), ["500", "timeout", { status: 302 }, "500", "500"]);
        assert.ok(
          got.every((r) => r.deliveryId === delivery.id && r.verified && r.eventKind === "login.succeeded"),
        );
        // The schedule is 1m, 5m, 30m, 2h, 12h: nothing is due ever again.
        clock.advance(30 * 86_400_000);
        assert.deepEqual(await d.runOnce(), []);
        assert.equal((await storage.webhooks.getEndpoint(ep.id))!.consecutiveFailures, 1);
        const dead = await storage.webhooks.listDeliveries(ep.id, { status: "dead_letter" });
        assert.deepEqual(dead.map((x) => x.id), [delivery.id]);

        assert.equal(await storage.webhooks.requeueDeadLetter(delivery.id), true);
        const replayed = await d.runOnce();
        assert.equal(replayed.length, 1);
        assert.equal(replayed[0].ok, true);
        assert.equal(receiver.received.at(-1)!.deliveryId, delivery.id);
        assert.equal((await storage.webhooks.getDelivery(delivery.id))!.status, "succeeded");
        assert.equal((await storage.webhooks.getEndpoint(ep.id))!.consecutiveFailures, 0);
        await storage.webhooks.deleteEndpoint(ep.id);
      },
    );

    await t.step(
      "first attempts never disable: 12 deliveries failing twice within 2 minutes leave the endpoint enabled",
      async () => {
        // The incident: an endpoint disabled 2 minutes after creation because first attempts counted.
        const ep = await endpoint(["org.*"]);
        const d = dispatcher();
        for (let i = 0; i < 12; i++) await emit("org.updated", { i });
        receiver.faults.push(...Array(12).fill("500"));
        const first = await d.runOnce();
        assert.equal(first.length, 12);
        assert.ok(first.every((o) => !o.ok && !o.endpointDisabled && o.status === "retrying"));
        clock.advance(MIN);
        receiver.faults.push(...Array(12).fill("500"));
        const second = await d.runOnce();
        assert.equal(second.length, 12);
        assert.ok(second.every((o) => !o.ok && !o.endpointDisabled && o.status === "retrying"));
        const after = (await storage.webhooks.getEndpoint(ep.id))!;
        assert.equal(after.enabled, true);
        assert.equal(after.consecutiveFailures, 0);
        assert.equal(seen.filter((e) => e.kind === "webhook.endpoint_disabled").length, 0);
        await storage.webhooks.deleteEndpoint(ep.id);
      },
    );

    await t.step(
      "10 consecutive failed deliveries (retries exhausted) disable the endpoint and emit webhook.endpoint_disabled",
      async () => {
        // A receiver's token in the query string must not travel in the event.
        const ep = await endpoint(["user.*"], `${receiver.url}?token=query-secret`);
        const watcher = await endpoint(["webhook.*"]);
        // One retry a minute after the first attempt, then dead-letter.
        const d = dispatcher({ retryDelaysMs: [MIN] });
        for (let i = 0; i < 9; i++) await emit("user.updated", { i });
        receiver.faults.push(...Array(9).fill("500"));
        assert.ok((await d.runOnce()).every((o) => !o.ok && o.status === "retrying"));
        assert.equal((await storage.webhooks.getEndpoint(ep.id))!.consecutiveFailures, 0);
        clock.advance(MIN);
        receiver.faults.push(...Array(9).fill("500"));
        assert.ok((await d.runOnce()).every((o) => !o.ok && o.status === "dead_letter"));
        assert.equal((await storage.webhooks.getEndpoint(ep.id))!.consecutiveFailures, 9);

        // A success resets the count.
        await emit("user.updated", { i: "ok" });
        assert.deepEqual((await d.runOnce()).map((o) => o.ok), [true]);
        assert.equal((await storage.webhooks.getEndpoint(ep.id))!.consecutiveFailures, 0);

        for (let i = 0; i < 10; i++) await emit("user.updated", { i });
        receiver.faults.push(...Array(10).fill("500"));
        const firsts = await d.runOnce();
        assert.equal(firsts.length, 10);
        assert.ok(firsts.every((o) => !o.endpointDisabled));
        assert.equal((await storage.webhooks.getEndpoint(ep.id))!.enabled, true);
        // A later delivery whose first attempt fails in the same batch as the ten last attempts.
        await emit("user.updated", { i: "late" });
        clock.advance(MIN);
        receiver.faults.push(...Array(11).fill("500"));
        const outcomes = await d.runOnce();
        assert.equal(outcomes.length, 11);
        assert.equal(outcomes.filter((o) => o.endpointDisabled).length, 1);
        assert.equal(outcomes.filter((o) => o.status === "dead_letter").length, 10);
        const disabled = (await storage.webhooks.getEndpoint(ep.id))!;
        assert.equal(disabled.enabled, false);
        assert.equal(disabled.consecutiveFailures, 10);
        const events = seen.filter((e) => e.kind === "webhook.endpoint_disabled");
        assert.equal(events.length, 1);
        assert.equal(events[0].data.endpointId, ep.id);
        const { origin, pathname } = new URL(receiver.url);
        assert.equal(events[0].data.url, `${origin}${pathname}`);
        const head = (await storage.adminAudit.head(realm))!;
        assert.equal(head.action, "webhook.endpoint.disable");
        assert.equal(head.actorKind, "System");
        assert.equal(head.target, ep.id);
        assert.equal((await storage.adminAudit.verify(realm)).valid, true);

        // Disabled endpoints are not claimed, even when their retries fall due.
        clock.advance(MIN);
        const watcherOutcomes = await d.runOnce();
        assert.deepEqual(watcherOutcomes.map((o) => o.endpointId), [watcher.id]);
        const last = receiver.received.at(-1)!;
        assert.equal(last.eventKind, "webhook.endpoint_disabled");
        assert.equal(JSON.parse(last.body).data.endpointId, ep.id);
        assert.ok(!last.body.includes("query-secret"));
        assert.ok(last.verified);
        // Re-enabling resets the count; its pending retry flows again.
        await storage.webhooks.updateEndpoint(ep.id, { enabled: true });
        const resumed = await d.drain();
        assert.equal(resumed.length, 1);
        assert.ok(resumed.every((o) => o.ok && o.endpointId === ep.id));
        await storage.webhooks.deleteEndpoint(ep.id);
        await storage.webhooks.deleteEndpoint(watcher.id);
      },
    );

    await t.step(
      "a dispatcher killed mid-batch, then restarted: at least once, same X-Svc-Delivery",
      async () => {
        const ep = await endpoint(["mfa.*"]);
        for (let i = 0; i < 12; i++) await emit("mfa.challenged", { i });
        const ids = (await deliveriesOf(ep.id)).map((x) => x.id);
        assert.equal(ids.length, 12);
        const before = receiver.received.length;
        // The first process records 5 outcomes, then freezes forever: sent but never recorded.
        let recorded = 0;
        const frozen: Storage = {
          ...storage,
          webhooks: {
            ...storage.webhooks,
            markSucceeded: (...args) =>
              recorded++ < 5 ? storage.webhooks.markSucceeded(...args) : new Promise(() => {}),
          },
        };
        void dispatcher({ storage: frozen, batchSize: 8, concurrency: 2 }).runOnce();
        for (let i = 0; i < 500 && receiver.received.length < before + 7; i++) {
          await new Promise((r) => setTimeout(r, 10));
        }
        assert.equal(receiver.received.length - before, 7, "two workers: 5 recorded + 2 sent, unrecorded");

        const restarted = dispatcher();
        // The 4 never-claimed deliveries go at once; the 3 the dead process claimed wait for the lease.
        assert.equal((await restarted.drain()).length, 4);
        clock.advance(60_000);
        assert.equal((await restarted.drain()).length, 3);
        const got = receiver.received.slice(before);
        assert.equal(got.length, 14);
        const counts = new Map<string, number>();
        for (const r of got) counts.set(r.deliveryId!, (counts.get(r.deliveryId!) ?? 0) + 1);
        assert.deepEqual([...counts.keys()].sort(), [...ids].sort(), "every delivery arrived");
        assert.equal([...counts.values()].filter((c) => c === 2).length, 2, "the two unrecorded ones twice");
        for (const [id, count] of counts) {
          if (count === 2) {
            const bodies = got.filter((r) => r.deliveryId === id).map((r) => r.body);
            assert.equal(bodies[0], bodies[1], "a repeat carries the same body and X-Svc-Delivery");
          }
        }
        assert.ok(got.every((r) => r.verified));
        assert.ok((await deliveriesOf(ep.id)).every((x) => x.status === "succeeded"));
        await storage.webhooks.deleteEndpoint(ep.id);
      },
    );

    await t.step("receivers on loopback are refused unless the allow-list names them", async () => {
      const ep = await endpoint(["saml.*"]);
      await emit("saml.assertion_consumed");
      const before = receiver.received.length;
      const [outcome] = await dispatcher({ outbound: testOutbound() }).runOnce();
      assert.equal(outcome.ok, false);
      assert.equal(outcome.error, "receiver refused: private_address");
      assert.equal(receiver.received.length, before, "nothing was sent");
      await storage.webhooks.deleteEndpoint(ep.id);
    });

    await t.step(
      "a public host name that resolves to a private address is refused before sending",
      async () => {
        const ep = await endpoint(["saml.*"], "http://hooks.example.test/svc");
        await emit("saml.assertion_consumed");
        const asked: string[] = [];
        let sent = 0;
        const [outcome] = await dispatcher({
          outbound: testOutbound({
            resolveHost: (hostname) => {
              asked.push(hostname);
              return Promise.resolve(["93.184.216.34", "10.0.0.7"]);
            },
            fetch: () => {
              sent++;
              return Promise.resolve(new Response("ok"));
            },
          }),
        }).runOnce();
        assert.deepEqual(asked, ["hooks.example.test"]);
        assert.equal(outcome.ok, false);
        assert.equal(outcome.error, "receiver refused: private_address");
        assert.equal(sent, 0, "nothing was sent");
        await storage.webhooks.deleteEndpoint(ep.id);
      },
    );

    await t.step("during a secret rotation both secrets sign; afterwards only the new one", async () => {
      const ep = await endpoint(["oidc.*"]);
      const oldSecret = ep.secret;
      const newSecret = "whsec_rotated";
      secrets.add(newSecret);
      await storage.webhooks.rotateSecret(ep.id, newSecret, 3_600_000);
      await emit("oidc.token_issued");
      await dispatcher().runOnce();
      const during = receiver.received.at(-1)!;
      const now = Math.floor(clock.now() / 1000);
      assert.equal(during.signature!.split(",").filter((p) => p.startsWith("v1=")).length, 2);
      assert.ok(independentVerify(during.signature, during.body, [oldSecret], now));
      assert.ok(independentVerify(during.signature, during.body, [newSecret], now));
      clock.advance(3_600_001);
      await emit("oidc.token_issued");
      await dispatcher().runOnce();
      const after = receiver.received.at(-1)!;
      const later = Math.floor(clock.now() / 1000);
      assert.equal(after.signature!.split(",").length, 2);
      assert.ok(!independentVerify(after.signature, after.body, [oldSecret], later));
      assert.ok(independentVerify(after.signature, after.body, [newSecret], later));
      await storage.webhooks.deleteEndpoint(ep.id);
    });

    await t.step(
      "the outbox is transactional: a rolled-back change queues and announces nothing",
      async () => {
        const ep = await endpoint(["federation.*"]);
        const seenBefore = seen.length;
        await assert.rejects(
          publisher.transaction(async (_tx, send) => {
            await send({ kind: "federation.linked", occurredAt: clock.now(), realmId: realm, data: {} });
            throw new Error("the change failed");
          }),
          /the change failed/,
        );
        assert.deepEqual(await deliveriesOf(ep.id), []);
        assert.equal(seen.length, seenBefore);
        // A user-visible kind with a user also lands in the security ledger, in the same transaction.
        const user = await seeder(database.db).user(realm);
        await publisher.transaction((_tx, send) =>
          send(
            {
              kind: "federation.linked",
              occurredAt: clock.now(),
              realmId: realm,
              userId: user,
              data: { p: 1 },
            },
            { ipAddress: "192.0.2.1", deviceDescription: "Firefox" },
          )
        );
        const [ledger] = await storage.securityEvents.listByUser(user);
        assert.equal(ledger.kind, "federation.linked");
        assert.equal(ledger.ipAddress, "192.0.2.1");
        assert.equal((await deliveriesOf(ep.id)).length, 1);
        assert.equal(seen.at(-1)!.kind, "federation.linked");
        await storage.webhooks.deleteEndpoint(ep.id);
      },
    );

    await t.step("the polling loop delivers when woken and stops cleanly", async () => {
      const ep = await endpoint(["workload.*"]);
      const d = dispatcher({ pollIntervalMs: 5000 });
      d.start();
      await emit("workload.token_exchanged");
      d.wake();
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline && (await deliveriesOf(ep.id))[0].status !== "succeeded") {
        await new Promise((r) => setTimeout(r, 10));
      }
      await d.stop();
      assert.equal((await deliveriesOf(ep.id))[0].status, "succeeded");
    });

    await t.step("stopping mid-batch finishes the delivery in flight and hands the rest back", async () => {
      const ep = await endpoint(["shutdown.*"]);
      for (let i = 0; i < 5; i++) await emit("shutdown.test", { i });
      const inFlight = Promise.withResolvers<void>();
      const release = Promise.withResolvers<void>();
      let calls = 0;
      const d = dispatcher({
        concurrency: 1,
        batchSize: 5,
        pollIntervalMs: 5000,
        outbound: testOutbound({
          allowPrivate: ["127.0.0.1"],
          fetch: async (input, init) => {
            calls++;
            inFlight.resolve();
            await release.promise;
            return await fetch(input, init);
          },
        }),
      });
      d.start();
      d.wake();
      await inFlight.promise;
      const stopped = d.stop();
      release.resolve();
      await stopped;
      assert.equal(calls, 1, "no new delivery starts once stopping");
      const deliveries = await deliveriesOf(ep.id);
      assert.equal(deliveries.filter((x) => x.status === "succeeded").length, 1);
      const handedBack = deliveries.filter((x) => x.status === "pending");
      assert.equal(handedBack.length, 4);
      for (const x of handedBack) {
        assert.equal(x.attempts, 0, "the unattempted claim gives its attempt back");
        assert.ok(x.nextAttemptAt.getTime() <= clock.now(), "due now, for another instance");
      }
      // Another dispatcher takes them at once.
      const outcomes = await dispatcher().drain();
      assert.equal(outcomes.filter((o) => o.endpointId === ep.id && o.ok).length, 4);
      assert.equal((await deliveriesOf(ep.id)).every((x) => x.status === "succeeded"), true);
    });
  } finally {
    await receiver.close();
    await database.close();
  }
});
