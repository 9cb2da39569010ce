import assert from "node:assert/strict";
import { sql } from "kysely";
import { openDatabase } from "../../storage/open.ts";
import { schemaFingerprint } from "../../storage/schema.ts";
import { drivers } from "../support/db.ts";

for (const driver of drivers) {
  Deno.test(`${driver.name}: schema is created idempotently and answers queries`, async () => {
    const database = await driver.open();
    try {
      await database.ensureSchema();
      await database.ping();
      const rows = await database.db.selectFrom("realms").selectAll().execute();
      assert.deepEqual(rows, []);
    } finally {
      await database.close();
    }
  });

  Deno.test(`${driver.name}: LISTEN/NOTIFY delivers payloads`, async () => {
    const database = await driver.open();
    try {
      const received: string[] = [];
      const got = Promise.withResolvers<void>();
      const stop = await database.notifications.listen("svc_test_channel", (payload) => {
        received.push(payload);
        got.resolve();
      });
      await database.notifications.notify("svc_test_channel", "hello");
      await got.promise;
      await stop();
      assert.deepEqual(received, ["hello"]);
    } finally {
      await database.close();
    }
  });
}

Deno.test("pglite: data in a folder survives a reopen", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const first = await openDatabase({ kind: "embedded", dataDir: dir });
    await first.ensureSchema();
    await first.db.insertInto("app_catalog").values({
      app_key: "kept",
      display_name: null,
      created_at: new Date(0),
    })
      .execute();
    await first.close();
    const second = await openDatabase({ kind: "embedded", dataDir: dir });
    await second.ensureSchema();
    const rows = await sql<{ app_key: string }>`SELECT app_key FROM app_catalog`.execute(second.db);
    assert.deepEqual(rows.rows.map((r) => r.app_key), ["kept"]);
    await second.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

for (const driver of drivers) {
  Deno.test(`${driver.name}: a schema this DDL created is left alone; a changed fingerprint runs the DDL again`, async () => {
    const database = await driver.open();
    try {
      await database.ensureSchema();
      const state = await sql<{ fingerprint: string }>`SELECT fingerprint FROM svc_schema_state`.execute(
        database.db,
      );
      assert.deepEqual(state.rows, [{ fingerprint: schemaFingerprint() }]);
      // Same fingerprint: no DDL runs, so a table dropped behind svc's back stays dropped.
      await sql`DROP TABLE app_catalog`.execute(database.db);
      await database.ensureSchema();
      const gone = await sql<{ t: string | null }>`SELECT to_regclass('app_catalog')::text AS t`.execute(
        database.db,
      );
      assert.equal(gone.rows[0].t, null);
      // Another fingerprint (other code): the DDL runs again and records this one.
      await sql`UPDATE svc_schema_state SET fingerprint = 'older'`.execute(database.db);
      await database.ensureSchema();
      const back = await sql<{ t: string | null }>`SELECT to_regclass('app_catalog')::text AS t`.execute(
        database.db,
      );
      assert.equal(back.rows[0].t, "app_catalog");
      const after = await sql<{ fingerprint: string }>`SELECT fingerprint FROM svc_schema_state`.execute(
        database.db,
      );
      assert.deepEqual(after.rows, [{ fingerprint: schemaFingerprint() }]);
    } finally {
      await database.close();
    }
  });
}
