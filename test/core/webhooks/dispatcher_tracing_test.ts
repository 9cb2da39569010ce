/**
 * A webhook delivery is a client span: the receiver's host only (a URL's path or query may hold
 * the receiver's own secret), the event kind, the receiver's status and the outcome; a failed
 * delivery has the error status.
 */
import { strict as assert } from "node:assert";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { ManualClock } from "../../../core/clock.ts";
import { EventPublisher } from "../../../core/events/publisher.ts";
import { EventHub } from "../../../core/events/sink.ts";
import { seededRandom } from "../../../core/random.ts";
import { WebhookDispatcher } from "../../../core/webhooks/dispatcher.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { freshEmbedded } from "../../support/db.ts";
import { seeder } from "../../support/seed.ts";
import { testOutbound } from "../../support/outbound.ts";
import { recordSpans, stopRecording } from "../../support/spans.ts";

Deno.test("webhook dispatcher: each delivery is a client span with the host, status and outcome", async () => {
  const database = await freshEmbedded();
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const random = seededRandom(3);
  const storage = createSqlStorage(database, { clock, random });
  const publisher = new EventPublisher({ storage, sink: new EventHub(), random });
  const realm = await seeder(database.db).realm();
  const answers = [204, 500];
  const dispatcher = new WebhookDispatcher({
    storage,
    outbound: testOutbound({ fetch: () => Promise.resolve(new Response(null, { status: answers.shift() })) }),
    clock,
    publisher,
  });
  const endpoint = await storage.webhooks.createEndpoint({
    realmId: realm,
    url: "https://hooks.example.com/in?token=receiver-own-secret",
    secret: "whsec_tracing",
    eventPatterns: ["login.*"],
  });
  const emit = () =>
    publisher.transaction((_tx, send) =>
      send({
        kind: "login.succeeded",
        occurredAt: clock.now(),
        realmId: realm,
        orgId: null,
        userId: null,
        data: {},
      })
    );
  const spans = recordSpans();
  try {
    await emit();
    await emit();
    const outcomes = [...await dispatcher.runOnce()];
    assert.deepEqual(outcomes.map((o) => o.ok).sort(), [false, true]);
    const deliveries = spans.filter((s) => s.name === "svc.webhook.deliver");
    assert.equal(deliveries.length, 2);
    for (const span of deliveries) {
      assert.equal(span.kind, SpanKind.CLIENT);
      assert.equal(span.attributes["server.address"], "hooks.example.com");
      assert.equal(span.attributes["svc.webhook.endpoint_id"], endpoint.id);
      assert.equal(span.attributes["svc.event.kind"], "login.succeeded");
      assert.ok(span.ended);
    }
    const byOutcome = Object.fromEntries(deliveries.map((s) => [s.attributes["svc.webhook.outcome"], s]));
    assert.equal(byOutcome.delivered.attributes["http.response.status_code"], 204);
    assert.equal(byOutcome.delivered.status, undefined);
    assert.equal(byOutcome.failed.attributes["http.response.status_code"], 500);
    assert.equal(byOutcome.failed.status?.code, SpanStatusCode.ERROR);
    // The statements recording each outcome are children of its delivery span.
    assert.ok(spans.some((s) => s.parent === byOutcome.delivered && s.name === "UPDATE"));
    assert.doesNotMatch(JSON.stringify(spans), /receiver-own-secret|whsec_/);
  } finally {
    stopRecording();
    await database.close();
  }
});
