import { checkedSink } from "../../support/events.ts";
import { strict as assert } from "node:assert";
import { ManualClock } from "../../../core/clock.ts";
import { loadConfig } from "../../../core/config/mod.ts";
import {
  WEBHOOKS_MANAGE_GLOBAL,
  WEBHOOKS_MANAGE_ORG,
  WEBHOOKS_READ_GLOBAL,
} from "../../../core/definitions/svc-permissions.ts";
import { EventPublisher } from "../../../core/events/publisher.ts";
import { EventHub } from "../../../core/events/sink.ts";
import { seededRandom } from "../../../core/random.ts";
import { InProcessCacheBus } from "../../../core/snapshots/bus.ts";
import { SubjectSnapshots } from "../../../core/snapshots/service.ts";
import { WebhookDispatcher } from "../../../core/webhooks/dispatcher.ts";
import { createApp } from "../../../http/app.ts";
import { webhookRoutes } from "../../../http/routes/webhooks.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { freshEmbedded } from "../../support/db.ts";
import { seeder } from "../../support/seed.ts";
import { testOutbound } from "../../support/outbound.ts";
import { asSubject, testSubjectAuthenticator } from "../../support/test-subject.ts";
import { independentVerify, startReceiver } from "../../support/webhook-receiver.ts";

