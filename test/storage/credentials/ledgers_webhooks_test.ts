import assert from "node:assert/strict";
import { sql } from "kysely";
import { StorageError, ValidationError } from "../../../core/errors.ts";
import { GENESIS_HASH } from "../../../core/storage/admin-audit.ts";
import { eventPatternMatches, WEBHOOK_RETRY_DELAYS_MS } from "../../../core/storage/webhooks.ts";
import { canonicalJson } from "../../../storage/sql/admin-audit.ts";
import { drivers } from "../../support/db.ts";
import { clockAt, makeRealm, makeUser, storesFor, uuid } from "./fixtures.ts";

const MIN = 60_000;

Deno.test("eventPatternMatches: wildcards as prefix, suffix and infix", () => {
  assert.equal(eventPatternMatches("login.*", "login.succeeded"), true);
  assert.equal(eventPatternMatches("login.*", "mfa.failed"), false);
  assert.equal(eventPatternMatches("*", "anything"), true);
  assert.equal(eventPatternMatches("*.failed", "mfa.failed"), true);
  assert.equal(eventPatternMatches("token.*_detected", "token.refresh_reuse_detected"), true);
  assert.equal(eventPatternMatches("token.*_detected", "token.refresh"), false);
  assert.equal(eventPatternMatches("a*a", "a"), false);
  assert.equal(eventPatternMatches("webhook.endpoint_disabled", "webhook.endpoint_disabled"), true);
  assert.equal(eventPatternMatches("webhook.endpoint_disabled", "webhook.endpointXdisabled"), false);
});

Deno.test("canonicalJson sorts keys at every level", () => {
  assert.equal(
    canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } }),
    '{"a":{"c":null,"d":[1,{"y":2,"z":1}]},"b":1}',
  );
  assert.equal(canonicalJson(undefined), "null");
});

