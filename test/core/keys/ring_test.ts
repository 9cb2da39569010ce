import { strict as assert } from "node:assert";
import { ManualClock } from "../../../core/clock.ts";
import { KeyRing } from "../../../core/keys/ring.ts";
import { seededRandom } from "../../../core/random.ts";
import type { SigningKeyStore } from "../../../core/storage/signing-keys.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { T0 } from "../../support/auth.ts";
import { freshEmbedded } from "../../support/db.ts";
import { seeder } from "../../support/seed.ts";

Deno.test("key ring", async (t) => {
  const database = await freshEmbedded();
  const clock = new ManualClock(T0);
  const random = seededRandom(3);
  const storage = createSqlStorage(database, { clock, random });
  let listCalls = 0;
  const store: SigningKeyStore = {
    ...storage.signingKeys,
    listPublished: (realmId, overlapMs) => {
      listCalls++;
      return storage.signingKeys.listPublished(realmId, overlapMs);
    },
  };
  const overlapMs = 3_600_000;
  const ring = new KeyRing({ store, clock, random, overlapMs });
  const realmId = await seeder(database.db).realm();

  await t.step("ensurePrimary is idempotent and safe when instances race", async () => {
    const others = [1, 2, 3].map(() => new KeyRing({ store, clock, random: seededRandom(9), overlapMs }));
    const keys = await Promise.all([ring, ...others].map((r) => r.ensurePrimary(realmId)));
    assert.equal(new Set(keys.map((k) => k.kid)).size, 1);
    const stored = await storage.signingKeys.getPrimary(realmId);
    assert.equal(stored!.kid, keys[0].kid);
    assert.equal(stored!.algorithm, "RS256");
    // PKCS#8 DER: a SEQUENCE.
    assert.equal(stored!.privateKey[0], 0x30);
    await ring.check(realmId);
  });

  await t.step(
    "rotation: a new primary signs, the retired key stays published through the overlap",
    async () => {
      const before = await ring.signingKey(realmId);
      const { primaryKid, retiredKid } = await ring.rotate(realmId);
      assert.equal(retiredKid, before.kid);
      assert.equal((await ring.signingKey(realmId)).kid, primaryKid);
      assert.ok(await ring.verificationKey(realmId, retiredKid!));
      assert.deepEqual((await ring.jwks(realmId)).keys.map((k) => k.kid), [primaryKid, retiredKid]);
      clock.advance(overlapMs - 1);
      assert.ok(await ring.verificationKey(realmId, retiredKid!));
      clock.advance(1);
      assert.equal(await ring.verificationKey(realmId, retiredKid!), null);
      assert.deepEqual((await ring.jwks(realmId)).keys.map((k) => k.kid), [primaryKid]);
    },
  );

  await t.step("an unknown kid reloads the key set at most once per refresh interval", async () => {
    await ring.jwks(realmId);
    clock.advance(10_000);
    const before = listCalls;
    for (let i = 0; i < 50; i++) assert.equal(await ring.verificationKey(realmId, `forged-${i}`), null);
    assert.equal(listCalls - before, 1);
    clock.advance(10_000);
    await ring.verificationKey(realmId, "forged-again");
    assert.equal(listCalls - before, 2);
  });

  await t.step(
    "a key rotated by another instance is found by kid without waiting for the cache",
    async () => {
      const other = new KeyRing({ store, clock, random: seededRandom(11), overlapMs });
      await ring.jwks(realmId);
      clock.advance(10_000);
      const { primaryKid } = await other.rotate(realmId);
      assert.ok(await ring.verificationKey(realmId, primaryKid));
    },
  );

  await t.step("check fails without a primary key", async () => {
    const empty = await seeder(database.db).realm();
    await assert.rejects(ring.check(empty), { code: "key_ring_unavailable" });
    assert.equal(await ring.verificationKey(empty, "x"), null);
    assert.deepEqual(await ring.jwks(empty), { keys: [] });
    // Signing in a realm without keys creates its primary.
    const created = await ring.signingKey(empty);
    assert.equal((await storage.signingKeys.getPrimary(empty))!.kid, created.kid);
  });

  await database.close();
});
