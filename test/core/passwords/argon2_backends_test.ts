/**
 * argon2id backends: the WebAssembly SIMD build (`argon2-simd.ts`), hash-wasm's build (the
 * fallback), the `@node-rs/argon2` Node-API addon and, where the test runtime has one, the native
 * `crypto.argon2` of `node:crypto` (Node 24.7+, Bun; Deno has none) compute the same function: a PHC string minted on any backend
 * verifies on every other (fast-check, any password bytes including non-ASCII text, any salt,
 * parameters and output length), the reference answers hold on each, and the embedded SIMD module
 * is byte for byte the pinned package's. `NativeArgon2idHasher` bounds its concurrency and sends
 * other tags to its fallback.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { utf8 } from "../../../core/encoding.ts";
import type { Argon2idParams } from "../../../core/passwords/argon2-params.ts";
import {
  type Argon2idRawFunction,
  argon2SimdWasmBytes,
  hasWasmSimd,
  simdArgon2idRaw,
} from "../../../core/passwords/argon2-simd.ts";
import { hashWasmArgon2idRaw } from "../../../core/passwords/argon2id-hash-wasm.ts";
import { hashArgon2id, verifyArgon2id } from "../../../core/passwords/argon2id.ts";
import { InThreadPasswordHasher } from "../../../core/passwords/hasher.ts";
import { NativeArgon2idHasher } from "../../../core/passwords/native.ts";
import { napiArgon2idRaw, nativeArgon2idRaw, nodeCryptoArgon2idRaw } from "../../../cli/native-argon2.ts";

const native = nodeCryptoArgon2idRaw();
const napi = napiArgon2idRaw();
const BACKENDS: [string, Argon2idRawFunction][] = [
  ["wasm-simd", simdArgon2idRaw],
  ["hash-wasm", hashWasmArgon2idRaw],
  ...(napi ? [["@node-rs/argon2", napi] as [string, Argon2idRawFunction]] : []),
  ...(native ? [["node:crypto", native] as [string, Argon2idRawFunction]] : []),
];

Deno.test("argon2 backends: the @node-rs/argon2 addon loads on this platform and is the native choice here", () => {
  // Prebuilt for Linux, macOS and Windows on x64 and arm64 (among others): a miss here is a broken install.
  if (
    ["x86_64", "aarch64"].includes(Deno.build.arch) && ["linux", "darwin", "windows"].includes(Deno.build.os)
  ) {
    assert.ok(napi, "@node-rs/argon2 does not load");
  }
  // The addon is the native backend the adapters pick first (Deno has no crypto.argon2 anyway).
  assert.equal(native, null);
  if (napi) assert.ok(nativeArgon2idRaw());
});

Deno.test("argon2 backends: the embedded SIMD module is the pinned package's and validates here", async () => {
  const installed = await Deno.readFile(
    new URL("../../../node_modules/@phi-ag/argon2/dist/argon2.wasm", import.meta.url),
  );
  assert.deepEqual(argon2SimdWasmBytes(), installed, "run deno run -A cli/embed-argon2-wasm.ts");
  assert.equal(hasWasmSimd(), true);
});

Deno.test("argon2 backends: the reference answers on every backend", async () => {
  const params = { memoryKiB: 256, iterations: 2, parallelism: 2 };
  const expected = "$argon2id$v=19$m=256,t=2,p=2$c29tZXNhbHQ$bQk8UB/VmZZF4Oo79iDXuL5/0ttZwg2f/5U52iv1cDc";
  for (const [name, backend] of BACKENDS) {
    assert.equal(await hashArgon2id("password", params, utf8("somesalt"), backend), expected, name);
  }
});

Deno.test("argon2 backends: a hash from any backend verifies on every other (property)", async () => {
  const params = fc.record({
    memoryKiB: fc.integer({ min: 64, max: 512 }),
    iterations: fc.integer({ min: 1, max: 3 }),
    parallelism: fc.integer({ min: 1, max: 4 }),
  }).filter((p) => p.memoryKiB >= 8 * p.parallelism);
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        fc.string({ unit: "grapheme", minLength: 1, maxLength: 40 }),
        fc.uint8Array({ minLength: 1, maxLength: 80 }),
      ),
      fc.uint8Array({ minLength: 8, maxLength: 64 }),
      params,
      fc.nat({ max: BACKENDS.length - 1 }),
      async (password, salt, p: Argon2idParams, minter) => {
        const encoded = await hashArgon2id(password, p, salt, BACKENDS[minter][1]);
        for (const [name, backend] of BACKENDS) {
          assert.equal(
            await verifyArgon2id(password, encoded, backend),
            true,
            `${BACKENDS[minter][0]} → ${name}`,
          );
        }
        const wrong = typeof password === "string" ? `${password}x` : Uint8Array.of(...password, 1);
        assert.equal(
          await verifyArgon2id(wrong, encoded, BACKENDS[(minter + 1) % BACKENDS.length][1]),
          false,
        );
      },
    ),
    { numRuns: 40 },
  );
});

Deno.test("argon2 backends: the SIMD build hashes a password's UTF-8 bytes, not its UTF-16 length", async () => {
  const params = { memoryKiB: 64, iterations: 1, parallelism: 1 };
  const salt = utf8("somesalt");
  for (const password of ["pässwörd", "パスワード", "🔑🔑", "a\u0301"]) {
    const simd = await simdArgon2idRaw(utf8(password), params, salt, 32);
    assert.deepEqual(simd, await hashWasmArgon2idRaw(utf8(password), params, salt, 32), password);
    const truncated = utf8(password).subarray(0, password.length);
    assert.notDeepEqual(simd, await hashWasmArgon2idRaw(truncated, params, salt, 32), password);
  }
});

Deno.test("native hasher: at most `concurrency` at once, other tags on the fallback, refuses after close", async () => {
  let running = 0;
  let peak = 0;
  const slow: Argon2idRawFunction = async (password, params, salt, length) => {
    running++;
    peak = Math.max(peak, running);
    await new Promise((resolve) => setTimeout(resolve, 5));
    running--;
    return await simdArgon2idRaw(password, params, salt, length);
  };
  const fallbackCalls: string[] = [];
  const fallback = new InThreadPasswordHasher();
  const hasher = new NativeArgon2idHasher({
    raw: slow,
    concurrency: 2,
    fallback: {
      kind: "in-thread",
      hashArgon2id: (...a) => fallback.hashArgon2id(...a),
      verify: (tag, hash, password) => {
        fallbackCalls.push(tag);
        return fallback.verify(tag, hash, password);
      },
      close: () => fallback.close(),
    },
  });
  const params = { memoryKiB: 64, iterations: 1, parallelism: 1 };
  const hashes = await Promise.all(
    Array.from({ length: 7 }, (_, i) => hasher.hashArgon2id(`pw${i}`, params, utf8("somesalt"))),
  );
  assert.equal(peak, 2);
  for (const [i, encoded] of hashes.entries()) {
    assert.equal(await hasher.verify("argon2id", encoded, `pw${i}`), true);
    assert.equal(await verifyArgon2id(`pw${i}`, encoded), true, "the WASM backend verifies the native hash");
  }
  assert.deepEqual(fallbackCalls, []);
  const bcrypt = "$2b$04$abcdefghijklmnopqrstuu5Kk7ZzXb4k1s1m6.1q3f1kq8e9m1d5e";
  assert.equal(await hasher.verify("bcrypt", bcrypt, "x"), false);
  assert.deepEqual(fallbackCalls, ["bcrypt"]);
  await assert.rejects(hasher.verify("md5-crypt", "x", "y"), { code: "unknown_password_algorithm" });
  const pending = Array.from({ length: 4 }, () => hasher.hashArgon2id("late", params, utf8("somesalt")));
  await hasher.close();
  const settled = await Promise.allSettled(pending);
  assert.ok(settled.every((s) => s.status === "rejected" || typeof s.value === "string"));
  assert.ok(settled.some((s) => s.status === "rejected"), "queued work is refused once closed");
  await assert.rejects(hasher.hashArgon2id("after", params, utf8("somesalt")), /closed/);
});
