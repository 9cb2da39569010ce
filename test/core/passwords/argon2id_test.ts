/**
 * `argon2id`: known answers of the reference implementation (phc-winner-argon2
 * `src/test.c`, argon2id v0x13 rows for "password"/"somesalt"), the PHC string format,
 * must-fail cases, a full-cost (64 MiB, t=3) round trip, and fast-check properties at a
 * low cost (the parameters do not matter to the property).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { utf8 } from "../../../core/encoding.ts";
import { DEFAULT_ARGON2ID_PARAMS } from "../../../core/passwords/argon2-params.ts";
import { hashArgon2id, parseArgon2id, verifyArgon2id } from "../../../core/passwords/argon2id.ts";
import { InThreadPasswordHasher } from "../../../core/passwords/hasher.ts";
import { PasswordService } from "../../../core/passwords/service.ts";

const REFERENCE: [{ memoryKiB: number; iterations: number; parallelism: number }, string][] = [
  [
    { memoryKiB: 256, iterations: 2, parallelism: 1 },
    "$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4",
  ],
  [
    { memoryKiB: 256, iterations: 2, parallelism: 2 },
    "$argon2id$v=19$m=256,t=2,p=2$c29tZXNhbHQ$bQk8UB/VmZZF4Oo79iDXuL5/0ttZwg2f/5U52iv1cDc",
  ],
];

const CHEAP = { memoryKiB: 256, iterations: 1, parallelism: 1 };

Deno.test("argon2id: the reference implementation's PHC strings are reproduced and verify", async () => {
  for (const [params, encoded] of REFERENCE) {
    assert.equal(await hashArgon2id("password", params, utf8("somesalt")), encoded);
    assert.deepEqual(parseArgon2id(encoded)?.params, params);
    assert.equal(await verifyArgon2id("password", encoded), true);
    assert.equal(await verifyArgon2id("passwore", encoded), false);
  }
});

Deno.test("argon2id: the empty password is never hashed and never verifies", async () => {
  const passwords = new PasswordService({ hasher: new InThreadPasswordHasher(), params: CHEAP });
  await assert.rejects(passwords.hash(""), { code: "invalid_request" });
  await assert.rejects(hashArgon2id("", CHEAP, utf8("somesalt")), RangeError);
  assert.equal(await verifyArgon2id("", REFERENCE[0][1]), false);
});

Deno.test("argon2id: must-fail cases", async () => {
  const good = REFERENCE[0][1];
  const cases: [string, string][] = [
    [good.replace("v=19", "v=16"), "version 0x10"],
    [good.replace("$v=19", ""), "no version"],
    [good.replace("$argon2id$", "$argon2i$"), "argon2i"],
    [good.replace("m=256", "m=0256"), "zero-padded memory"],
    [good.replace("m=256,t=2,p=1", "t=2,m=256,p=1"), "parameters out of order"],
    [good.replace("p=1", "p=1,keyid=AAAA"), "extra parameter"],
    [good.replace("m=256", "m=8,t=2,p=2").replace(",t=2,p=1", ""), "memory below 8 KiB per lane"],
    [good.replace("m=256", "m=4194305"), "memory above the bound"],
    [good.slice(0, -1), "truncated hash"],
    [good.slice(0, good.lastIndexOf("$")), "no hash"],
    [good + "$", "trailing field"],
    [good + "=", "padding"],
    [good.replace("c29tZXNhbHQ", "c29tZXNhbHQ="), "padded salt"],
    [good.replace("c29tZXNhbHQ", "c29tZX!hbHQ"), "bad salt character"],
    [good.replace("c29tZXNhbHQ", "c29tZQ"), "salt under 8 bytes"],
    ["", "empty"],
  ];
  for (const [encoded, why] of cases) {
    assert.equal(parseArgon2id(encoded), null, why);
    assert.equal(await verifyArgon2id("password", encoded), false, why);
  }
});

Deno.test("argon2id: a full-cost round trip (64 MiB, 3 iterations, 1 lane)", async () => {
  const passwords = new PasswordService({ hasher: new InThreadPasswordHasher() });
  assert.deepEqual(passwords.params, DEFAULT_ARGON2ID_PARAMS);
  const stored = await passwords.hash("correct horse battery staple");
  assert.equal(stored.algorithm, "argon2id");
  assert.match(stored.hash, /^\$argon2id\$v=19\$m=65536,t=3,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
  assert.deepEqual(await passwords.verify(stored, "correct horse battery staple"), {
    valid: true,
    needsRehash: false,
  });
  await passwords.close();
});

Deno.test("argon2id: property: hash then verify succeeds, a different password fails", async () => {
  const passwords = new PasswordService({ hasher: new InThreadPasswordHasher(), params: CHEAP });
  await fc.assert(
    fc.asyncProperty(
      fc.string({ unit: "grapheme", minLength: 1, maxLength: 40 }),
      fc.string({ maxLength: 40 }),
      async (a, b) => {
        fc.pre(a !== b);
        const stored = await passwords.hash(a);
        assert.equal((await passwords.verify(stored, a)).valid, true);
        assert.equal((await passwords.verify(stored, b)).valid, false);
      },
    ),
    { numRuns: 25 },
  );
});

Deno.test("argon2id: property: two hashes of one password differ (fresh salts) and both verify", async () => {
  const passwords = new PasswordService({ hasher: new InThreadPasswordHasher(), params: CHEAP });
  await fc.assert(
    fc.asyncProperty(fc.string({ minLength: 1, maxLength: 20 }), async (pw) => {
      const [x, y] = [await passwords.hash(pw), await passwords.hash(pw)];
      assert.notEqual(x.hash, y.hash);
      assert.equal((await passwords.verify(y, pw)).valid, true);
    }),
    { numRuns: 10 },
  );
});
