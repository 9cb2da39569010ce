import assert from "node:assert/strict";
import { ConflictError, ValidationError } from "../../../core/errors.ts";
import { drivers } from "../../support/db.ts";
import { bytesOf, clockAt, makeRealm, storesFor, uuid } from "./fixtures.ts";

const HOUR = 3_600_000;

for (const driver of drivers) {
  Deno.test(`${driver.name}: signing and subject keys`, async (t) => {
    const database = await driver.open();
    const db = database.db;
    try {
      await t.step("insert, getPrimary, get by kid, one primary per realm", async () => {
        const clock = clockAt();
        const { signingKeys } = storesFor(db, clock);
        const realm = await makeRealm(db);
        assert.equal(await signingKeys.getPrimary(realm), null);
        const k1 = await signingKeys.insert(realm, { kid: "k1", privateKey: bytesOf(64), isPrimary: true });
        assert.equal(k1.isPrimary, true);
        assert.equal(k1.algorithm, "RS256");
        assert.deepEqual(k1.privateKey, bytesOf(64));
        assert.deepEqual(await signingKeys.getPrimary(realm), k1);
        assert.deepEqual(await signingKeys.get(realm, "k1"), k1);
        assert.equal(await signingKeys.get(realm, "nope"), null);
        assert.equal(await signingKeys.get(uuid(), "k1"), null);
        assert.equal(await signingKeys.getPrimary("not-a-uuid"), null);
        await assert.rejects(
          signingKeys.insert(realm, { kid: "k2", privateKey: bytesOf(8), isPrimary: true }),
          ConflictError,
        );
        await assert.rejects(signingKeys.insert(realm, { kid: "k1", privateKey: bytesOf(8) }), ConflictError);
        // The same kid in another realm is fine.
        const other = await makeRealm(db);
        await signingKeys.insert(other, { kid: "k1", privateKey: bytesOf(8), isPrimary: true });
      });

      await t.step("rotation retires the primary and publishes it through the overlap window", async () => {
        const clock = clockAt();
        const { signingKeys } = storesFor(db, clock);
        const realm = await makeRealm(db);
        await signingKeys.insert(realm, { kid: "a", privateKey: bytesOf(32, 1), isPrimary: true });
        clock.advance(HOUR);
        const first = await signingKeys.rotate(realm, { kid: "b", privateKey: bytesOf(32, 2) });
        assert.equal(first.primary.kid, "b");
        assert.equal(first.primary.isPrimary, true);
        assert.equal(first.retired?.kid, "a");
        assert.equal(first.retired?.isPrimary, false);
        assert.equal(first.retired?.retiredAt?.getTime(), clock.now());
        assert.equal((await signingKeys.getPrimary(realm))?.kid, "b");

        const overlap = 24 * HOUR;
        assert.deepEqual((await signingKeys.listPublished(realm, overlap)).map((k) => k.kid), ["b", "a"]);
        clock.advance(overlap - 1);
        assert.deepEqual((await signingKeys.listPublished(realm, overlap)).map((k) => k.kid), ["b", "a"]);
        clock.advance(1);
        assert.deepEqual((await signingKeys.listPublished(realm, overlap)).map((k) => k.kid), ["b"]);
        // Retired keys stay readable by kid until pruned.
        assert.equal((await signingKeys.get(realm, "a"))?.retiredAt !== null, true);

        const second = await signingKeys.rotate(realm, { kid: "c", privateKey: bytesOf(32, 3) });
        assert.equal(second.retired?.kid, "b");
        assert.deepEqual((await signingKeys.listPublished(realm, overlap)).map((k) => k.kid), ["c", "b"]);
        assert.equal(await signingKeys.pruneRetired(realm, overlap), 1);
        assert.equal(await signingKeys.get(realm, "a"), null);
        assert.notEqual(await signingKeys.get(realm, "b"), null);
      });

      await t.step(
        "rotation of a realm without keys creates the first primary; kid clash rolls back",
        async () => {
          const clock = clockAt();
          const { signingKeys } = storesFor(db, clock);
          const realm = await makeRealm(db);
          const first = await signingKeys.rotate(realm, { kid: "x", privateKey: bytesOf(4) });
          assert.equal(first.retired, null);
          await assert.rejects(
            signingKeys.rotate(realm, { kid: "x", privateKey: bytesOf(4) }),
            ConflictError,
          );
          // The failed rotation left the old primary in place.
          const primary = await signingKeys.getPrimary(realm);
          assert.equal(primary?.kid, "x");
          assert.equal(primary?.retiredAt, null);
        },
      );

      await t.step("staged keys (never primary) are published", async () => {
        const clock = clockAt();
        const { signingKeys } = storesFor(db, clock);
        const realm = await makeRealm(db);
        await signingKeys.insert(realm, { kid: "p", privateKey: bytesOf(4), isPrimary: true });
        await signingKeys.insert(realm, { kid: "next", privateKey: bytesOf(4) });
        assert.deepEqual((await signingKeys.listPublished(realm, 0)).map((k) => k.kid), ["p", "next"]);
      });

      await t.step("subject keys: getOrCreate is idempotent and keeps the first key", async () => {
        const clock = clockAt();
        const { subjectKeys } = storesFor(db, clock);
        const subject = uuid();
        const a = await subjectKeys.getOrCreate(subject, bytesOf(32, 1));
        assert.equal(a.created, true);
        assert.deepEqual(a.key.key, bytesOf(32, 1));
        const b = await subjectKeys.getOrCreate(subject, bytesOf(32, 2));
        assert.equal(b.created, false);
        assert.deepEqual(b.key.key, bytesOf(32, 1));
        assert.deepEqual(await subjectKeys.get(subject), a.key);
        await assert.rejects(subjectKeys.getOrCreate(uuid(), bytesOf(16)), ValidationError);
      });

      await t.step("subject keys: concurrent getOrCreate agree on one key", async () => {
        const { subjectKeys } = storesFor(db, clockAt());
        const subject = uuid();
        const results = await Promise.all(
          Array.from({ length: 8 }, (_, i) => subjectKeys.getOrCreate(subject, bytesOf(32, i))),
        );
        assert.equal(results.filter((r) => r.created).length, 1);
        const winner = results.find((r) => r.created)!.key.key;
        for (const r of results) assert.deepEqual(r.key.key, winner);
      });

      await t.step("subject keys: delete destroys the key", async () => {
        const { subjectKeys } = storesFor(db, clockAt());
        const subject = uuid();
        await subjectKeys.getOrCreate(subject, bytesOf(32));
        assert.equal(await subjectKeys.delete(subject), true);
        assert.equal(await subjectKeys.delete(subject), false);
        assert.equal(await subjectKeys.get(subject), null);
        assert.equal(await subjectKeys.get("nope"), null);
      });
    } finally {
      await database.close();
    }
  });
}
