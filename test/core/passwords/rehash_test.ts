/** Rehash decisions (spec 5.1): older tags and weaker argon2id parameters are rehashed on login. */
import assert from "node:assert/strict";
import { needsRehash } from "../../../core/passwords/rehash.ts";
import { argon2idParamsFromConfig, DEFAULT_ARGON2ID_PARAMS } from "../../../core/passwords/argon2-params.ts";
import { loadConfig } from "../../../core/config/load.ts";

const SALT = "c29tZXNhbHRzb21lc2FsdA";
const HASH = "CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc";
const argon = (m: number, t: number, p: number) => `$argon2id$v=19$m=${m},t=${t},p=${p}$${SALT}$${HASH}`;

Deno.test("rehash: argon2id at the configured parameters or stronger is kept", () => {
  const wanted = DEFAULT_ARGON2ID_PARAMS;
  assert.equal(needsRehash("argon2id", argon(65536, 3, 1), wanted), false);
  assert.equal(needsRehash("argon2id", argon(131072, 3, 1), wanted), false);
  assert.equal(needsRehash("argon2id", argon(65536, 4, 1), wanted), false);
  assert.equal(needsRehash("argon2id", argon(65536, 3, 4), wanted), false, "lanes alone never trigger");
});

Deno.test("rehash: weaker argon2id parameters, older tags and unparsable hashes are rehashed", () => {
  const wanted = DEFAULT_ARGON2ID_PARAMS;
  assert.equal(needsRehash("argon2id", argon(32768, 3, 1), wanted), true, "less memory");
  assert.equal(needsRehash("argon2id", argon(65536, 2, 1), wanted), true, "fewer iterations");
  assert.equal(needsRehash("argon2id", argon(262144, 1, 1), wanted), true, "more memory, fewer iterations");
  assert.equal(needsRehash("argon2id", "$argon2id$garbage", wanted), true, "unparsable");
  for (const tag of ["pbkdf2-sha256", "bcrypt", "framework-identity-v3", "argon2i", "unknown"]) {
    assert.equal(needsRehash(tag, argon(65536, 3, 1), wanted), true, tag);
  }
});

Deno.test("rehash: the thresholds follow SVC_ARGON2_* configuration", () => {
  const { config } = loadConfig({ env: { SVC_ARGON2_MEMORY_KIB: "131072", SVC_ARGON2_ITERATIONS: "4" } });
  const wanted = argon2idParamsFromConfig(config.password);
  assert.deepEqual(wanted, { memoryKiB: 131072, iterations: 4, parallelism: 1 });
  assert.equal(needsRehash("argon2id", argon(65536, 3, 1), wanted), true);
  assert.equal(needsRehash("argon2id", argon(131072, 4, 1), wanted), false);
  assert.deepEqual(
    argon2idParamsFromConfig(loadConfig({ env: {} }).config.password),
    DEFAULT_ARGON2ID_PARAMS,
  );
});
