/**
 * `NativeArgon2idHasher`: argon2id on a native implementation (the `@node-rs/argon2` addon, or
 * Node's and Bun's `crypto.argon2`, passed in by the runtime adapter as an `Argon2idRawFunction`;
 * core never imports it). The native function runs off the event loop (on a thread pool), so
 * argon2id needs no worker of its own; at most `concurrency` hashes run at once (each holds its
 * memory cost), the rest wait in a FIFO queue. Verifiers of the other tags (imported hashes) run
 * on the `fallback` hasher. The PHC strings are the ones the WebAssembly backends make.
 *
 * @module
 */
import type { Argon2idParams } from "./argon2-params.ts";
import type { Argon2idRawFunction } from "./argon2-simd.ts";
import { ARGON2ID_TAG, hashArgon2id, verifyArgon2id } from "./argon2id.ts";
import type { PasswordHasher } from "./hasher.ts";
import { passwordAlgorithm } from "./registry.ts";

/** Options of {@link NativeArgon2idHasher}. */
export interface NativeArgon2idHasherOptions {
  /** The runtime's argon2id. */
  readonly raw: Argon2idRawFunction;
  /** How many argon2id computations may run at once (at least 1). */
  readonly concurrency: number;
  /** Runs the other tags' verifiers. Closed with this hasher. */
  readonly fallback: PasswordHasher;
}

/** argon2id on a native implementation; other tags on a fallback hasher. */
export class NativeArgon2idHasher implements PasswordHasher {
  /** argon2id runs on the runtime's own threads. */
  readonly kind = "native" as const;
  readonly #raw: Argon2idRawFunction;
  readonly #concurrency: number;
  readonly #fallback: PasswordHasher;
  readonly #queue: (() => void)[] = [];
  #running = 0;
  #closed = false;

  /** A hasher over `options.raw`, at most `options.concurrency` at once. */
  constructor(options: NativeArgon2idHasherOptions) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
      throw new RangeError("A native hasher needs a concurrency of at least one.");
    }
    this.#raw = options.raw;
    this.#concurrency = options.concurrency;
    this.#fallback = options.fallback;
  }

  /** The argon2id PHC string of `password`, on the native implementation. */
  hashArgon2id(password: string, params: Argon2idParams, salt: Uint8Array): Promise<string> {
    return this.#limited(() => hashArgon2id(password, params, salt, this.#raw));
  }

  /** Whether `password` matches `hash`: argon2id natively, other tags on the fallback. */
  verify(tag: string, hash: string, password: string): Promise<boolean> {
    if (tag !== ARGON2ID_TAG) return this.#fallback.verify(tag, hash, password);
    try {
      passwordAlgorithm(tag);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#limited(() => verifyArgon2id(password, hash, this.#raw));
  }

  /** Refuses further work, rejects the queued work and closes the fallback. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue.shift()?.(); // each woken waiter refuses and wakes the next
    await this.#fallback.close();
  }

  async #limited<T>(work: () => Promise<T>): Promise<T> {
    if (this.#closed) throw new Error("The password hasher is closed.");
    // A finished computation hands its slot straight to the next in the queue.
    if (this.#running < this.#concurrency) this.#running++;
    else await new Promise<void>((resolve) => this.#queue.push(resolve));
    try {
      if (this.#closed) throw new Error("The password hasher is closed.");
      return await work();
    } finally {
      const next = this.#queue.shift();
      if (next) next();
      else this.#running--;
    }
  }
}
