/**
 * Cost ceilings of stored hashes (`core/passwords/cost.ts`, `PasswordService.verify`):
 * for every family, a hash at its ceiling is handed to the hasher and one beyond it is
 * refused before any work (the hasher only ever sees the dummy argon2id verification),
 * answering exactly what a wrong password answers. A spy hasher does no hashing at all.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  costCeilingExceeded,
  DEFAULT_PASSWORD_COST_CEILINGS,
  PASSWORD_COST_CEILING_BOUNDS,
  type PasswordCostCeilings,
  passwordHashCost,
} from "../../../core/passwords/cost.ts";
import type { PasswordHasher } from "../../../core/passwords/hasher.ts";
import { PasswordService } from "../../../core/passwords/service.ts";
import { toPhcB64 } from "../../../core/passwords/b64.ts";
import { toBase64 } from "../../../core/encoding.ts";
import { seededRandom } from "../../../core/random.ts";
import { loadConfig } from "../../../core/config/load.ts";

/** Tiny minting parameters, so that the argon2id ceilings are the configured ones. */
const PARAMS = { memoryKiB: 8, iterations: 1, parallelism: 1 };
const DUMMY = "$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$ZHVtbXlkdW1teWR1bW15ZHVtbXk";

/** A hasher that hashes nothing: it records each verification and says "match". */
function spyHasher() {
  const calls: { tag: string; hash: string }[] = [];
  const hasher: PasswordHasher = {
    kind: "in-thread",
    hashArgon2id: () => Promise.resolve(DUMMY),
    verify(tag, hash) {
      calls.push({ tag, hash });
      return Promise.resolve(true);
    },
    close: () => Promise.resolve(),
  };
  return { hasher, calls };
}

const bytes = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);
const BCRYPT_ALPHABET = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A well-formed hash of `family` asking for `cost` (bcrypt cost, PBKDF2 iterations, argon2id t or m). */
function hashOf(family: Family, cost: number, seed: number): { algorithm: string; hash: string } {
  switch (family) {
    case "bcrypt": {
      const body = Array.from({ length: 53 }, (_, i) => BCRYPT_ALPHABET[(i * 7 + seed) % 64]).join("");
      return { algorithm: "bcrypt", hash: `$2b$${String(cost).padStart(2, "0")}$${body}` };
    }
    case "pbkdf2-phc":
      return {
        algorithm: "pbkdf2-sha256",
        hash: `$pbkdf2-sha256$i=${cost},l=32$${toPhcB64(bytes(16, seed))}$${toPhcB64(bytes(32, seed + 1))}`,
      };
    case "pbkdf2-passlib":
      return {
        algorithm: "pbkdf2-sha256",
        hash: `$pbkdf2-sha256$${cost}$${toPhcB64(bytes(16, seed)).replace(/\+/g, ".")}$${
          toPhcB64(bytes(32, seed + 1)).replace(/\+/g, ".")
        }`,
      };
    case "aspnet-v3": {
      const payload = new Uint8Array(13 + 16 + 32);
      const view = new DataView(payload.buffer);
      payload[0] = 0x01;
      view.setUint32(1, seed % 3);
      view.setUint32(5, cost);
      view.setUint32(9, 16);
      payload.set(bytes(16, seed), 13);
      payload.set(bytes(32, seed + 1), 29);
      return { algorithm: "framework-identity-v3", hash: toBase64(payload) };
    }
    case "argon2id-t":
      return {
        algorithm: "argon2id",
        hash: `$argon2id$v=19$m=8192,t=${cost},p=1$${toPhcB64(bytes(16, seed))}$${toPhcB64(bytes(32, seed))}`,
      };
    case "argon2id-m":
      return {
        algorithm: "argon2id",
        hash: `$argon2id$v=19$m=${cost},t=1,p=1$${toPhcB64(bytes(16, seed))}$${toPhcB64(bytes(32, seed))}`,
      };
  }
}

type Family = "bcrypt" | "pbkdf2-phc" | "pbkdf2-passlib" | "aspnet-v3" | "argon2id-t" | "argon2id-m";
const FAMILIES: readonly Family[] = [
  "bcrypt",
  "pbkdf2-phc",
  "pbkdf2-passlib",
  "aspnet-v3",
  "argon2id-t",
  "argon2id-m",
];

/** The ceiling a family is held to. */
function ceilingOf(family: Family, c: PasswordCostCeilings): number {
  if (family === "bcrypt") return c.bcryptCost;
  if (family === "argon2id-t") return c.argon2Iterations;
  if (family === "argon2id-m") return c.argon2MemoryKiB;
  return c.pbkdf2Iterations;
}

/** The largest cost a family's header can carry (bcrypt: two digits, up to 31 in the format). */
const FORMAT_MAX: Record<Family, number> = {
  "bcrypt": 31,
  "pbkdf2-phc": 9_999_999_999,
  "pbkdf2-passlib": 9_999_999_999,
  "aspnet-v3": 0xffff_ffff,
  "argon2id-t": 9_999_999_999,
  "argon2id-m": 9_999_999_999,
};

const [bMin, bMax] = PASSWORD_COST_CEILING_BOUNDS.bcryptCost;
const [pMin, pMax] = PASSWORD_COST_CEILING_BOUNDS.pbkdf2Iterations;
const [mMin, mMax] = PASSWORD_COST_CEILING_BOUNDS.argon2MemoryKiB;
const [tMin, tMax] = PASSWORD_COST_CEILING_BOUNDS.argon2Iterations;
const ceilingsArb: fc.Arbitrary<PasswordCostCeilings> = fc.record({
  bcryptCost: fc.integer({ min: bMin, max: bMax }),
  pbkdf2Iterations: fc.integer({ min: pMin, max: pMax }),
  argon2MemoryKiB: fc.integer({ min: mMin, max: mMax }),
  argon2Iterations: fc.integer({ min: tMin, max: tMax }),
});

