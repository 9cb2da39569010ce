/**
 * `runAdminMutation` on real Postgres when the chain's next sequence number is taken under it
 * (spec 6: a concurrent append that loses a sequence-number collision re-reads the tail and
 * relinks; persistent faults surface after a bounded number of attempts):
 *
 * - a writer that bypasses the per-realm lock holds the next sequence number in an open
 *   transaction while the mutation reads the tail; the mutation's insert waits on it, collides
 *   when it commits, and the whole mutation runs again and links after the competitor;
 * - a mutation's work waits for the realm's audit lock while another mutation holds it, and then
 *   reads what that one committed (so a concurrent duplicate finds nothing left to change);
 * - a fault that never clears (every insert into the chain refused) ends in `StorageError`
 *   after `ADMIN_MUTATION_MAX_ATTEMPTS` attempts, with nothing committed.
 */
import { strict as assert } from "node:assert";
import { sql } from "kysely";
import { ADMIN_MUTATION_MAX_ATTEMPTS, runAdminMutation } from "../../../core/audit/mutation.ts";
import { ManualClock } from "../../../core/clock.ts";
import { StorageError } from "../../../core/errors.ts";
import { cryptoRandom } from "../../../core/random.ts";
import { auditEntryHash, LOCK_CLASS, payloadDigest } from "../../../storage/sql/admin-audit.ts";
import { advisoryLockKey } from "../../../storage/sql/advisory-locks.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { freshPostgres } from "../../support/db.ts";
import { seeder } from "../../support/seed.ts";

const ACTOR = { id: "operator", kind: "System" } as const;

