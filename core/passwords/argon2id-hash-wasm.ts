/**
 * argon2id on hash-wasm's WebAssembly build (no SIMD): the fallback for engines without
 * WebAssembly SIMD, and the reference the SIMD build is tested against. hash-wasm (all its
 * algorithms' WebAssembly in one module, 234 KB bundled) is imported on the first hash: a thread
 * that never falls back to it never holds it.
 *
 * @module
 */
import type { Argon2idRawFunction } from "./argon2-simd.ts";

/** argon2id (version 0x13) on hash-wasm, in this thread. */
export const hashWasmArgon2idRaw: Argon2idRawFunction = async (password, params, salt, length) =>
  await (await import("hash-wasm")).argon2id({
    password,
    salt,
    iterations: params.iterations,
    parallelism: params.parallelism,
    memorySize: params.memoryKiB,
    hashLength: length,
    outputType: "binary",
  });
