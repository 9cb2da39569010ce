/**
 * Password hashing cost at the spec parameters (argon2id, 64 MiB, 3 iterations, 1 lane),
 * every figure beside the raw hash measured in the same run (the group baseline):
 *
 *     deno bench -A bench/password_bench.ts
 *
 * - raw: the default backend (the WebAssembly SIMD build) called directly, in this thread (the
 *   floor), and hash-wasm's build (no SIMD; the previous default, now the fallback) beside it;
 * - pool: the same hash through `WorkerPoolPasswordHasher` (Web Workers), one at a time:
 *   the raw cost plus the message round trip to a worker;
 * - pool ×2: two hashes at once on a two-worker pool, reported per call (two hashes);
 * - service verify: `PasswordService.verify` of a stored hash through the pool (a login's
 *   password check);
 * - in-thread fallback: `InThreadPasswordHasher`, for the runtimes without workers.
 *
 * The backends side by side on Deno, Node and Bun (with the native ones): `bench/password_backends.ts`.
 *
 * @module
 */
import { simdArgon2idRaw } from "../core/passwords/argon2-simd.ts";
import { hashWasmArgon2idRaw } from "../core/passwords/argon2id-hash-wasm.ts";
import { DEFAULT_ARGON2ID_PARAMS } from "../core/passwords/argon2-params.ts";
import { InThreadPasswordHasher } from "../core/passwords/hasher.ts";
import { webWorkerFactory, WorkerPoolPasswordHasher } from "../core/passwords/pool.ts";
import { PasswordService } from "../core/passwords/service.ts";

const params = DEFAULT_ARGON2ID_PARAMS;
const salt = crypto.getRandomValues(new Uint8Array(16));
const pool = new WorkerPoolPasswordHasher({ size: 2, factory: webWorkerFactory() });
const inThread = new InThreadPasswordHasher();
const passwords = new PasswordService({ hasher: pool, params });
// Start both workers (and compile the WASM in each) before measuring.
await Promise.all([pool.hashArgon2id("warm-up", params, salt), pool.hashArgon2id("warm-up", params, salt)]);
const stored = await passwords.hash("correct horse battery staple");

const options = { group: "argon2id 64 MiB t=3 p=1", n: 8, warmup: 1 } as const;
const bytes = new TextEncoder().encode("correct horse battery staple");
Deno.bench("raw wasm-simd argon2id (default), in thread", { ...options, baseline: true }, async () => {
  await simdArgon2idRaw(bytes, params, salt, 32);
});

Deno.bench("raw hash-wasm argon2id (no SIMD, fallback), in thread", options, async () => {
  await hashWasmArgon2idRaw(bytes, params, salt, 32);
});

Deno.bench("pool hash (Web Worker), one at a time", options, async (b) => {
  b.start();
  await pool.hashArgon2id("correct horse battery staple", params, salt);
  b.end();
});

Deno.bench("pool hash ×2 concurrent on 2 workers (per call: 2 hashes)", options, async () => {
  await Promise.all([
    pool.hashArgon2id("correct horse battery staple", params, salt),
    pool.hashArgon2id("another password", params, salt),
  ]);
});

Deno.bench("PasswordService.verify through the pool", options, async () => {
  await passwords.verify(stored, "correct horse battery staple");
});

Deno.bench("in-thread fallback hash", options, async () => {
  await inThread.hashArgon2id("correct horse battery staple", params, salt);
});
