/**
 * Advisory locks and notification channels are per schema: two svc databases in different schemas
 * of one Postgres database (two deployments, or two test beds running in parallel) never wait on
 * each other's locks nor hear each other's notifications, while two connections to one schema do.
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { schemaChannel, type SvcDatabase } from "../../../storage/open.ts";
import { advisoryLockKey, LockClass, lockForTransaction } from "../../../storage/sql/advisory-locks.ts";
import { freshPostgres } from "../../support/db.ts";

/** Whether a transaction on `other` gets `(class, tried)` while one on `holder` holds `(class, key)`. */
async function grantedWhileHeld(
  holder: SvcDatabase,
  other: SvcDatabase,
  key: string,
  tried = key,
): Promise<boolean> {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => release = resolve);
  let held!: () => void;
  const holding = new Promise<void>((resolve) => held = resolve);
  const first = holder.db.transaction().execute(async (trx) => {
    await lockForTransaction(trx, LockClass.adminAudit, key);
    held();
    await gate;
  });
  await holding;
  try {
    return await other.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ got: boolean }>`
        SELECT pg_try_advisory_xact_lock(${LockClass.adminAudit}::int4, ${advisoryLockKey(tried)}) AS got`
        .execute(trx);
      return rows[0].got;
    });
  } finally {
    release();
    await first;
  }
}

Deno.test("advisory locks: a key held in one schema blocks that schema only", async () => {
  const a = await freshPostgres({ maxConnections: 3 });
  const b = await freshPostgres({ maxConnections: 3 });
  try {
    const realm = "0b9a64c6-64f6-4f0e-9d53-8c1f1fa0e001";
    assert.equal(await grantedWhileHeld(a, a, realm), false, "the same schema waits");
    assert.equal(await grantedWhileHeld(a, b, realm), true, "another schema does not");
    assert.equal(await grantedWhileHeld(a, a, realm, `${realm}x`), true, "another key does not");
    const keys = await Promise.all(
      [a, b].map(async (database) =>
        (await sql<{ k: number }>`SELECT ${advisoryLockKey(realm)} AS k`.execute(database.db)).rows[0].k
      ),
    );
    assert.notEqual(keys[0], keys[1]);
  } finally {
    await b.close();
    await a.close();
  }
});

Deno.test("advisory locks: a connection without an existing schema is refused, not left unlocked", async () => {
  const a = await freshPostgres();
  try {
    await assert.rejects(
      a.db.transaction().execute(async (trx) => {
        await sql`SET LOCAL search_path = svc_test_no_such_schema`.execute(trx);
        await lockForTransaction(trx, LockClass.realms, "");
      }),
      /no current schema/,
    );
    // Named, a schema not created yet is locked all the same (svc's schema creation).
    await a.db.transaction().execute(async (trx) => {
      await sql`SET LOCAL search_path = svc_test_no_such_schema`.execute(trx);
      await lockForTransaction(trx, LockClass.schema, "", "svc_test_no_such_schema");
    });
  } finally {
    await a.close();
  }
});

Deno.test("notifications: a channel is heard in its own schema only", async () => {
  const a = await freshPostgres();
  const b = await freshPostgres();
  try {
    const heard = { a: [] as string[], b: [] as string[] };
    const last = { a: Promise.withResolvers<void>(), b: Promise.withResolvers<void>() };
    const stops = await Promise.all(
      (["a", "b"] as const).map((name) =>
        (name === "a" ? a : b).notifications.listen("svc_test_channel", (payload) => {
          heard[name].push(payload);
          if (payload === (name === "a" ? "3" : "2")) last[name].resolve();
        })
      ),
    );
    // A listening session gets notifications in commit order: had the schemas shared the
    // channel, b would hear 1 before its own 2, and a would hear 2 before its own 3.
    await a.notifications.notify("svc_test_channel", "1");
    await b.notifications.notify("svc_test_channel", "2");
    await a.notifications.notify("svc_test_channel", "3");
    await Promise.all([last.a.promise, last.b.promise]);
    for (const stop of stops) await stop();
    assert.deepEqual(heard, { a: ["1", "3"], b: ["2"] });
  } finally {
    await b.close();
    await a.close();
  }
});

Deno.test("notifications: channel names stay within Postgres's 63 bytes, distinct per schema", () => {
  assert.equal(schemaChannel("svc_authz_snapshots", undefined), "svc_authz_snapshots");
  assert.equal(schemaChannel("svc_authz_snapshots", "tenant_a"), "svc_authz_snapshots:tenant_a");
  const long = (c: string) => schemaChannel("svc_authz_snapshots", c.repeat(60));
  assert.ok(new TextEncoder().encode(long("a")).length <= 63);
  assert.notEqual(long("a"), long("b"));
});
