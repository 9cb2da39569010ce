/**
 * The `argon2id` algorithm (RFC 9106, version 0x13) in the PHC string format
 * `$argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt>$<hash>` with B64 (unpadded) salt and hash.
 * The hash itself runs on a backend (`Argon2idRawFunction`): by default the WebAssembly SIMD
 * build of the reference implementation (`argon2-simd.ts`), or hash-wasm's build where the engine
 * has no SIMD, in the calling thread (the worker pool, `pool.ts`, calls these functions inside its
 * workers); a runtime adapter may pass its runtime's native argon2id instead (`native.ts`). Every
 * backend computes the same function, so the PHC strings are the same everywhere.
 *
 * @module
 */
import { type Argon2idRawFunction, hasWasmSimd, simdArgon2idRaw } from "./argon2-simd.ts";
import { hashWasmArgon2idRaw } from "./argon2id-hash-wasm.ts";
import { constantTimeEqual } from "../digest.ts";
import { ARGON2ID_HASH_BYTES, type Argon2idParams } from "./argon2-params.ts";
import { fromPhcB64, toPhcB64 } from "./b64.ts";
import { passwordBytes, type PasswordInput } from "./password-bytes.ts";

/** The algorithm tag. */
export const ARGON2ID_TAG = "argon2id";

/** A parsed argon2id PHC string. */
export interface Argon2idHash {
  /** Memory, iterations and lanes the hash was made with. */
  readonly params: Argon2idParams;
  /** The salt. */
  readonly salt: Uint8Array;
  /** The derived key. */
  readonly hash: Uint8Array;
}

/** Bounds a stored hash must respect to be verified (a guard against hostile imports). */
const MAX_MEMORY_KIB = 4_194_304;
const MAX_ITERATIONS = 1000;
const MAX_LANES = 255;

const PHC =
  /^\$argon2id\$v=19\$m=([1-9][0-9]{0,9}),t=([1-9][0-9]{0,9}),p=([1-9][0-9]{0,9})\$([^$]+)\$([^$]+)$/;

/** Parses an argon2id PHC string; null when malformed or outside the accepted bounds. */
export function parseArgon2id(encoded: string): Argon2idHash | null {
  const m = PHC.exec(encoded);
  if (!m) return null;
  const params = { memoryKiB: Number(m[1]), iterations: Number(m[2]), parallelism: Number(m[3]) };
  if (
    params.memoryKiB > MAX_MEMORY_KIB || params.iterations > MAX_ITERATIONS ||
    params.parallelism > MAX_LANES || params.memoryKiB < 8 * params.parallelism
  ) return null;
  const salt = fromPhcB64(m[4]);
  const hash = fromPhcB64(m[5]);
  if (!salt || !hash || salt.length < 8 || salt.length > 64 || hash.length < 4 || hash.length > 64) {
    return null;
  }
  return { params, salt, hash };
}

/** The PHC string of a parsed hash. */
export function formatArgon2id({ params, salt, hash }: Argon2idHash): string {
  return `$argon2id$v=19$m=${params.memoryKiB},t=${params.iterations},p=${params.parallelism}$${
    toPhcB64(salt)
  }$${toPhcB64(hash)}`;
}

let portable: Argon2idRawFunction | null = null;

/**
 * The portable backend of this engine: the SIMD build where WebAssembly SIMD validates, else
 * hash-wasm's build. Chosen once per thread.
 */
export const wasmArgon2idRaw: Argon2idRawFunction = (password, params, salt, length) => {
  portable ??= hasWasmSimd() ? simdArgon2idRaw : hashWasmArgon2idRaw;
  return portable(password, params, salt, length);
};

/**
 * The raw argon2id output for a password, parameters, salt and length, on `backend` (default: the
 * portable WebAssembly one). An empty password is a `RangeError` here (svc never stores one).
 */
export async function argon2idRaw(
  password: PasswordInput,
  params: Argon2idParams,
  salt: Uint8Array,
  length: number = ARGON2ID_HASH_BYTES,
  backend: Argon2idRawFunction = wasmArgon2idRaw,
): Promise<Uint8Array> {
  const bytes = passwordBytes(password);
  if (bytes.length === 0) throw new RangeError("argon2id: the password is empty");
  return await backend(bytes, params, salt, length);
}

/** A new argon2id PHC string of the password with the given parameters and salt, on `backend`. */
export async function hashArgon2id(
  password: PasswordInput,
  params: Argon2idParams,
  salt: Uint8Array,
  backend: Argon2idRawFunction = wasmArgon2idRaw,
): Promise<string> {
  return formatArgon2id({
    params,
    salt,
    hash: await argon2idRaw(password, params, salt, ARGON2ID_HASH_BYTES, backend),
  });
}

/**
 * Whether the password matches the argon2id PHC string (on `backend`): false when the string is
 * malformed or outside the accepted bounds, and for the empty password (which svc never hashes).
 */
export async function verifyArgon2id(
  password: PasswordInput,
  encoded: string,
  backend: Argon2idRawFunction = wasmArgon2idRaw,
): Promise<boolean> {
  const parsed = parseArgon2id(encoded);
  if (!parsed || passwordBytes(password).length === 0) return false;
  const actual = await argon2idRaw(password, parsed.params, parsed.salt, parsed.hash.length, backend);
  return constantTimeEqual(actual, parsed.hash);
}
