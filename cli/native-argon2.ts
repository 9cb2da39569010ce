/**
 * The runtime's native argon2id for the Node and Bun adapters: `crypto.argon2` of `node:crypto`
 * (Node 24.7 and later, and Bun), found by feature, not by version. Its async form computes on
 * the runtime's thread pool, off the event loop. Absent (older Node, Deno), the adapters keep the
 * WebAssembly SIMD build in their worker pool.
 *
 * @module
 */
import * as crypto from "node:crypto";
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

/**
 * `fallback` with argon2id moved to the runtime's native implementation when it has one (at most
 * `concurrency` at once, at least 1); `fallback` itself otherwise.
 */
export function withNativeArgon2id(fallback: PasswordHasher, concurrency: number): PasswordHasher {
  const raw = nodeCryptoArgon2idRaw();
  if (!raw) return fallback;
  return new NativeArgon2idHasher({ raw, concurrency: Math.max(1, concurrency), fallback });
}
