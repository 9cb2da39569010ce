/**
 * Native argon2id for the runtime adapters, in this order:
 *
 * 1. the Node-API build of `@node-rs/argon2` (the Rust `argon2` crate, prebuilt per platform),
 *    which Node, Deno and Bun all load: 2.2 times faster than the WebAssembly SIMD build on Deno
 *    and Node, and 3 times faster than Bun's own `crypto.argon2` and `Bun.password` in the same
 *    run (`bench/password_backends.ts`); argon2id is a sign-in's main cost (issue 29);
 * 2. the runtime's own: `crypto.argon2` of `node:crypto` (Node 24.7 and later, and Bun), found by
 *    feature, not by version, where the addon does not load.
 *
 * Both compute on a thread pool, off the event loop, and make the same bytes as the WebAssembly
 * backends (`test/core/passwords/argon2_backends_test.ts`). Where neither loads (a platform
 * without a prebuilt addon, a single binary that cannot load one), the adapters keep the
 * WebAssembly SIMD build in their worker pool.
 *
 * @module
 */
import * as crypto from "node:crypto";
import { createRequire } from "node:module";
import type { Argon2idRawFunction } from "../core/passwords/argon2-simd.ts";
import { NativeArgon2idHasher } from "../core/passwords/native.ts";
import type { PasswordHasher } from "../core/passwords/hasher.ts";

type Argon2Callback = (error: Error | null, key: Uint8Array) => void;
type NodeArgon2 = (
  algorithm: "argon2id",
  parameters: {
    message: Uint8Array;
    nonce: Uint8Array;
    parallelism: number;
    tagLength: number;
    memory: number;
    passes: number;
  },
  callback: Argon2Callback,
) => void;

/** `node:crypto`'s argon2id as an `Argon2idRawFunction`, or null when this runtime has none. */
export function nodeCryptoArgon2idRaw(): Argon2idRawFunction | null {
  const argon2 = (crypto as unknown as { argon2?: NodeArgon2 }).argon2;
  if (typeof argon2 !== "function") return null;
  return (password, params, salt, length) =>
    new Promise((resolve, reject) => {
      argon2("argon2id", {
        message: password,
        nonce: salt,
        parallelism: params.parallelism,
        tagLength: length,
        memory: params.memoryKiB,
        passes: params.iterations,
      }, (error, key) => {
        if (error) reject(error);
        else resolve(new Uint8Array(key.buffer, key.byteOffset, key.byteLength));
      });
    });
}

/** The part of `@node-rs/argon2` svc calls. */
interface NapiArgon2 {
  hashRaw(password: Uint8Array, options: {
    algorithm: number;
    version: number;
    memoryCost: number;
    timeCost: number;
    parallelism: number;
    outputLen: number;
    salt: Uint8Array;
  }): Promise<Uint8Array>;
}

/** `Algorithm.Argon2id` and `Version.V0x13` of `@node-rs/argon2` (const enums: not exported at run time). */
const NAPI_ARGON2ID = 2;
const NAPI_VERSION_0X13 = 1;

let napi: NapiArgon2 | null | undefined;

/**
 * `@node-rs/argon2`'s argon2id (Node-API) as an `Argon2idRawFunction`, or null when the addon
 * does not load here. Loaded once, on first ask.
 */
export function napiArgon2idRaw(): Argon2idRawFunction | null {
  if (napi === undefined) {
    try {
      const loaded = createRequire(import.meta.url)("@node-rs/argon2") as Partial<NapiArgon2>;
      napi = typeof loaded.hashRaw === "function" ? loaded as NapiArgon2 : null;
    } catch {
      napi = null;
    }
  }
  const addon = napi;
  if (addon === null) return null;
  return async (password, params, salt, length) => {
    const key = await addon.hashRaw(password, {
      algorithm: NAPI_ARGON2ID,
      version: NAPI_VERSION_0X13,
      memoryCost: params.memoryKiB,
      timeCost: params.iterations,
      parallelism: params.parallelism,
      outputLen: length,
      salt,
    });
    return new Uint8Array(key.buffer, key.byteOffset, key.byteLength);
  };
}

/** The native argon2id this process would use (see the module's order), or null. */
export function nativeArgon2idRaw(): Argon2idRawFunction | null {
  return napiArgon2idRaw() ?? nodeCryptoArgon2idRaw();
}

/**
 * `fallback` with argon2id moved to a native implementation when one loads and `native` is not
 * false (`SVC_ARGON2_NATIVE`): at most `concurrency` at once, at least 1; `fallback` itself
 * otherwise.
 */
export function withNativeArgon2id(
  fallback: PasswordHasher,
  concurrency: number,
  native = true,
): PasswordHasher {
  const raw = native ? nativeArgon2idRaw() : null;
  if (!raw) return fallback;
  return new NativeArgon2idHasher({ raw, concurrency: Math.max(1, concurrency), fallback });
}
