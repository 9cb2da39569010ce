/**
 * The dispatcher's auto-disable and an admin PATCH of the same endpoint, on Postgres, in the
 * interleaving that deadlocked: the disabling failure holds the endpoint row when the admin
 * mutation starts. The dispatcher takes the realm's audit lock before the endpoint row (the order
 * of admin mutations), so the PATCH waits on the audit lock, holding nothing the dispatcher
 * needs, and runs after the disable commits. The interleaving is forced (the dispatcher pauses
 * right after locking the endpoint row), and the waits are read from `pg_locks`, not timed.
 */
import { checkedSink } from "../../support/events.ts";
import assert from "node:assert/strict";
import { EventPublisher } from "../../../core/events/publisher.ts";
import { WebhookDispatcher } from "../../../core/webhooks/dispatcher.ts";
import { sql } from "kysely";
import { LOCK_CLASS } from "../../../storage/sql/admin-audit.ts";
import { advisoryLockKey } from "../../../storage/sql/advisory-locks.ts";
import type { Storage } from "../../../core/storage/storage.ts";
import { adminBed } from "../../support/admin.ts";
import { testOutbound } from "../../support/outbound.ts";
import { startReceiver } from "../../support/webhook-receiver.ts";

Deno.test("auto-disable racing an admin PATCH of the endpoint on Postgres: no deadlock, both land in order", async () => {
  const admin = await adminBed({}, { postgres: true });
  const { bed, realmId } = admin;
  const storage = bed.storage;
  const receiver = startReceiver({ secrets: () => [], nowSeconds: () => Math.floor(bed.clock.now() / 1000) });
  const release = Promise.withResolvers<void>();
  const pending: Promise<unknown>[] = [];
  try {
    const publisher = new EventPublisher({ storage, sink: checkedSink(() => {}), random: bed.random });
    const endpoint = await storage.webhooks.createEndpoint({
      realmId,
      url: receiver.url,
      secret: "whsec_lock_order",
      eventPatterns: ["user.*"],
    });
    await publisher.transaction((_tx, send) =>
      send({
        kind: "user.updated",
        occurredAt: bed.clock.now(),
        realmId,
        orgId: null,
        userId: null,
        data: { fields: ["displayName"] },
      })
    );
    receiver.faults.push("500");
    // Exactly one delivery is due: no other failure of the batch takes or waits for the lock.
    const due = (await storage.webhooks.listDeliveries(endpoint.id, { limit: 10 })).filter((d) =>
      d.status === "pending"
    );
    assert.equal(due.length, 1, JSON.stringify(due.map((d) => d.eventKind)));

    // The dispatcher's storage pauses the disabling failure right after `markFailed` locked the row.
    const reached = Promise.withResolvers<void>();
    let dispatcherPid = 0;
    const pausing: Storage = {
      ...storage,
      transaction: (work) =>
        storage.transaction((tx) =>
          work({
            ...tx,
            webhooks: {
              ...tx.webhooks,
              markFailed: async (...args) => {
                const outcome = await tx.webhooks.markFailed(...args);
                if (outcome.endpointDisabled) {
                  dispatcherPid =
                    (await tx.pluginSql.query<{ pid: number }>("SELECT pg_backend_pid() AS pid"))[0].pid;
                  reached.resolve();
                  await release.promise;
                }
                return outcome;
              },
            },
          })
        ),
    };
    const dispatcher = new WebhookDispatcher({
      storage: pausing,
      outbound: testOutbound({ allowPrivate: ["127.0.0.1"] }),
      clock: bed.clock,
      publisher,
      timeoutMs: 2_000,
      disableAfter: 1,
      // No retries: the first failure dead-letters the delivery, the failed delivery that disables.
      retryDelaysMs: [],
    });
    /**
     * The realm's audit lock in `pg_locks`: whether the paused dispatcher holds it, and whether a
     * backend waits for it behind the dispatcher. (The key is namespaced by this bed's schema;
     * only backends of this process are counted all the same.)
     */
    const auditLock = async () => {
      const { rows } = await sql<{ granted: boolean; pid: number; blockers: number[] }>`
        SELECT granted, pid, pg_blocking_pids(pid) AS blockers FROM pg_locks
        WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND classid = ${LOCK_CLASS}::int4::oid AND objid = ${
        advisoryLockKey(realmId.toLowerCase())
      }::oid AND objsubid = 2`
        .execute(bed.database.db);
      return {
        heldByDispatcher: rows.some((r) => r.granted && r.pid === dispatcherPid),
        waitingBehindIt: rows.some((r) => !r.granted && r.blockers.map(Number).includes(dispatcherPid)),
      };
    };

    const dispatched = dispatcher.runOnce();
    pending.push(dispatched);
    await reached.promise;
    assert.deepEqual(
      await auditLock(),
      { heldByDispatcher: true, waitingBehindIt: false },
      "the audit lock is taken before the endpoint row",
    );

    const patched = admin.request("PATCH", `/svc-admin/webhooks/${endpoint.id}`, {
      body: { description: "changed by an admin", enabled: true },
    });
    pending.push(patched);
    // The PATCH waits on the audit lock (not on the endpoint row while holding the audit lock).
    let waits = await auditLock();
    for (let i = 0; i < 500 && !waits.waitingBehindIt; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      waits = await auditLock();
    }
    assert.deepEqual(waits, { heldByDispatcher: true, waitingBehindIt: true });
    release.resolve();

    const [outcomes, res] = await Promise.all([dispatched, patched]);
    assert.deepEqual(outcomes.map((o) => [o.ok, o.endpointDisabled]), [[false, true]]);
    assert.equal(res.status, 200, await res.clone().text());
    // The admin's change ran after the disable: the endpoint is enabled again, with its description.
    const after = (await storage.webhooks.getEndpoint(endpoint.id))!;
    assert.equal(after.enabled, true);
    assert.equal(after.description, "changed by an admin");
    const entries = await storage.adminAudit.list(realmId);
    assert.deepEqual(
      entries.slice(-2).map((e) => [e.action, e.actorKind]),
      [["webhook.endpoint.disable", "System"], ["webhook.endpoint.update", "User"]],
    );
    assert.equal((await storage.adminAudit.verify(realmId)).valid, true);
  } finally {
    // A failed assertion must not leave the dispatcher paused inside its transaction.
    release.resolve();
    await Promise.allSettled(pending);
    await receiver.close();
    await admin.close();
  }
});
