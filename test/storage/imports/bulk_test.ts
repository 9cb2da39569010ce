/**
 * The bulk store methods of imports, on both drivers: `users.createMany` / `findManyByEmail`
 * (natural key, one statement, a taken email fails the whole statement) and
 * `passwordCredentials.listForUsers` / `insertMany` (stamps rotate unless the users are fresh).
 */
import assert from "node:assert/strict";
import { ManualClock } from "../../../core/clock.ts";
import { seededRandom } from "../../../core/random.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { drivers } from "../../support/db.ts";

for (const driver of drivers) {
  Deno.test(`${driver.name}: bulk user and credential writes of imports`, async () => {
    const database = await driver.open();
    try {
      const storage = createSqlStorage(database, {
        clock: new ManualClock(1_767_225_600_000),
        random: seededRandom(3),
      });
      const realm = await storage.realms.create({ name: "bulk", displayName: "Bulk" });
      const created = await storage.users.createMany([
        { realmId: realm.id, email: " A@Example.test", emailVerified: true, attributes: { k: 1 } },
        { realmId: realm.id, email: "b@example.test", status: "Suspended" },
      ]);
      assert.deepEqual(created.map((u) => [u.email, u.emailVerified, u.status]), [
        ["a@example.test", true, "Active"],
        ["b@example.test", false, "Suspended"],
      ]);
      assert.deepEqual(await storage.users.get(created[0].id), created[0]);
      const found = await storage.users.findManyByEmail(realm.id, ["A@EXAMPLE.TEST", "nobody@example.test"]);
      assert.deepEqual(found.map((u) => u.id), [created[0].id]);
      await assert.rejects(
        storage.users.createMany([{ realmId: realm.id, email: "c@example.test" }, {
          realmId: realm.id,
          email: "a@example.test",
        }]),
        (e: Error & { details?: { reason?: string } }) => e.details?.reason === "user_email_taken",
      );
      assert.equal(await storage.users.findByEmail(realm.id, "c@example.test"), null, "all or nothing");

      const stamp = await storage.users.credentialStamp(created[0].id);
      await storage.passwordCredentials.insertMany([
        { userId: created[0].id, value: { algorithm: "bcrypt", hash: "$2b$04$x" } },
        { userId: created[1].id, value: { algorithm: "bcrypt", hash: "$2b$04$y" } },
      ]);
      assert.notEqual(
        await storage.users.credentialStamp(created[0].id),
        stamp,
        "a password write rotates the stamp",
      );
      const listed = await storage.passwordCredentials.listForUsers([
        created[0].id,
        created[1].id,
        "not-a-uuid",
      ]);
      assert.deepEqual(listed.map((c) => c.hash).sort(), ["$2b$04$x", "$2b$04$y"]);

      const [fresh] = await storage.users.createMany([{ realmId: realm.id, email: "d@example.test" }]);
      const freshStamp = await storage.users.credentialStamp(fresh.id);
      assert.notEqual(freshStamp, "", "bulk-created users start with a random stamp");
      await storage.passwordCredentials.insertMany([{
        userId: fresh.id,
        value: { algorithm: "bcrypt", hash: "z" },
      }], {
        freshUsers: true,
      });
      assert.equal(await storage.users.credentialStamp(fresh.id), freshStamp);
    } finally {
      await database.close();
    }
  });
}
