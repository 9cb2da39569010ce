/**
 * The hashing side of the login "timing" rule (spec 5.2 step 2): an unknown user gets a
 * dummy argon2id verification doing the same work as a wrong password against a real
 * hash. Asserted on the work done (which verifications ran, with which parameters), never
 * on wall time. Low-cost parameters: the property does not depend on them.
 */
import assert from "node:assert/strict";
import { parseArgon2id } from "../../../core/passwords/argon2id.ts";
import { InThreadPasswordHasher, type PasswordHasher } from "../../../core/passwords/hasher.ts";
import { UnknownPasswordAlgorithmError } from "../../../core/passwords/registry.ts";
import { type DummyVerificationInfo, PasswordService } from "../../../core/passwords/service.ts";
import { seededRandom } from "../../../core/random.ts";

const PARAMS = { memoryKiB: 512, iterations: 2, parallelism: 1 };

/** An in-thread hasher that records every verification it runs. */
function recordingHasher() {
  const inner = new InThreadPasswordHasher();
  const verifications: { tag: string; hash: string }[] = [];
  const hasher: PasswordHasher = {
    kind: "in-thread",
    hashArgon2id: (p, params, salt) => inner.hashArgon2id(p, params, salt),
    verify(tag, hash, password) {
      verifications.push({ tag, hash });
      return inner.verify(tag, hash, password);
    },
    close: () => inner.close(),
  };
  return { hasher, verifications };
}

Deno.test("dummy: unknown user and wrong password run the same argon2id verification", async () => {
  const { hasher, verifications } = recordingHasher();
  const seen: DummyVerificationInfo[] = [];
  const passwords = new PasswordService({
    hasher,
    params: PARAMS,
    random: seededRandom(7),
    onDummyVerification: (info) => seen.push(info),
  });
  const stored = await passwords.hash("the real password");
  await passwords.prepare();

  // Wrong password for a known user.
  assert.deepEqual(await passwords.verify(stored, "a guess"), { valid: false, needsRehash: false });
  assert.equal(passwords.dummyVerifications, 0);
  // Unknown user.
  assert.equal(await passwords.verifyAgainstDummy("a guess"), false);
  assert.equal(passwords.dummyVerifications, 1);
  assert.deepEqual(seen, [{ params: PARAMS }]);

  assert.equal(verifications.length, 2);
  const [real, dummy] = verifications.map((v) => ({ tag: v.tag, parsed: parseArgon2id(v.hash) }));
  assert.equal(real.tag, "argon2id");
  assert.equal(dummy.tag, "argon2id");
  assert.deepEqual(dummy.parsed?.params, real.parsed?.params, "same memory, iterations and lanes");
  assert.equal(dummy.parsed?.hash.length, real.parsed?.hash.length);
  assert.equal(dummy.parsed?.salt.length, real.parsed?.salt.length);
  assert.notEqual(verifications[1].hash, stored.hash);
  await passwords.close();
});

Deno.test("dummy: the dummy hash is made once, with the configured parameters, and never matches", async () => {
  const { hasher, verifications } = recordingHasher();
  const passwords = new PasswordService({ hasher, params: PARAMS });
  for (const guess of ["", "x", "password"]) assert.equal(await passwords.verifyAgainstDummy(guess), false);
  assert.equal(passwords.dummyVerifications, 3);
  assert.equal(new Set(verifications.map((v) => v.hash)).size, 1);
  assert.deepEqual(parseArgon2id(verifications[0].hash)?.params, PARAMS);
  await passwords.close();
});

Deno.test("service: legacy hashes verify with needsRehash, a rehash gives a working argon2id hash", async () => {
  const passwords = new PasswordService({ hasher: new InThreadPasswordHasher(), params: PARAMS });
  const legacy = {
    algorithm: "pbkdf2-sha256",
    hash: "$pbkdf2-sha256$1212$4vjV83LKPjQzk31VI4E0Vw$hsYF68OiOUPdDZ1Fg.fJPeq1h/gXXY7acBp9/6c.tmQ",
  };
  assert.deepEqual(await passwords.verify(legacy, "password"), { valid: true, needsRehash: true });
  assert.deepEqual(await passwords.verify(legacy, "wrong"), { valid: false, needsRehash: false });
  const fresh = await passwords.hash("password");
  assert.deepEqual(await passwords.verify(fresh, "password"), { valid: true, needsRehash: false });
  const stronger = new PasswordService({
    hasher: new InThreadPasswordHasher(),
    params: { ...PARAMS, iterations: 3 },
  });
  assert.deepEqual(await stronger.verify(fresh, "password"), { valid: true, needsRehash: true });
  await assert.rejects(
    passwords.verify({ algorithm: "md5", hash: "x" }, "password"),
    UnknownPasswordAlgorithmError,
  );
  await passwords.close();
});
