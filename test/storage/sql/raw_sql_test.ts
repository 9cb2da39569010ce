/** `storage.pluginSql`: raw statements on a plugin's table, inside the storage's transaction when bound to one. */
import { strict as assert } from "node:assert";
import { ManualClock } from "../../../core/clock.ts";
import { seededRandom } from "../../../core/random.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { drivers } from "../../support/db.ts";

for (const driver of drivers) {
  Deno.test(`${driver.name}: pluginSql runs in the transaction it is bound to`, async () => {
    const database = await driver.open();
    try {
      const storage = createSqlStorage(database, { clock: new ManualClock(0), random: seededRandom(1) });
      await storage.pluginSql.query("CREATE TABLE IF NOT EXISTS demo_items (name text PRIMARY KEY)");
      await storage.transaction(async (tx) => {
        await tx.pluginSql.query("INSERT INTO demo_items (name) VALUES ($1)", ["kept"]);
      });
      await assert.rejects(() =>
        storage.transaction(async (tx) => {
          await tx.pluginSql.query("INSERT INTO demo_items (name) VALUES ($1)", ["rolled-back"]);
          throw new Error("abort");
        })
      );
      const rows = await storage.pluginSql.query<{ name: string }>(
        "SELECT name FROM demo_items ORDER BY name",
      );
      assert.deepEqual(rows.map((row) => row.name), ["kept"]);
    } finally {
      await database.close();
    }
  });
}
