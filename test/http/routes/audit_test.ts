import { checkedSink } from "../../support/events.ts";
import { strict as assert } from "node:assert";
import { sql } from "kysely";
import { describeReport } from "../../../cli/audit.ts";
import { ManualClock } from "../../../core/clock.ts";
import { loadConfig } from "../../../core/config/mod.ts";
import {
  AUDIT_READ_GLOBAL,
  AUDIT_RETENTION_GLOBAL,
  USERS_ERASE_GLOBAL,
} from "../../../core/definitions/svc-permissions.ts";
import { EventPublisher } from "../../../core/events/publisher.ts";
import { EventHub, type SvcEvent } from "../../../core/events/sink.ts";
import { seededRandom } from "../../../core/random.ts";
import { InProcessCacheBus } from "../../../core/snapshots/bus.ts";
import { SubjectSnapshots } from "../../../core/snapshots/service.ts";
import { createApp } from "../../../http/app.ts";
import { auditRoutes } from "../../../http/routes/audit.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { freshEmbedded } from "../../support/db.ts";
import { seeder } from "../../support/seed.ts";
import { asSubject, testSubjectAuthenticator } from "../../support/test-subject.ts";

const DAY = 86_400_000;

Deno.test("audit, retention, erasure and security-event routes", async (t) => {
  const database = await freshEmbedded();
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const random = seededRandom(5);
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
  const hub = new EventHub();
  const seen: SvcEvent[] = [];
  hub.subscribe((e) => {
    seen.push(e);
  });
  const publisher = new EventPublisher({ storage, sink: checkedSink((event) => hub.emit(event)), random });
  const app = createApp({
    config: loadConfig({ env: {} }).config,
    readinessChecks: [],
    clock,
    random,
    authenticator: testSubjectAuthenticator,
    routes: [auditRoutes({ storage, snapshots, publisher })],
  });
  const seed = seeder(database.db);
  const realm = await seed.realm();
  const auditor = await seed.user(realm);
  const alice = await seed.user(realm);
  const role = await seed.role(realm, "auditor", [
    { pattern: AUDIT_READ_GLOBAL },
    { pattern: AUDIT_RETENTION_GLOBAL },
    { pattern: USERS_ERASE_GLOBAL },
  ]);
  await seed.assign(realm, role, { kind: "User", id: auditor });
  const asAuditor = asSubject(auditor, realm);
  const post = (who: Record<string, string>, path: string, body?: unknown) =>
    app.request(path, {
      method: "POST",
      headers: { ...who, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  try {
    for (let i = 0; i < 4; i++) {
      await storage.adminAudit.append(realm, {
        action: "user.update",
        actorId: auditor,
        actorKind: "User",
        target: alice,
        before: { i },
        after: { i: i + 1 },
      });
      await storage.securityEvents.append({
        realmId: realm,
        userId: alice,
        kind: "login.succeeded",
        data: { i },
        ipAddress: "198.51.100.4",
        deviceDescription: "Firefox",
      });
      clock.advance(DAY);
    }

    await t.step("the caller reads their own security events", async () => {
      assert.equal((await app.request("/profile/security-events")).status, 401);
      const res = await app.request("/profile/security-events?limit=2", { headers: asSubject(alice, realm) });
      const body = await res.json();
      assert.equal(body.events.length, 2);
      assert.equal(body.events[0].kind, "login.succeeded");
      assert.deepEqual(body.events[0].data, { i: 3 });
      assert.equal(body.events[0].ipAddress, "198.51.100.4");
      const none = await (await app.request("/profile/security-events", { headers: asAuditor })).json();
      assert.deepEqual(none.events, []);
    });

    await t.step("entries and verification, fenced by svc:global:audit-read", async () => {
      assert.equal(
        (await app.request("/svc-admin/audit/verify", { headers: asSubject(alice, realm) })).status,
        403,
      );
      const entries = await (await app.request("/svc-admin/audit/entries?afterSeq=2", { headers: asAuditor }))
        .json();
      assert.deepEqual(entries.entries.map((e: { seq: number }) => e.seq), [3, 4]);
      const report = await (await app.request("/svc-admin/audit/verify", { headers: asAuditor })).json();
      assert.equal(report.valid, true);
      assert.equal(report.checked, 4);
      assert.equal(report.headSeq, 4);
      assert.equal(report.headHash, (await storage.adminAudit.head(realm))!.entryHash);
      assert.equal(report.firstBad, null);

      await sql`UPDATE admin_audit_entries SET actor_id = 'mallory' WHERE realm_id = ${realm} AND seq = 3`
        .execute(database.db);
      const broken = await (await app.request("/svc-admin/audit/verify", { headers: asAuditor })).json();
      assert.equal(broken.valid, false);
      assert.deepEqual(broken.firstBad, { seq: 3, reason: "entry_hash_mismatch" });
      assert.equal(broken.checked, 2);
      assert.match(describeReport(broken)[0], /BROKEN at seq 3 \(entry_hash_mismatch\)/);
      await sql`UPDATE admin_audit_entries SET actor_id = ${auditor} WHERE realm_id = ${realm} AND seq = 3`
        .execute(database.db);
      assert.match(describeReport(await storage.adminAudit.verify(realm))[0], /chain valid, 4 entries/);
    });

    await t.step("retention: old security events deleted, old payloads redacted, chain valid", async () => {
      assert.equal((await post(asSubject(alice, realm), "/svc-admin/audit/retention", {})).status, 403);
      const res = await post(asAuditor, "/svc-admin/audit/retention", {
        securityEventsOlderThanDays: 2,
        auditPayloadsOlderThanDays: 3,
      });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { securityEventsDeleted: 2, auditPayloadsRedacted: 1 });
      const [first] = await storage.adminAudit.list(realm, { limit: 1 });
      assert.equal(first.before, null);
      assert.equal((await storage.securityEvents.listByUser(alice)).length, 2);
      assert.equal((await storage.adminAudit.verify(realm)).valid, true);
    });

    await t.step("erasure through the admin endpoint", async () => {
      assert.equal((await post(asSubject(alice, realm), `/svc-admin/users/${alice}/erase`)).status, 403);
      const res = await post(asAuditor, `/svc-admin/users/${alice}/erase`);
      assert.equal(res.status, 200);
      const report = await res.json();
      assert.equal(report.securityEventsRedacted, 2);
      const events =
        await (await app.request("/profile/security-events", { headers: asSubject(alice, realm) }))
          .json();
      assert.equal(events.events[0].kind, "user.erased");
      assert.ok(
        events.events.every((e: { data: unknown; ipAddress: unknown }) => e.data === null && !e.ipAddress),
      );
      assert.equal(seen.at(-1)!.kind, "user.erased");
      assert.equal((await storage.adminAudit.verify(realm)).valid, true);
      assert.equal((await post(asAuditor, `/svc-admin/users/${crypto.randomUUID()}/erase`)).status, 404);
    });
  } finally {
    await snapshots.stop();
    await database.close();
  }
});