Deno.test("webhook admin routes", async (t) => {
  const database = await freshEmbedded();
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const random = seededRandom(3);
  const storage = createSqlStorage(database, { clock, random });
  const snapshots = new SubjectSnapshots({
    source: storage.subjectGrants,
    bus: new InProcessCacheBus(),
    events: new EventHub(),
    clock,
    ttlMs: 0,
    maxEntries: 0,
  });
  await snapshots.start();
  const publisher = new EventPublisher({ storage, sink: checkedSink(() => {}), random });
  let woken = 0;
  const config = loadConfig({
    env: { SVC_WEBHOOK_MOUNT: "/admin/hooks", SVC_WEBHOOK_ALLOW_PRIVATE_RECEIVERS: "127.0.0.0/8" },
  }).config;
  const app = createApp({
    config,
    readinessChecks: [],
    clock,
    random,
    authenticator: testSubjectAuthenticator,
    routes: [webhookRoutes({ storage, snapshots, publisher, wake: () => woken++ })],
  });
  const seed = seeder(database.db);
  const realm = await seed.realm();
  const admin = await seed.user(realm);
  const reader = await seed.user(realm);
  const orgAdmin = await seed.user(realm);
  const nobody = await seed.user(realm);
  const org = await seed.org(realm, [orgAdmin]);
  const otherOrg = await seed.org(realm);
  const grant = async (user: string, pattern: string, orgId: string | null = null) =>
    await seed.assign(realm, await seed.role(realm, `r-${crypto.randomUUID()}`, [{ pattern }], orgId), {
      kind: "User",
      id: user,
    }, orgId);
  await grant(admin, WEBHOOKS_MANAGE_GLOBAL);
  await grant(reader, WEBHOOKS_READ_GLOBAL);
  await grant(orgAdmin, WEBHOOKS_MANAGE_ORG, org);
  const secrets: string[] = [];
  const receiver = startReceiver({
    secrets: () => secrets,
    nowSeconds: () => Math.floor(clock.now() / 1000),
  });
  const call = (who: Record<string, string>, method: string, path: string, body?: unknown) =>
    app.request(`/admin/hooks${path}`, {
      method,
      headers: { ...who, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const asAdmin = asSubject(admin, realm);

  try {
    let endpointId = "";
    await t.step("create answers the whsec_ secret once; reads never show it", async () => {
      const res = await call(asAdmin, "POST", "", {
        url: receiver.url,
        eventPatterns: ["login.*", "webhook.test"],
        description: "ops",
      });
      assert.equal(res.status, 201);
      const body = await res.json();
      assert.match(body.secret, /^whsec_[A-Za-z0-9_-]{43}$/);
      secrets.push(body.secret);
      endpointId = body.id;
      assert.equal(body.orgId, null);
      assert.deepEqual(body.eventPatterns, ["login.*", "webhook.test"]);
      const read = await (await call(asSubject(reader, realm), "GET", `/${endpointId}`)).json();
      assert.equal(read.secret, undefined);
      assert.equal(read.url, receiver.url);
      const list = await (await call(asSubject(reader, realm), "GET", "")).json();
      assert.deepEqual(list.endpoints.map((e: { id: string }) => e.id), [endpointId]);
    });

    await t.step("fences: 401 anonymous, 403 without permission, readers cannot write", async () => {
      assert.equal((await call({}, "GET", "")).status, 401);
      assert.equal((await call(asSubject(nobody, realm), "GET", "")).status, 403);
      const res = await call(asSubject(reader, realm), "POST", "", {
        url: receiver.url,
        eventPatterns: ["*"],
      });
      assert.equal(res.status, 403);
      assert.equal((await res.json()).error.code, "forbidden");
      assert.equal((await call(asSubject(reader, realm), "DELETE", `/${endpointId}`)).status, 403);
    });

    await t.step("org admins manage only their organization's endpoints", async () => {
      const asOrg = asSubject(orgAdmin, realm, org);
      const res = await call(asOrg, "POST", "", { url: receiver.url, eventPatterns: ["mfa.*"] });
      assert.equal(res.status, 201);
      const created = await res.json();
      assert.equal(created.orgId, org);
      assert.equal(
        (await call(asOrg, "POST", "", { url: receiver.url, eventPatterns: ["mfa.*"], orgId: otherOrg }))
          .status,
        404,
      );
      assert.equal(
        (await call(asOrg, "GET", `/${endpointId}`)).status,
        404,
        "realm-wide endpoints are hidden",
      );
      const list = await (await call(asOrg, "GET", "")).json();
      assert.deepEqual(list.endpoints.map((e: { id: string }) => e.id), [created.id]);
      const admins = await (await call(asAdmin, "GET", "")).json();
      assert.equal(admins.endpoints.length, 2);
      assert.equal((await call(asOrg, "DELETE", `/${created.id}`)).status, 204);
    });

    await t.step("validation and the SSRF guard", async () => {
      const bad = await call(asAdmin, "POST", "", {
        url: "http://10.0.0.1/hook",
        eventPatterns: ["login.*"],
      });
      assert.equal(bad.status, 400);
      const err = await bad.json();
      assert.equal(err.error.code, "webhook_receiver_refused");
      assert.equal(err.error.details.reason, "private_address");
      assert.equal(
        (await call(asAdmin, "POST", "", { url: "http://localhost:1/x", eventPatterns: ["a.*"] })).status,
        400,
      );
      assert.equal((await call(asAdmin, "POST", "", { url: receiver.url, eventPatterns: [] })).status, 400);
      assert.equal(
        (await call(asAdmin, "POST", "", { url: receiver.url, eventPatterns: ["Bad"] })).status,
        400,
      );
      assert.equal((await call(asAdmin, "PATCH", `/${endpointId}`, { url: "ftp://x" })).status, 400);
      assert.equal((await call(asAdmin, "GET", "/not-a-uuid")).status, 404);
    });

    await t.step("update, test event, delivery log", async () => {
      const res = await call(asAdmin, "PATCH", `/${endpointId}`, { description: "changed" });
      assert.equal((await res.json()).description, "changed");
      const test = await call(asAdmin, "POST", `/${endpointId}/test`);
      assert.equal(test.status, 202);
      const queued = await test.json();
      assert.equal(queued.eventKind, "webhook.test");
      assert.equal(queued.status, "pending");
      assert.ok(woken > 0);
      const dispatcher = new WebhookDispatcher({
        storage,
        outbound: testOutbound({ allowPrivate: config.webhooks.allowPrivateReceivers }),
        clock,
      });
      await dispatcher.runOnce();
      const got = receiver.received.at(-1)!;
      assert.equal(got.deliveryId, queued.id);
      assert.equal(got.eventKind, "webhook.test");
      assert.ok(got.verified);
      assert.equal(JSON.parse(got.body).data.endpointId, endpointId);
      const log = await (await call(asSubject(reader, realm), "GET", `/${endpointId}/deliveries`)).json();
      assert.equal(log.deliveries[0].id, queued.id);
      assert.equal(log.deliveries[0].status, "succeeded");
      assert.equal((await call(asAdmin, "GET", `/${endpointId}/deliveries?status=nope`)).status, 400);
    });

    await t.step("rotate: both secrets sign during the overlap", async () => {
      const res = await call(asAdmin, "POST", `/${endpointId}/rotate-secret`, { overlapSeconds: 600 });
      assert.equal(res.status, 200);
      const rotated = await res.json();
      assert.notEqual(rotated.secret, secrets[0]);
      assert.ok(rotated.previousSecretExpiresAt);
      await call(asAdmin, "POST", `/${endpointId}/test`);
      await new WebhookDispatcher({
        storage,
        outbound: testOutbound({ allowPrivate: ["127.0.0.1"] }),
        clock,
      }).runOnce();
      const got = receiver.received.at(-1)!;
      const now = Math.floor(clock.now() / 1000);
      assert.ok(independentVerify(got.signature, got.body, [secrets[0]], now), "old secret still verifies");
      assert.ok(independentVerify(got.signature, got.body, [rotated.secret], now), "new secret verifies");
      // Without a body, the default overlap applies.
      assert.equal((await call(asAdmin, "POST", `/${endpointId}/rotate-secret`)).status, 200);
    });

    await t.step("dead letters are visible and replayable with the same delivery id", async () => {
      const dispatcher = new WebhookDispatcher({
        storage,
        outbound: testOutbound({ allowPrivate: ["127.0.0.1"] }),
        clock,
        retryDelaysMs: [],
      });
      // The secret changed: the verifier does not matter here, only the status.
      const queued = await (await call(asAdmin, "POST", `/${endpointId}/test`)).json();
      receiver.faults.push("500");
      await dispatcher.runOnce();
      const dead = await (await call(asAdmin, "GET", `/${endpointId}/deliveries?status=dead_letter`)).json();
      assert.deepEqual(dead.deliveries.map((d: { id: string }) => d.id), [queued.id]);
      const replay = await call(asAdmin, "POST", `/${endpointId}/deliveries/${queued.id}/replay`);
      assert.equal(replay.status, 202);
      assert.equal((await replay.json()).status, "pending");
      assert.equal(
        (await call(asAdmin, "POST", `/${endpointId}/deliveries/${queued.id}/replay`)).status,
        409,
      );
      await dispatcher.runOnce();
      assert.equal(receiver.received.at(-1)!.deliveryId, queued.id);
      assert.equal((await storage.webhooks.getDelivery(queued.id))!.status, "succeeded");
    });

    await t.step("every change appended to the audit chain, which verifies", async () => {
      assert.equal((await call(asAdmin, "DELETE", `/${endpointId}`)).status, 204);
      assert.equal((await call(asAdmin, "GET", `/${endpointId}`)).status, 404);
      const entries = await storage.adminAudit.list(realm, { limit: 100 });
      const actions = entries.map((e) => e.action);
      for (
        const action of [
          "webhook.endpoint.create",
          "webhook.endpoint.update",
          "webhook.endpoint.test",
          "webhook.endpoint.rotate_secret",
          "webhook.delivery.replay",
          "webhook.endpoint.delete",
        ]
      ) assert.ok(actions.includes(action), action);
      assert.ok(entries.every((e) => !JSON.stringify([e.before, e.after]).includes("whsec_")), "no secrets");
      const created = entries.find((e) => e.action === "webhook.endpoint.create" && e.target === endpointId)!;
      assert.equal(created.actorId, admin);
      assert.equal(created.actorKind, "User");
      assert.equal((await storage.adminAudit.verify(realm)).valid, true);
    });
  } finally {
    await snapshots.stop();
    await receiver.close();
    await database.close();
  }
});