for (const driver of drivers) {
  Deno.test(`${driver.name}: ledgers and webhooks`, async (t) => {
    const database = await driver.open();
    const db = database.db;
    try {
      const realm = await makeRealm(db);

      await t.step("security events: append-only list newest first, redaction, retention", async () => {
        const clock = clockAt();
        const { securityEvents } = storesFor(db, clock);
        const user = await makeUser(db, realm);
        for (let i = 0; i < 5; i++) {
          await securityEvents.append({
            realmId: realm,
            userId: user,
            kind: `login.k${i}`,
            data: { i, nested: { ok: true } },
            ipAddress: "192.0.2.7",
            deviceDescription: "Safari",
          });
          clock.advance(1000);
        }
        await securityEvents.append({ realmId: realm, userId: uuid(), kind: "login.other" });
        const latest = await securityEvents.listByUser(user, { limit: 3 });
        assert.deepEqual(latest.map((e) => e.kind), ["login.k4", "login.k3", "login.k2"]);
        assert.deepEqual(latest[0].data, { i: 4, nested: { ok: true } });
        const older = await securityEvents.listByUser(user, { limit: 10, before: latest[2].occurredAt });
        assert.deepEqual(older.map((e) => e.kind), ["login.k1", "login.k0"]);

        assert.equal(await securityEvents.redactForUser(user), 5);
        const redacted = await securityEvents.listByUser(user);
        assert.equal(redacted.length, 5);
        for (const e of redacted) {
          assert.equal(e.data, null);
          assert.equal(e.ipAddress, null);
          assert.equal(e.deviceDescription, null);
          assert.ok(e.kind.startsWith("login.k"));
        }
        assert.equal(await securityEvents.redactForUser(user), 0);
        assert.equal(await securityEvents.deleteOlderThan(new Date(clockAt().now() + 2500)), 3);
        assert.equal((await securityEvents.listByUser(user)).length, 2);
      });

      await t.step("admin audit: chain links, sequence and verification", async () => {
        const clock = clockAt();
        const { audit } = storesFor(db, clock);
        const chainRealm = await makeRealm(db);
        const first = await audit.append(chainRealm, {
          action: "role.create",
          actorId: "admin-1",
          actorKind: "User",
          target: "role:editors",
          before: null,
          after: { key: "editors", grants: ["docs:org:read"] },
        });
        assert.equal(first.seq, 1);
        assert.equal(first.prevHash, GENESIS_HASH);
        assert.match(first.entryHash, /^[0-9a-f]{64}$/);
        clock.advance(1000);
        const second = await audit.append(chainRealm, {
          action: "role.update",
          actorId: "system",
          actorKind: "System",
          before: { key: "editors" },
          after: { key: "editors", displayName: "Editors" },
        });
        assert.equal(second.seq, 2);
        assert.equal(second.prevHash, first.entryHash);
        // Another realm's chain is independent.
        const otherRealm = await makeRealm(db);
        assert.equal(
          (await audit.append(otherRealm, { action: "x", actorId: "a", actorKind: "System" })).seq,
          1,
        );
        for (let i = 0; i < 3; i++) {
          await audit.append(chainRealm, {
            action: `op.${i}`,
            actorId: "admin-1",
            actorKind: "User",
            after: { i },
          });
        }
        assert.deepEqual(await audit.verifyChain(chainRealm), { ok: true, count: 5 });
        assert.deepEqual(await audit.verifyChain(uuid()), { ok: true, count: 0 });
        assert.deepEqual((await audit.list(chainRealm, { afterSeq: 3 })).map((e) => e.seq), [4, 5]);
        assert.equal((await audit.head(chainRealm))?.seq, 5);
        await assert.rejects(
          audit.append("nope", { action: "x", actorId: "a", actorKind: "System" }),
          ValidationError,
        );
      });

      await t.step("admin audit: verification detects tampering", async () => {
        const clock = clockAt();
        const { audit } = storesFor(db, clock);
        const append = (r: string, i: number) =>
          audit.append(r, {
            action: `op.${i}`,
            actorId: "admin-1",
            actorKind: "User",
            target: "user-9",
            before: { n: i },
            after: { n: i + 1 },
          });
        const fill = async () => {
          const r = await makeRealm(db);
          for (let i = 0; i < 4; i++) await append(r, i);
          return r;
        };
        const where = (r: string, seq: number) =>
          db.updateTable("admin_audit_entries").where("realm_id", "=", r).where("seq", "=", seq);

        const payload = await fill();
        await where(payload, 2).set({ after_json: sql`'{"n": 999}'::jsonb` }).execute();
        assert.deepEqual(await audit.verifyChain(payload), {
          ok: false,
          brokenAt: 2,
          reason: "payload_digest_mismatch",
        });

        const content = await fill();
        await where(content, 3).set({ actor_id: "someone-else" }).execute();
        assert.deepEqual(await audit.verifyChain(content), {
          ok: false,
          brokenAt: 3,
          reason: "entry_hash_mismatch",
        });

        const rehashed = await fill();
        // Rewriting an entry together with its own hash still breaks the next link.
        const [row2] = await audit.list(rehashed, { afterSeq: 1, limit: 1 });
        const { auditEntryHash } = await import("../../../storage/sql/admin-audit.ts");
        const forged = { ...row2, action: "op.forged" };
        await where(rehashed, 2).set({ action: forged.action, entry_hash: auditEntryHash(forged) }).execute();
        assert.deepEqual(await audit.verifyChain(rehashed), {
          ok: false,
          brokenAt: 3,
          reason: "prev_hash_mismatch",
        });

        const gap = await fill();
        await db.deleteFrom("admin_audit_entries").where("realm_id", "=", gap).where("seq", "=", 2).execute();
        assert.deepEqual(await audit.verifyChain(gap), { ok: false, brokenAt: 2, reason: "sequence_gap" });
      });

      await t.step("admin audit: redaction keeps the chain verifiable", async () => {
        const clock = clockAt();
        const { audit } = storesFor(db, clock);
        const r = await makeRealm(db);
        const subject = uuid();
        await audit.append(r, {
          action: "user.update",
          actorId: "admin",
          actorKind: "User",
          target: subject,
          after: { a: 1 },
        });
        clock.advance(10 * MIN);
        await audit.append(r, {
          action: "user.login_as",
          actorId: subject,
          actorKind: "User",
          before: { b: 2 },
        });
        await audit.append(r, { action: "other", actorId: "admin", actorKind: "User", after: { c: 3 } });
        assert.equal(await audit.redactForSubject(subject), 2);
        const entries = await audit.list(r);
        assert.deepEqual(entries.map((e) => [e.before, e.after]), [[null, null], [null, null], [null, {
          c: 3,
        }]]);
        assert.deepEqual(await audit.verifyChain(r), { ok: true, count: 3 });
        assert.ok(await audit.redactOlderThan(new Date(clock.now() + 1)) >= 1);
        assert.deepEqual(await audit.verifyChain(r), { ok: true, count: 3 });
      });

      await t.step(
        "admin audit: a persistent collision surfaces as StorageError after bounded retries",
        async () => {
          const { audit } = storesFor(db, clockAt());
          const r = await makeRealm(db);
          await audit.append(r, { action: "a", actorId: "x", actorKind: "System" });
          // A trigger that makes every insert collide simulates a writer that keeps winning.
          await sql.raw(`CREATE OR REPLACE FUNCTION svc_test_collide() RETURNS trigger AS $$
          BEGIN RAISE unique_violation USING MESSAGE = 'simulated'; END $$ LANGUAGE plpgsql`).execute(db);
          await sql.raw(`CREATE TRIGGER svc_test_collide BEFORE INSERT ON admin_audit_entries
          FOR EACH ROW WHEN (NEW.action = 'collide') EXECUTE FUNCTION svc_test_collide()`).execute(db);
          try {
            await assert.rejects(
              audit.append(r, { action: "collide", actorId: "x", actorKind: "System" }),
              StorageError,
            );
          } finally {
            await sql.raw(`DROP TRIGGER svc_test_collide ON admin_audit_entries`).execute(db);
          }
          assert.equal((await audit.append(r, { action: "b", actorId: "x", actorKind: "System" })).seq, 2);
        },
      );

      await t.step("webhooks: endpoints, subscriptions by pattern and organization", async () => {
        const clock = clockAt();
        const { webhooks } = storesFor(db, clock);
        const r = await makeRealm(db);
        const org = uuid();
        const realmWide = await webhooks.createEndpoint({
          realmId: r,
          url: "https://hooks.example/a",
          secret: "whsec_a",
          eventPatterns: ["login.*"],
        });
        const orgScoped = await webhooks.createEndpoint({
          realmId: r,
          orgId: org,
          url: "https://hooks.example/b",
          secret: "whsec_b",
          eventPatterns: ["login.succeeded", "mfa.*"],
        });
        assert.equal(realmWide.enabled, true);
        assert.deepEqual(realmWide.eventPatterns, ["login.*"]);
        const noOrg = await webhooks.enqueueForEvent({
          realmId: r,
          eventKind: "login.succeeded",
          payload: "{}",
        });
        assert.deepEqual(noOrg.map((d) => d.endpointId), [realmWide.id]);
        const withOrg = await webhooks.enqueueForEvent({
          realmId: r,
          orgId: org,
          eventKind: "login.succeeded",
          payload: '{"x":1}',
        });
        assert.deepEqual(withOrg.map((d) => d.endpointId).sort(), [realmWide.id, orgScoped.id].sort());
        assert.equal(withOrg[0].payload, '{"x":1}');
        assert.equal(withOrg[0].status, "pending");
        assert.deepEqual(
          await webhooks.enqueueForEvent({ realmId: r, orgId: uuid(), eventKind: "mfa.failed", payload: "" }),
          [],
        );

        const rotated = await webhooks.rotateSecret(realmWide.id, "whsec_a2", 24 * 60 * MIN);
        assert.equal(rotated?.secret, "whsec_a2");
        assert.equal(rotated?.previousSecret, "whsec_a");
        assert.equal(rotated?.previousSecretExpiresAt?.getTime(), clock.now() + 24 * 60 * MIN);
        const updated = await webhooks.updateEndpoint(orgScoped.id, { eventPatterns: ["*"], enabled: false });
        assert.equal(updated?.enabled, false);
        assert.deepEqual(
          await webhooks.enqueueForEvent({ realmId: r, orgId: org, eventKind: "mfa.failed", payload: "" }),
          [],
          "disabled endpoints get nothing",
        );
        assert.equal((await webhooks.listEndpoints(r)).length, 2);
        assert.equal(await webhooks.deleteEndpoint(orgScoped.id), true);
        assert.equal(await webhooks.getEndpoint(orgScoped.id), null);
        assert.equal(
          await webhooks.getDelivery(withOrg.find((d) => d.endpointId === orgScoped.id)!.id),
          null,
        );
        await assert.rejects(
          webhooks.createEndpoint({ realmId: r, url: "https://x", secret: "whsec_x", eventPatterns: [""] }),
          ValidationError,
        );
      });

      await t.step(
        "webhooks: claims lease deliveries; retries follow the schedule, then dead-letter",
        async () => {
          const clock = clockAt();
          const { webhooks } = storesFor(db, clock);
          // Deliveries of earlier steps may be due: use a far-future clock base and a fresh realm.
          clock.advance(1000 * 86_400_000);
          const r = await makeRealm(db);
          const endpoint = await webhooks.createEndpoint({
            realmId: r,
            url: "https://hooks.example/c",
            secret: "whsec_c",
            eventPatterns: ["*"],
          });
          const queued = await webhooks.enqueue(endpoint.id, "user.created", '{"id":1}');
          const mine = async () =>
            (await webhooks.claimDue({ limit: 1000, leaseMs: MIN })).filter((c) =>
              c.endpoint.id === endpoint.id
            );

          const claimed = await mine();
          assert.equal(claimed.length, 1);
          assert.equal(claimed[0].delivery.id, queued.id);
          assert.equal(claimed[0].delivery.attempts, 1);
          assert.equal(claimed[0].endpoint.secret, "whsec_c");
          assert.deepEqual(await mine(), [], "leased");

          const seenDelays: number[] = [];
          for (let attempt = 1; attempt <= WEBHOOK_RETRY_DELAYS_MS.length + 1; attempt++) {
            if (attempt > 1) {
              const due = await webhooks.getDelivery(queued.id);
              seenDelays.push(due!.nextAttemptAt.getTime() - clock.now());
              clock.set(due!.nextAttemptAt.getTime());
              const again = await mine();
              assert.equal(again.length, 1);
              assert.equal(again[0].delivery.attempts, attempt);
            }
            const outcome = await webhooks.markFailed(queued.id, { error: "HTTP 500", statusCode: 500 });
            assert.equal(
              outcome.delivery?.status,
              attempt <= WEBHOOK_RETRY_DELAYS_MS.length ? "retrying" : "dead_letter",
            );
            assert.equal(outcome.endpointDisabled, false);
          }
          assert.deepEqual(seenDelays, WEBHOOK_RETRY_DELAYS_MS);
          const dead = await webhooks.getDelivery(queued.id);
          assert.equal(dead?.status, "dead_letter");
          assert.equal(dead?.lastStatusCode, 500);
          assert.deepEqual(
            (await webhooks.listDeliveries(endpoint.id, { status: "dead_letter" })).map((d) => d.id),
            [queued.id],
          );
          // Late outcomes for a finished delivery are ignored.
          assert.equal((await webhooks.markFailed(queued.id, { error: "late" })).delivery, null);
          assert.equal(await webhooks.markSucceeded(queued.id), null);

          assert.equal(await webhooks.requeueDeadLetter(queued.id), true);
          const requeued = await mine();
          assert.equal(requeued.length, 1);
          assert.equal(requeued[0].delivery.attempts, 1);
          const ok = await webhooks.markSucceeded(queued.id, 204);
          assert.equal(ok?.status, "succeeded");
          assert.equal((await webhooks.getEndpoint(endpoint.id))?.consecutiveFailures, 0);
        },
      );

      await t.step(
        "webhooks: queue stats count deliveries by status and date the oldest waiting one",
        async () => {
          const clock = clockAt();
          const { webhooks } = storesFor(db, clock);
          clock.advance(2000 * 86_400_000);
          const r = await makeRealm(db);
          const endpoint = await webhooks.createEndpoint({
            realmId: r,
            url: "https://hooks.example/q",
            secret: "whsec_q",
            eventPatterns: ["*"],
          });
          const before = await webhooks.queueStats();
          const first = await webhooks.enqueue(endpoint.id, "user.created", "{}");
          await webhooks.enqueue(endpoint.id, "user.updated", "{}");
          const queued = await webhooks.queueStats();
          assert.equal(queued.pending, before.pending + 2);
          assert.equal(queued.retrying, before.retrying);
          assert.ok(queued.oldestDueAt !== null && queued.oldestDueAt <= clock.now());
          await webhooks.claimDue({ limit: 1000 });
          await webhooks.markFailed(first.id, { error: "HTTP 503", statusCode: 503 });
          const failed = await webhooks.queueStats();
          assert.equal(failed.retrying, before.retrying + 1);
          assert.equal(failed.pending + failed.retrying + failed.deadLetter >= 2, true);
        },
      );

      await t.step("webhooks: ten consecutive failures disable the endpoint once", async () => {
        const clock = clockAt();
        clock.advance(2000 * 86_400_000);
        const { webhooks } = storesFor(db, clock);
        const r = await makeRealm(db);
        const endpoint = await webhooks.createEndpoint({
          realmId: r,
          url: "https://hooks.example/d",
          secret: "whsec_d",
          eventPatterns: ["*"],
        });
        const deliveries = [];
        for (let i = 0; i < 12; i++) deliveries.push(await webhooks.enqueue(endpoint.id, "e", `${i}`));
        // A success in between resets the count.
        await webhooks.markFailed(deliveries[0].id, { error: "x" });
        await webhooks.markSucceeded(deliveries[1].id);
        assert.equal((await webhooks.getEndpoint(endpoint.id))?.consecutiveFailures, 0);
        // A failed attempt with retries left is not a failed delivery: the count stays.
        await webhooks.markFailed(deliveries[2].id, { error: "first attempt" });
        assert.equal((await webhooks.getEndpoint(endpoint.id))?.consecutiveFailures, 0);
        const disabledBy: number[] = [];
        for (let i = 2; i < 12; i++) {
          // No retries left: each failure dead-letters its delivery and counts.
          const outcome = await webhooks.markFailed(deliveries[i].id, { error: "timeout" }, {
            retryDelaysMs: [],
          });
          if (outcome.endpointDisabled) disabledBy.push(i);
        }
        assert.deepEqual(disabledBy, [11]);
        const disabled = await webhooks.getEndpoint(endpoint.id);
        assert.equal(disabled?.enabled, false);
        assert.equal(disabled?.consecutiveFailures, 10);
        assert.equal(disabled?.disabledAt?.getTime(), clock.now());
        // Nothing of a disabled endpoint is claimed; re-enabling resets the count.
        await webhooks.markFailed(deliveries[0].id, { error: "again" });
        assert.equal(
          (await webhooks.claimDue({ limit: 1000 })).some((c) => c.endpoint.id === endpoint.id),
          false,
        );
        const enabled = await webhooks.updateEndpoint(endpoint.id, { enabled: true });
        assert.equal(enabled?.consecutiveFailures, 0);
        assert.equal(enabled?.disabledAt, null);
      });
    } finally {
      await database.close();
    }
  });
}
