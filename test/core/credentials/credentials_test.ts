import { strict as assert } from "node:assert";
import { ManualClock } from "../../../core/clock.ts";
import { authenticateApiKey, createApiKey } from "../../../core/credentials/api-keys.ts";
import {
  authenticateServiceAccount,
  createServiceAccount,
  rotateServiceAccountSecret,
} from "../../../core/credentials/service-accounts.ts";
import { sha256Hex } from "../../../core/digest.ts";
import { seededRandom } from "../../../core/random.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { T0 } from "../../support/auth.ts";
import { freshEmbedded } from "../../support/db.ts";
import { seeder, uuid } from "../../support/seed.ts";

Deno.test("API keys and service accounts", async (t) => {
  const database = await freshEmbedded();
  const clock = new ManualClock(T0);
  const random = seededRandom(8);
  const storage = createSqlStorage(database, { clock, random });
  const realm = await seeder(database.db).realm();
  const owner = await seeder(database.db).user(realm);

  await t.step(
    "API keys: hash-only storage, lookup by hash, first revocation kept, last use best effort",
    async () => {
      const { token, key } = await createApiKey(storage.apiKeys, random, {
        realmId: realm,
        ownerKind: "User",
        ownerId: owner,
        name: "ci",
      });
      assert.equal(key.tokenHash, sha256Hex(token));
      const rows = await database.db.selectFrom("api_keys").selectAll().execute();
      assert.ok(!JSON.stringify(rows).includes(token.slice(4)), "the plaintext is never stored");
      clock.advance(1000);
      assert.equal((await authenticateApiKey(storage, clock, token))?.id, key.id);
      assert.equal(await authenticateApiKey(storage, clock, token.slice(0, -1) + "A"), null);
      assert.equal(await authenticateApiKey(storage, clock, "sak_short"), null);
      await new Promise((r) => setTimeout(r, 0));
      for (let i = 0; i < 20 && (await storage.apiKeys.get(key.id))!.lastUsedAt === null; i++) {
        await new Promise((r) => setTimeout(r, 5));
      }
      assert.equal((await storage.apiKeys.get(key.id))!.lastUsedAt?.getTime(), T0 + 1000);
      const first = await storage.apiKeys.revoke(key.id);
      clock.advance(5000);
      const second = await storage.apiKeys.revoke(key.id);
      assert.equal(
        second!.revokedAt!.getTime(),
        first!.revokedAt!.getTime(),
        "the first revocation time is kept",
      );
      assert.equal(await storage.apiKeys.revoke(uuid()), null, "an unknown id is a no-op");
      assert.equal(await authenticateApiKey(storage, clock, token), null);
    },
  );

  await t.step("service accounts: (realm, key) lookup, rotation overlap, disable", async () => {
    const { secret, account } = await createServiceAccount(storage.serviceAccounts, random, {
      realmId: realm,
      key: "deployer",
      displayName: "Deployer",
    });
    assert.match(secret, /^sas_/);
    const auth = (s: string) =>
      authenticateServiceAccount(storage.serviceAccounts, clock, realm, "deployer", s);
    assert.equal((await auth(secret))?.id, account.id);
    assert.equal(await auth("sas_nope"), null);
    assert.equal(
      await authenticateServiceAccount(storage.serviceAccounts, clock, uuid(), "deployer", secret),
      null,
      "another realm",
    );
    const rotated = await rotateServiceAccountSecret(storage.serviceAccounts, random, account.id, 60_000);
    assert.equal(rotated!.account.previousSecretHash, sha256Hex(secret));
    assert.ok(await auth(secret));
    assert.ok(await auth(rotated!.secret));
    clock.advance(60_000);
    assert.equal(await auth(secret), null, "the overlap is over");
    assert.ok(await auth(rotated!.secret));
    assert.equal(await rotateServiceAccountSecret(storage.serviceAccounts, random, uuid(), 1), null);
    await storage.serviceAccounts.setDisabled(account.id, true);
    assert.equal(await auth(rotated!.secret), null);
  });

  await database.close();
});