Deno.test("admin mutation on Postgres: a sequence collision relinks; a persistent fault is a StorageError", async (t) => {
  const database = await freshPostgres({ maxConnections: 4 });
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const storage = createSqlStorage(database, { clock, random: cryptoRandom });
  const realm = await seeder(database.db).realm();
  try {
    for (let i = 0; i < 3; i++) {
      await runAdminMutation(
        { storage },
        realm,
        ACTOR,
        () => Promise.resolve({ value: null, audit: { action: "test.before", target: `t${i}` } }),
      );
    }

    await t.step(
      "a competing writer takes the next sequence number between tail read and insert",
      async () => {
        const tail = (await storage.adminAudit.head(realm))!;
        const competitor = {
          realmId: realm,
          seq: tail.seq + 1,
          occurredAt: new Date(clock.now()),
          action: "test.competitor",
          actorId: "rogue-writer",
          actorKind: "System" as const,
          target: null,
          orgId: null,
          beforeDigest: payloadDigest(null),
          afterDigest: payloadDigest(null),
          prevHash: tail.entryHash,
        };
        const competitorHash = auditEntryHash(competitor);
        const attempts: number[] = [];
        const result = await database.db.connection().execute(async (conn) => {
          // The competitor: no advisory lock, the next sequence number, left uncommitted.
          await sql`BEGIN`.execute(conn);
          const xid =
            (await sql<{ xid: string }>`SELECT txid_current()::text AS xid`.execute(conn)).rows[0].xid;
          await conn.insertInto("admin_audit_entries").values({
            realm_id: realm,
            seq: competitor.seq,
            occurred_at: competitor.occurredAt,
            action: competitor.action,
            actor_id: competitor.actorId,
            actor_kind: competitor.actorKind,
            on_behalf_of: null,
            target: null,
            org_id: null,
            before_json: null,
            after_json: null,
            before_digest: competitor.beforeDigest,
            after_digest: competitor.afterDigest,
            prev_hash: competitor.prevHash,
            entry_hash: competitorHash,
          }).execute();
          // The mutation reads the same tail (the competitor is invisible to it) and its insert
          // of the same sequence number waits for the competitor's transaction.
          const mutation = runAdminMutation(
            { storage },
            realm,
            { id: "admin", kind: "User" },
            async ({ tx }) => {
              attempts.push(attempts.length + 1);
              const org = await tx.organizations.create({
                realmId: realm,
                name: `attempt-${attempts.length}`,
                displayName: "Attempt",
              });
              return {
                value: org,
                audit: { action: "org.create", target: org.id, after: { name: org.name } },
              };
            },
          );
          await waitUntil(async () => {
            const { rows } = await sql<{ waiting: number }>`
            SELECT count(*)::int AS waiting FROM pg_locks
            WHERE locktype = 'transactionid' AND transactionid = ${xid}::text::xid AND NOT granted`
              .execute(database.db);
            return rows[0].waiting > 0;
          });
          assert.deepEqual(attempts, [1], "the first attempt is waiting on the competitor");
          await sql`COMMIT`.execute(conn);
          return await mutation;
        });

        assert.deepEqual(attempts, [1, 2], "the collision made the whole mutation run again");
        const entry = result.entry!;
        assert.equal(entry.seq, tail.seq + 2);
        assert.equal(entry.prevHash, competitorHash, "relinked after the competitor");
        assert.equal(entry.action, "org.create");
        const orgs = (await storage.organizations.listByRealm(realm)).map((o) => o.name);
        assert.deepEqual(orgs, ["attempt-2"], "the first attempt's change was rolled back with it");
        const entries = await storage.adminAudit.list(realm, { afterSeq: tail.seq });
        assert.deepEqual(entries.map((e) => [e.seq, e.action]), [
          [tail.seq + 1, "test.competitor"],
          [tail.seq + 2, "org.create"],
        ]);
        const report = await storage.adminAudit.verify(realm);
        assert.equal(report.valid, true, JSON.stringify(report.firstBad));
        assert.equal(report.checked, tail.seq + 2);
      },
    );

    await t.step(
      "a mutation's work runs after the realm's mutation in progress commits, and reads its change",
      async () => {
        let release!: () => void;
        const gate = new Promise<void>((resolve) => release = resolve);
        let holding = false;
        const first = runAdminMutation({ storage }, realm, ACTOR, async ({ tx }) => {
          await tx.organizations.create({ realmId: realm, name: "serial-first", displayName: "First" });
          holding = true;
          await gate;
          return { value: null, audit: { action: "test.first" } };
        });
        await waitUntil(() => Promise.resolve(holding));
        let seen: string[] | null = null;
        const second = runAdminMutation({ storage }, realm, ACTOR, async ({ tx }) => {
          seen = (await tx.organizations.listByRealm(realm)).map((o) => o.name);
          return { value: null, audit: null };
        });
        // The second waits for the realm's audit lock (class 7361201, key: the realm in this schema).
        await waitUntil(async () => {
          const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_locks
            WHERE locktype = 'advisory' AND NOT granted AND classid = ${LOCK_CLASS}::int4::oid
              AND objid = ${advisoryLockKey(realm)}::oid AND objsubid = 2
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`
            .execute(database.db);
          return rows[0].n > 0;
        });
        assert.equal(seen, null, "the second's work has not run");
        release();
        await Promise.all([first, second]);
        assert.ok(seen!.includes("serial-first"), "the second read what the first committed");
        assert.equal((await storage.adminAudit.head(realm))!.action, "test.first", "a no-op appends nothing");
      },
    );

    await t.step("the realm's audit lock is held by a transaction only", async () => {
      await assert.rejects(storage.adminAudit.lock(realm), StorageError);
    });

    await t.step(
      "a collision that never clears surfaces as StorageError after the bounded attempts",
      async () => {
        const head = (await storage.adminAudit.head(realm))!;
        await sql.raw(`
        CREATE FUNCTION refuse_audit_insert() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'taken' USING ERRCODE = 'unique_violation'; END $$`).execute(database.db);
        await sql.raw(`
        CREATE TRIGGER refuse_audit_insert BEFORE INSERT ON admin_audit_entries
          FOR EACH ROW EXECUTE FUNCTION refuse_audit_insert()`).execute(database.db);
        let attempts = 0;
        await assert.rejects(
          runAdminMutation({ storage }, realm, ACTOR, async ({ tx }) => {
            attempts++;
            await tx.organizations.create({
              realmId: realm,
              name: `doomed-${attempts}`,
              displayName: "Doomed",
            });
            return { value: null, audit: { action: "org.create" } };
          }),
          (error) => error instanceof StorageError && error.code === "storage_unavailable",
        );
        assert.equal(attempts, ADMIN_MUTATION_MAX_ATTEMPTS);
        await sql.raw(`DROP TRIGGER refuse_audit_insert ON admin_audit_entries`).execute(database.db);
        assert.equal((await storage.adminAudit.head(realm))!.seq, head.seq, "nothing appended");
        const orgs = (await storage.organizations.listByRealm(realm)).map((o) => o.name);
        assert.ok(!orgs.some((name) => name.startsWith("doomed")), "nothing committed");
        assert.equal((await storage.adminAudit.verify(realm)).valid, true);
      },
    );
  } finally {
    await database.close();
  }
});

/** Polls `condition` every 10 ms until it holds (at most 10 s). */
async function waitUntil(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the mutation to block");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
