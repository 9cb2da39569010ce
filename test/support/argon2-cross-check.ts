/**
 * Run by `test/cli/native_argon2_bun_test.ts` under Bun (any runtime works): a fast-check
 * property that an argon2id PHC string minted on any backend this runtime has (`node:crypto`'s
 * native `argon2` through the adapter's hasher, the WebAssembly SIMD build, hash-wasm, the
 * `@node-rs/argon2` addon where it loads) is the same
 * string and verifies on every other, and that `Bun.password` (when present) verifies svc's hashes
 * and svc verifies `Bun.password`'s. Prints the backends it checked; exits non-zero on a mismatch.
 */
import fc from "fast-check";
import process from "node:process";
import { napiArgon2idRaw, nodeCryptoArgon2idRaw, withNativeArgon2id } from "../../cli/native-argon2.ts";
import { hashArgon2id, verifyArgon2id } from "../../core/passwords/argon2id.ts";
import { hashWasmArgon2idRaw } from "../../core/passwords/argon2id-hash-wasm.ts";
import { simdArgon2idRaw } from "../../core/passwords/argon2-simd.ts";
import { InThreadPasswordHasher } from "../../core/passwords/hasher.ts";

const native = nodeCryptoArgon2idRaw();
if (!native) {
  console.error("this runtime has no node:crypto argon2");
  process.exit(2);
}
const hasher = withNativeArgon2id(new InThreadPasswordHasher(), 2);
const bun = (globalThis as {
  Bun?: {
    password: {
      hash(p: string, o: { algorithm: string; memoryCost: number; timeCost: number }): Promise<string>;
      verify(p: string, h: string): Promise<boolean>;
    };
  };
}).Bun;
const napi = napiArgon2idRaw();
const backends = [native, simdArgon2idRaw, hashWasmArgon2idRaw, ...(napi ? [napi] : [])];
await fc.assert(
  fc.asyncProperty(
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 }),
    fc.uint8Array({ minLength: 8, maxLength: 32 }),
    fc.record({
      memoryKiB: fc.integer({ min: 64, max: 512 }),
      iterations: fc.integer({ min: 1, max: 3 }),
      parallelism: fc.integer({ min: 1, max: 4 }),
    }).filter((p) => p.memoryKiB >= 8 * p.parallelism),
    async (password, salt, params) => {
      const minted = await Promise.all(backends.map((b) => hashArgon2id(password, params, salt, b)));
      if (new Set(minted).size !== 1) throw new Error(`backends differ: ${minted.join(" ")}`);
      if (await hasher.hashArgon2id(password, params, salt) !== minted[0]) throw new Error("hasher differs");
      for (const b of backends) {
        if (!await verifyArgon2id(password, minted[0], b)) throw new Error("does not verify");
        if (await verifyArgon2id(`${password}!`, minted[0], b)) throw new Error("a wrong password verifies");
      }
      if (!await hasher.verify("argon2id", minted[0], password)) throw new Error("native hasher refuses");
      if (bun && !await bun.password.verify(password, minted[0])) throw new Error("Bun.password refuses");
    },
  ),
  { numRuns: 30 },
);
if (bun) {
  const theirs = await bun.password.hash("pässwörd 🔑", {
    algorithm: "argon2id",
    memoryCost: 256,
    timeCost: 2,
  });
  for (const b of backends) {
    if (!await verifyArgon2id("pässwörd 🔑", theirs, b)) throw new Error("svc refuses Bun.password's hash");
  }
}
await hasher.close();
console.log(
  `ok: node:crypto argon2, wasm-simd, hash-wasm${napi ? ", @node-rs/argon2" : ""}${
    bun ? ", Bun.password" : ""
  }`,
);
