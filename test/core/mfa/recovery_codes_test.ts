import { strict as assert } from "node:assert";
import fc from "fast-check";
import { ManualClock } from "../../../core/clock.ts";
import {
  generateRecoveryCode,
  normalizeRecoveryCode,
  RecoveryCodeService,
} from "../../../core/mfa/recovery-codes.ts";
import { cryptoRandom, seededRandom } from "../../../core/random.ts";
import { hashRecoveryCode } from "../../../core/storage/recovery-codes.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { freshEmbedded } from "../../support/db.ts";
import { seeder } from "../../support/seed.ts";

const FORMAT = /^[0-9a-hjkmnp-tv-z]{4}(?:-[0-9a-hjkmnp-tv-z]{4}){3}$/;

Deno.test("recovery codes: format, 80 bits, and normalization of what people type", () => {
  fc.assert(
    fc.property(fc.integer(), (seed) => {
      const code = generateRecoveryCode(seededRandom(seed));
      assert.match(code, FORMAT);
      const canonical = code.replace(/-/g, "");
      assert.equal(normalizeRecoveryCode(code), canonical);
      assert.equal(normalizeRecoveryCode(code.toUpperCase()), canonical);
      assert.equal(normalizeRecoveryCode(` ${code.replace(/-/g, " ")} `), canonical);
      assert.equal(normalizeRecoveryCode(canonical), canonical);
    }),
    { numRuns: 200 },
  );
  // Look-alikes read as digits (Crockford): i and l are 1, o is 0.
  assert.equal(normalizeRecoveryCode("IlO0-aaaa-bbbb-cccc"), "1100aaaabbbbcccc");
  assert.equal(normalizeRecoveryCode("aaaa-bbbb-cccc"), null);
  assert.equal(normalizeRecoveryCode("aaaa-bbbb-cccc-ddddd"), null);
  assert.equal(normalizeRecoveryCode("aaaa-bbbb-cccc-ddd!"), null);
  assert.equal(normalizeRecoveryCode("aaaa-bbbb-cccc-dddu"), null, "u is not in the alphabet");
  // 10 bytes of randomness per code, every symbol used.
  let drawn = 0;
  generateRecoveryCode({ bytes: (n) => (drawn += n, cryptoRandom.bytes(n)) });
  assert.equal(drawn, 10);
  const symbols = new Set(
    Array.from({ length: 200 }, () => generateRecoveryCode(cryptoRandom)).join("").replace(/-/g, ""),
  );
  assert.equal(symbols.size, 32);
});

Deno.test("recovery code service over the store", async (t) => {
  const database = await freshEmbedded();
  try {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const storage = createSqlStorage(database, { clock, random: cryptoRandom });
    const seed = seeder(database.db);
    const realm = await seed.realm();
    const service = new RecoveryCodeService({ store: storage.recoveryCodes, random: cryptoRandom });

    await t.step("a set of 10 distinct codes, stored as hashes only", async () => {
      const user = await seed.user(realm);
      const codes = await service.generate(user);
      assert.equal(codes.length, 10);
      assert.equal(new Set(codes).size, 10);
      for (const code of codes) assert.match(code, FORMAT);
      assert.equal(await service.remaining(user), 10);
      const rows = await database.db.selectFrom("recovery_codes").selectAll().where("user_id", "=", user)
        .execute();
      assert.deepEqual(
        rows.map((r) => r.code_hash).sort(),
        codes.map((c) => hashRecoveryCode(c.replace(/-/g, ""))).sort(),
      );
      const dump = JSON.stringify(rows);
      for (const code of codes) {
        assert.ok(!dump.includes(code) && !dump.includes(code.replace(/-/g, "")), "no plaintext at rest");
      }
    });

    await t.step("single use, in any typed form; another user's code does not work", async () => {
      const user = await seed.user(realm);
      const other = await seed.user(realm);
      const codes = await service.generate(user);
      const otherCodes = await service.generate(other);
      assert.equal(await service.consume(user, otherCodes[0]), false);
      assert.equal(await service.consume(user, codes[0].toUpperCase().replace(/-/g, " ")), true);
      assert.equal(await service.consume(user, codes[0]), false, "second use");
      assert.equal(await service.remaining(user), 9);
      assert.equal(await service.consume(user, "not a code"), false);
      assert.equal(await service.remaining(other), 10);
      // Concurrent presentations of one code: exactly one wins.
      const results = await Promise.all(Array.from({ length: 5 }, () => service.consume(user, codes[1])));
      assert.equal(results.filter(Boolean).length, 1);
      assert.equal(await service.remaining(user), 8);
    });

    await t.step("regenerating invalidates every old code", async () => {
      const user = await seed.user(realm);
      const old = await service.generate(user);
      assert.equal(await service.consume(user, old[0]), true);
      const fresh = await service.generate(user);
      assert.equal(await service.remaining(user), 10);
      for (const code of old) assert.equal(await service.consume(user, code), false);
      assert.equal(fresh.filter((c) => old.includes(c)).length, 0);
      assert.equal(await service.consume(user, fresh[9]), true);
      assert.equal(await service.remaining(user), 9);
    });

    await t.step("property: every code of a set works exactly once, in any order", async () => {
      const user = await seed.user(realm);
      const small = new RecoveryCodeService({ store: storage.recoveryCodes, random: cryptoRandom, count: 4 });
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 10 }),
          async (picks) => {
            const codes = await small.generate(user);
            const used = new Set<number>();
            for (const i of picks) {
              assert.equal(await small.consume(user, codes[i]), !used.has(i));
              used.add(i);
            }
            assert.equal(await small.remaining(user), 4 - used.size);
          },
        ),
        { numRuns: 25 },
      );
    });

    assert.throws(() =>
      new RecoveryCodeService({ store: storage.recoveryCodes, random: cryptoRandom, count: 0 })
    );
  } finally {
    await database.close();
  }
});
