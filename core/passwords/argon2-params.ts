/**
 * argon2id cost parameters: the spec default (64 MiB, 3 iterations, one lane), the
 * configured values (`password.argon2*`, `SVC_ARGON2_*`), and the comparison that
 * decides whether a stored hash is weaker than what svc mints today.
 *
 * @module
 */

/** argon2id cost parameters. */
export interface Argon2idParams {
  /** Memory in KiB (`m`). */
  readonly memoryKiB: number;
  /** Passes over memory (`t`). */
  readonly iterations: number;
  /** Lanes (`p`). */
  readonly parallelism: number;
}

/** Spec 2.3 and 8: 64 MiB, 3 iterations, one lane. */
export const DEFAULT_ARGON2ID_PARAMS: Argon2idParams = Object.freeze({
  memoryKiB: 65536,
  iterations: 3,
  parallelism: 1,
});

/** Salt bytes of a new hash. */
export const ARGON2ID_SALT_BYTES = 16;
/** Output bytes of a new hash. */
export const ARGON2ID_HASH_BYTES = 32;

/** The `password` section of the configuration (`SvcConfig["password"]`). */
export interface PasswordConfig {
  /** Memory of a new hash in KiB (`SVC_ARGON2_MEMORY_KIB`). */
  readonly argon2MemoryKiB: number;
  /** Passes over memory of a new hash (`SVC_ARGON2_ITERATIONS`). */
  readonly argon2Iterations: number;
  /** Lanes of a new hash (`SVC_ARGON2_PARALLELISM`). */
  readonly argon2Parallelism: number;
  /** Password hashing workers (absent: one per core, at most 4; 0: in-thread). */
  readonly hashWorkers?: number;
}

/** The argon2id parameters of the configuration. */
export function argon2idParamsFromConfig(config: PasswordConfig): Argon2idParams {
  return {
    memoryKiB: config.argon2MemoryKiB,
    iterations: config.argon2Iterations,
    parallelism: config.argon2Parallelism,
  };
}

/**
 * Whether `stored` costs less than `wanted` on memory or on time (lanes change how
 * the work is split, not how much of it there is, so they never trigger a rehash).
 */
export function isWeakerArgon2id(stored: Argon2idParams, wanted: Argon2idParams): boolean {
  return stored.memoryKiB < wanted.memoryKiB || stored.iterations < wanted.iterations;
}