Deno.test("cost ceilings: at the ceiling the hasher verifies; beyond it the hasher never sees the hash", async () => {
  await fc.assert(
    fc.asyncProperty(
      ceilingsArb,
      fc.constantFrom(...FAMILIES),
      fc.integer({ min: 1, max: 1_000_000 }),
      fc.nat(1000),
      async (ceilings, family, beyondBy, seed) => {
        const ceiling = ceilingOf(family, ceilings);
        const atCeiling = hashOf(family, ceiling, seed);
        const beyond = hashOf(family, Math.min(ceiling + beyondBy, FORMAT_MAX[family]), seed);
        assert.ok(passwordHashCost(atCeiling.algorithm, atCeiling.hash), "the generated header is readable");

        const { hasher, calls } = spyHasher();
        const passwords = new PasswordService({
          hasher,
          params: PARAMS,
          ceilings,
          random: seededRandom(seed),
        });
        assert.deepEqual({ ...passwords.ceilings }, { ...ceilings });

        // At the ceiling: handed to the hasher as it is.
        assert.equal(costCeilingExceeded(atCeiling.algorithm, atCeiling.hash, ceilings), null);
        assert.deepEqual(await passwords.verify(atCeiling, "pw"), {
          valid: true,
          needsRehash: atCeiling.algorithm !== "argon2id",
        });
        assert.deepEqual(calls, [{ tag: atCeiling.algorithm, hash: atCeiling.hash }]);

        // Beyond it: refused before any work on it; the dummy verification runs instead.
        calls.length = 0;
        const dummies = passwords.dummyVerifications;
        assert.notEqual(costCeilingExceeded(beyond.algorithm, beyond.hash, ceilings), null);
        assert.deepEqual(await passwords.verify(beyond, "pw"), { valid: false, needsRehash: false });
        assert.deepEqual(calls, [{ tag: "argon2id", hash: DUMMY }], "only the dummy verification ran");
        assert.equal(passwords.dummyVerifications, dummies + 1, "the same work as an unknown account");
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("cost ceilings: the defaults are the configuration's, and $2b$31$ is beyond them", async () => {
  const { config } = loadConfig({ env: {} });
  assert.deepEqual(
    {
      bcryptCost: config.password.maxBcryptCost,
      pbkdf2Iterations: config.password.maxPbkdf2Iterations,
      argon2MemoryKiB: config.password.maxArgon2MemoryKiB,
      argon2Iterations: config.password.maxArgon2Iterations,
    },
    { ...DEFAULT_PASSWORD_COST_CEILINGS },
  );
  assert.equal(DEFAULT_PASSWORD_COST_CEILINGS.bcryptCost, 14);
  const { hasher, calls } = spyHasher();
  const passwords = new PasswordService({ hasher, params: PARAMS });
  const cost31 = hashOf("bcrypt", 31, 1);
  assert.match(
    costCeilingExceeded(cost31.algorithm, cost31.hash, passwords.ceilings)!,
    /SVC_PASSWORD_MAX_BCRYPT_COST/,
  );
  assert.deepEqual(await passwords.verify(cost31, "pw"), { valid: false, needsRehash: false });
  assert.deepEqual(calls.map((c) => c.tag), ["argon2id"]);
});

Deno.test("cost ceilings: svc's own argon2id parameters always pass, whatever the argon2id ceilings", () => {
  const params = { memoryKiB: 65536, iterations: 3, parallelism: 1 };
  const { hasher } = spyHasher();
  const passwords = new PasswordService({
    hasher,
    params,
    ceilings: { ...DEFAULT_PASSWORD_COST_CEILINGS, argon2MemoryKiB: 8192, argon2Iterations: 1 },
  });
  const own = `$argon2id$v=19$m=65536,t=3,p=1$${toPhcB64(bytes(16, 1))}$${toPhcB64(bytes(32, 2))}`;
  assert.equal(passwords.exceedsCeiling({ algorithm: "argon2id", hash: own }), null);
  assert.notEqual(
    passwords.exceedsCeiling({ algorithm: "argon2id", hash: own.replace("m=65536", "m=65537") }),
    null,
  );
});

Deno.test("cost ceilings: the settings are bounded (a ceiling beyond its bound is a config error)", () => {
  assert.throws(
    () => loadConfig({ env: { SVC_PASSWORD_MAX_BCRYPT_COST: "31" } }),
    /SVC_PASSWORD_MAX_BCRYPT_COST/,
  );
  assert.throws(
    () => loadConfig({ env: { SVC_PASSWORD_MAX_PBKDF2_ITERATIONS: "20000000" } }),
    /SVC_PASSWORD_MAX_PBKDF2_ITERATIONS/,
  );
  const { config } = loadConfig({ env: { SVC_PASSWORD_MAX_BCRYPT_COST: "12" } });
  assert.equal(config.password.maxBcryptCost, 12);
});

Deno.test("cost ceilings: an unreadable header or an unknown tag has no cost (the verifier refuses it unhashed)", () => {
  for (
    const [tag, hash] of [
      ["bcrypt", "$2b$xx$abc"],
      ["pbkdf2-sha256", "$pbkdf2-sha256$i=abc$x$y"],
      ["framework-identity-v3", "not base64!"],
      ["argon2id", "$argon2i$v=19$m=1,t=1,p=1$x$y"],
      ["scrypt", "$scrypt$ln=30,r=8,p=1$x$y"],
    ]
  ) assert.equal(passwordHashCost(tag, hash), null, `${tag} ${hash}`);
});
