import { strict as assert } from "node:assert";
import { ManualClock } from "../../core/clock.ts";
import { cryptoRandom } from "../../core/random.ts";
import { createSqlStorage } from "../../storage/storage.ts";
import { drivers } from "../support/db.ts";

for (const driver of drivers) {
  Deno.test(`createSqlStorage (${driver.name}): transactions span aggregates`, async (t) => {
    const database = await driver.open();
    const storage = createSqlStorage(database, {
      clock: new ManualClock(Date.UTC(2026, 0, 1)),
      random: cryptoRandom,
    });
    try {
      await t.step("a committed transaction keeps every change", async () => {
        const realm = await storage.transaction(async (tx) => {
          const realm = await tx.realms.create({ name: "committed", displayName: "Committed" });
          await tx.roles.create({ realmId: realm.id, key: "admin", displayName: "Admin" });
          await tx.consumedTokens.consume("jti-committed", new Date(Date.UTC(2027, 0, 1)));
          return realm;
        });
        assert.ok(await storage.roles.getByKey(realm.id, "admin", null));
        assert.equal(
          await storage.consumedTokens.consume("jti-committed", new Date(Date.UTC(2027, 0, 1))),
          false,
        );
      });

      await t.step("a failing transaction leaves nothing behind, nested calls included", async () => {
        await assert.rejects(
          storage.transaction(async (tx) => {
            await tx.realms.create({ name: "rolled-back", displayName: "Rolled back" });
            await tx.transaction(async (inner) => {
              await inner.consumedTokens.consume("jti-rolled-back", new Date(Date.UTC(2027, 0, 1)));
            });
            throw new Error("boom");
          }),
          /boom/,
        );
        assert.equal(await storage.realms.getByName("rolled-back"), null);
        assert.equal(
          await storage.consumedTokens.consume("jti-rolled-back", new Date(Date.UTC(2027, 0, 1))),
          true,
        );
      });
    } finally {
      await database.close();
    }
  });
}
