/**
 * argon2id on the WebAssembly SIMD build of the argon2 reference implementation
 * (`argon2-simd-wasm.ts`), called through its C exports with the password as raw bytes (the
 * package's own JavaScript wrapper passes a string's UTF-16 length as its byte length, which
 * truncates non-ASCII passwords, so it is not used). One instance per thread, made on first use;
 * engines without WebAssembly SIMD fall back to hash-wasm's build (`argon2id-hash-wasm.ts`).
 *
 * @module
 */
import { fromBase64 } from "../encoding.ts";
import type { Argon2idParams } from "./argon2-params.ts";
import { ARGON2_SIMD_WASM_BASE64 } from "./argon2-simd-wasm.ts";

/** Computes the raw argon2id output: `length` bytes of `password` under `params` and `salt`. */
export type Argon2idRawFunction = (
  password: Uint8Array,
  params: Argon2idParams,
  salt: Uint8Array,
  length: number,
) => Promise<Uint8Array>;

interface Argon2Exports {
  readonly memory: WebAssembly.Memory;
  _initialize(): void;
  malloc(size: number): number;
  free(pointer: number): void;
  argon2_hash(
    tCost: number,
    mCost: number,
    parallelism: number,
    pwd: number,
    pwdLength: number,
    salt: number,
    saltLength: number,
    hash: number,
    hashLength: number,
    encoded: number,
    encodedLength: number,
    type: number,
    version: number,
  ): number;
  argon2_error_message(code: number): number;
}

const ARGON2_ID = 2;
const ARGON2_VERSION_13 = 0x13;

/** The SIMD module's bytes. */
export function argon2SimdWasmBytes(): Uint8Array {
  return fromBase64(ARGON2_SIMD_WASM_BASE64);
}

/** Whether this engine can run the SIMD build. */
export function hasWasmSimd(): boolean {
  return typeof WebAssembly === "object" && WebAssembly.validate(argon2SimdWasmBytes() as BufferSource);
}

let instance: Promise<Argon2Exports> | null = null;

function simdInstance(): Promise<Argon2Exports> {
  instance ??= (async () => {
    const { instance } = await WebAssembly.instantiate(argon2SimdWasmBytes() as BufferSource, {});
    const exports = instance.exports as unknown as Argon2Exports;
    exports._initialize();
    return exports;
  })();
  return instance;
}

function errorMessage(exports: Argon2Exports, code: number): string {
  const heap = new Uint8Array(exports.memory.buffer);
  const start = exports.argon2_error_message(code);
  let end = start;
  while (end < heap.length && heap[end] !== 0 && end - start < 200) end++;
  return new TextDecoder().decode(heap.subarray(start, end));
}

/**
 * argon2id (version 0x13) on the SIMD build, in this thread. The password's copy in the module's
 * memory is zeroed before it is freed (the reference implementation wipes its own blocks).
 */
export const simdArgon2idRaw: Argon2idRawFunction = async (password, params, salt, length) => {
  const exports = await simdInstance();
  const pwd = exports.malloc(Math.max(password.length, 1));
  const saltPointer = exports.malloc(salt.length);
  const out = exports.malloc(length);
  try {
    if (pwd === 0 || saltPointer === 0 || out === 0) {
      throw new RangeError("argon2id: out of WebAssembly memory");
    }
    let heap = new Uint8Array(exports.memory.buffer);
    heap.set(password, pwd);
    heap.set(salt, saltPointer);
    const code = exports.argon2_hash(
      params.iterations,
      params.memoryKiB,
      params.parallelism,
      pwd,
      password.length,
      saltPointer,
      salt.length,
      out,
      length,
      0,
      0,
      ARGON2_ID,
      ARGON2_VERSION_13,
    );
    if (code !== 0) throw new RangeError(`argon2id: ${errorMessage(exports, code)}`);
    heap = new Uint8Array(exports.memory.buffer); // the memory grew: a new view
    return heap.slice(out, out + length);
  } finally {
    const heap = new Uint8Array(exports.memory.buffer);
    if (pwd !== 0) heap.fill(0, pwd, pwd + password.length);
    if (out !== 0) heap.fill(0, out, out + length);
    exports.free(pwd);
    exports.free(saltPointer);
    exports.free(out);
  }
};
