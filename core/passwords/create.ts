/**
 * Chooses where password work runs: a worker pool of the configured size (one worker
 * per core by default, at most 4) when the runtime has workers, the in-thread fallback otherwise
 * or when the size is 0.
 *
 * @module
 */
import { InThreadPasswordHasher, type PasswordHasher } from "./hasher.ts";
import {
  defaultWorkerCount,
  type PasswordWorkerFactory,
  webWorkerFactory,
  WorkerPoolPasswordHasher,
} from "./pool.ts";

/** Options of `createPasswordHasher`. */
export interface PasswordHasherOptions {
  /**
   * Pool size (`config.password.hashWorkers`, `SVC_PASSWORD_HASH_WORKERS`): undefined for one per
   * core, 0 for the in-thread fallback.
   */
  readonly workers?: number;
  /** How workers are made; defaults to Web Workers where the runtime has them (Node's adapter passes its own). */
  readonly factory?: PasswordWorkerFactory;
  /**
   * A worker idle this long stops and gives back its memory (`config.password.workerIdleSeconds`
   * in ms); 0 or absent: workers never stop.
   */
  readonly idleMs?: number;
}

/** A worker pool when workers are available, else the in-thread fallback. */
export function createPasswordHasher(options: PasswordHasherOptions = {}): PasswordHasher {
  const size = options.workers ?? defaultWorkerCount();
  if (size === 0) return new InThreadPasswordHasher();
  const factory = options.factory ?? (typeof Worker === "function" ? webWorkerFactory() : undefined);
  if (!factory) return new InThreadPasswordHasher();
  return new WorkerPoolPasswordHasher({ size, factory, idleMs: options.idleMs });
}
