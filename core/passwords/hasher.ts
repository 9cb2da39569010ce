/**
 * `PasswordHasher`: where the expensive password work runs. Two implementations share
 * the interface: the worker pool (`pool.ts`, the default wherever workers exist) and
 * `InThreadPasswordHasher`, the fallback that runs the work on the calling thread.
 *
 * @module
 */
import type { Argon2idParams } from "./argon2-params.ts";
import { type PasswordJob, runPasswordJob } from "./jobs.ts";

/** Runs argon2id hashing and verification under any registered tag. */
export interface PasswordHasher {
  /** Where the work runs: `"workers"` (a pool), `"in-thread"` or `"native"` (the runtime's argon2id). */
  readonly kind: "workers" | "in-thread" | "native";
  /** The argon2id PHC string of `password` with these parameters and salt. */
  hashArgon2id(password: string, params: Argon2idParams, salt: Uint8Array): Promise<string>;
  /**
   * Whether `password` matches `hash` stored under `tag`: false for a mismatch or a
   * malformed hash; rejects with `UnknownPasswordAlgorithmError` for an unknown tag.
   */
  verify(tag: string, hash: string, password: string): Promise<boolean>;
  /** Releases the workers, if any. Pending work is rejected. Idempotent. */
  close(): Promise<void>;
}

/**
 * The in-thread fallback: each job runs on the calling thread, so an argon2id hash blocks
 * the event loop for its whole duration. For runtimes without workers and for tests.
 */
export class InThreadPasswordHasher implements PasswordHasher {
  /** Work runs in the calling thread. */
  readonly kind = "in-thread" as const;
  #closed = false;

  /** The argon2id PHC string of `password`, computed in this thread. */
  hashArgon2id(password: string, params: Argon2idParams, salt: Uint8Array): Promise<string> {
    return this.#run({ op: "hash", password, params, salt }) as Promise<string>;
  }

  /** Whether `password` matches `hash` stored under `tag`, computed in this thread. */
  verify(tag: string, hash: string, password: string): Promise<boolean> {
    return this.#run({ op: "verify", tag, hash, password }) as Promise<boolean>;
  }

  /** Refuses further work; there are no workers to release. */
  close(): Promise<void> {
    this.#closed = true;
    return Promise.resolve();
  }

  async #run(job: PasswordJob): Promise<string | boolean> {
    if (this.#closed) throw new Error("The password hasher is closed.");
    return await runPasswordJob(job);
  }
}
