/**
 * The credential stamp (issue 19 item 6) on real Postgres connections: of concurrent resets
 * holding links minted under one stamp, exactly one swaps it; every password write rotates it,
 * a rehash (same password) does not.
 */
import { strict as assert } from "node:assert";
import { ManualClock } from "../../../core/clock.ts";
import { cryptoRandom } from "../../../core/random.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { T0 } from "../../support/auth.ts";
import { freshPostgres } from "../../support/db.ts";
import { seeder } from "../../support/seed.ts";

Deno.test("credential stamp: compare-and-swap under concurrency, rotated by password writes", async () => {
  const database = await freshPostgres({ maxConnections: 12 });
  try {
    const storage = createSqlStorage(database, { clock: new ManualClock(T0), random: cryptoRandom });
    const seed = seeder(database.db);
    const userId = await seed.user(await seed.realm());
    const stamp = (await storage.users.credentialStamp(userId))!;
    const results = await Promise.all(
      Array.from(
        { length: 10 },
        () => storage.transaction((tx) => tx.users.rotateCredentialStamp(userId, stamp)),
      ),
    );
    assert.equal(results.filter(Boolean).length, 1, "exactly one reset wins");

    const before = await storage.users.credentialStamp(userId);
    const first = { algorithm: "argon2id", hash: "$argon2id$v=19$m=8192,t=1,p=1$c2FsdA$aGFzaA" };
    await storage.passwordCredentials.replace(userId, first);
    const afterReplace = await storage.users.credentialStamp(userId);
    assert.notEqual(afterReplace, before);
    const next = { algorithm: "argon2id", hash: "$argon2id$v=19$m=8192,t=1,p=1$c2FsdA$b3RoZXI" };
    assert.equal(await storage.passwordCredentials.rehash(userId, first, next), true);
    assert.equal(await storage.users.credentialStamp(userId), afterReplace, "a rehash is no password change");
    await storage.passwordCredentials.upsert(userId, next);
    assert.equal(await storage.users.credentialStamp(userId), afterReplace, "an unchanged import neither");
    await storage.passwordCredentials.upsert(userId, first);
    assert.notEqual(await storage.users.credentialStamp(userId), afterReplace);
    assert.equal(await storage.users.credentialStamp("not-a-user"), null);
  } finally {
    await database.close();
  }
});
