import { strict as assert } from "node:assert";
import { ManualClock } from "../../../core/clock.ts";
import { SubjectCrypto, SubjectDataUnavailableError } from "../../../core/crypto/subject-keys.ts";
import { cryptoRandom } from "../../../core/random.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { T0 } from "../../support/auth.ts";
import { freshEmbedded } from "../../support/db.ts";
import { seeder } from "../../support/seed.ts";

Deno.test("subject keys: AES-256-GCM per subject, unrecoverable once the key row is deleted", async () => {
  const database = await freshEmbedded();
  const clock = new ManualClock(T0);
  const storage = createSqlStorage(database, { clock, random: cryptoRandom });
  const seed = seeder(database.db);
  const realm = await seed.realm();
  const [alice, bob] = [await seed.user(realm), await seed.user(realm)];
  const subjects = new SubjectCrypto(storage.subjectKeys, cryptoRandom);

  const sealed = await subjects.encrypt(alice, "+1 555 0100");
  const key = await storage.subjectKeys.get(alice);
  assert.equal(key!.key.length, 32, "AES-256");
  assert.equal(key!.createdAt.getTime(), T0);
  assert.equal(await subjects.decryptText(alice, sealed), "+1 555 0100");
  const again = await subjects.encrypt(alice, "+1 555 0100");
  assert.notDeepEqual(again, sealed, "a fresh IV each time");
  assert.equal(
    (await storage.subjectKeys.get(alice))!.key.toString(),
    key!.key.toString(),
    "one key per subject",
  );

  await subjects.encrypt(bob, "bob's secret");
  await assert.rejects(subjects.decrypt(bob, sealed), SubjectDataUnavailableError, "bound to its subject");
  const tampered = sealed.slice();
  tampered[tampered.length - 1] ^= 1;
  await assert.rejects(subjects.decrypt(alice, tampered), SubjectDataUnavailableError);

  assert.equal(await subjects.destroy(alice), true);
  await assert.rejects(subjects.decrypt(alice, sealed), { code: "subject_data_unavailable" });
  // A new key for the subject does not bring old data back.
  await subjects.encrypt(alice, "new");
  await assert.rejects(subjects.decrypt(alice, sealed), SubjectDataUnavailableError);
  await database.close();
});
