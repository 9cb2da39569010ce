import assert from "node:assert/strict";
import { sql } from "kysely";
import { openDatabase } from "../../storage/open.ts";
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
