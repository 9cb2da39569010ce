/**
 * The settings of password hashing (`SvcConfig.password`): its valibot section, its written-out
 * types and its `SVC_ARGON2_*` / `SVC_PASSWORD_*` variables. `core/config/schema.ts` composes it
 * into the whole configuration.
 *
 * @module
 */
import * as v from "valibot";
import {
  DEFAULT_PASSWORD_COST_CEILINGS as CEILING,
  PASSWORD_COST_CEILING_BOUNDS as CEILING_BOUNDS,
} from "../passwords/cost.ts";
import { type Exactly, flag, type FlagInput, int } from "../settings/fields.ts";
import type { EnvSetting } from "../settings/env.ts";

/** `SvcConfig.password`: password hashing and the cost ceilings of stored hashes. */
export type PasswordHashingConfig = {
  argon2MemoryKiB: number;
  argon2Iterations: number;
  argon2Parallelism: number;
  hashWorkers?: number;
  /** Seconds a hashing worker may sit idle before it stops (0: never). */
  workerIdleSeconds: number;
  /** argon2id on a native implementation where one loads (else, and when false, WebAssembly). */
  nativeArgon2: boolean;
  /** Largest bcrypt cost of a stored hash. */
  maxBcryptCost: number;
  /** Largest PBKDF2 iteration count of a stored hash. */
  maxPbkdf2Iterations: number;
  /** Largest argon2id memory (KiB) of a stored hash. */
  maxArgon2MemoryKiB: number;
  /** Largest argon2id iteration count of a stored hash. */
  maxArgon2Iterations: number;
};

/** `SvcConfigInput.password`: password hashing and the cost ceilings of stored hashes, as a config file gives it. */
export type PasswordHashingConfigInput = {
  argon2MemoryKiB?: number;
  argon2Iterations?: number;
  argon2Parallelism?: number;
  hashWorkers?: number;
  workerIdleSeconds?: number;
  nativeArgon2?: FlagInput;
  maxBcryptCost?: number;
  maxPbkdf2Iterations?: number;
  maxArgon2MemoryKiB?: number;
  maxArgon2Iterations?: number;
};

/** The `password` section of the configuration. */
export const passwordSettingsSchema = v.optional(
  v.strictObject({
    argon2MemoryKiB: v.optional(int(8192, 4_194_304, "KiB"), 65536),
    argon2Iterations: v.optional(int(1, 20), 3),
    argon2Parallelism: v.optional(int(1, 16), 1),
    /** Password hashing workers: absent for one per core (at most 4), 0 to hash in the calling thread. */
    hashWorkers: v.optional(int(0, 256)),
    /** Seconds a hashing worker may sit idle before it stops (0: never). */
    workerIdleSeconds: v.optional(int(0, 86400, "seconds"), 60),
    /** argon2id on a native implementation where one loads; false: always the WebAssembly build. */
    nativeArgon2: v.optional(flag(), true),
    /** Cost ceilings of stored (imported) hashes: beyond them a hash is refused, never verified. */
    maxBcryptCost: v.optional(int(...CEILING_BOUNDS.bcryptCost), CEILING.bcryptCost),
    maxPbkdf2Iterations: v.optional(int(...CEILING_BOUNDS.pbkdf2Iterations), CEILING.pbkdf2Iterations),
    maxArgon2MemoryKiB: v.optional(
      int(...CEILING_BOUNDS.argon2MemoryKiB, "KiB"),
      CEILING.argon2MemoryKiB,
    ),
    maxArgon2Iterations: v.optional(int(...CEILING_BOUNDS.argon2Iterations), CEILING.argon2Iterations),
  }),
  {},
);

/** The `SVC_*` variables of `password`. */
export const PASSWORD_ENV_SETTINGS: readonly EnvSetting[] = [
  {
    name: "SVC_ARGON2_MEMORY_KIB",
    path: "password.argon2MemoryKiB",
    kind: "int",
    doc: "argon2id memory for new password hashes (64 MiB)",
  },
  {
    name: "SVC_ARGON2_ITERATIONS",
    path: "password.argon2Iterations",
    kind: "int",
    doc: "argon2id iterations for new password hashes",
  },
  {
    name: "SVC_ARGON2_PARALLELISM",
    path: "password.argon2Parallelism",
    kind: "int",
    doc: "argon2id lanes for new password hashes",
  },
  {
    name: "SVC_PASSWORD_HASH_WORKERS",
    path: "password.hashWorkers",
    kind: "int",
    doc: "workers that run password hashing off the event loop (0: in the calling thread)",
    defaultText: "one per CPU core, at most 4",
  },
  {
    name: "SVC_PASSWORD_WORKER_IDLE_SECONDS",
    path: "password.workerIdleSeconds",
    kind: "int",
    doc: "a hashing worker idle this long stops and gives its memory back (argon2id's, 64 MiB by " +
      "default); the next hash starts one again (0: workers never stop)",
  },
  {
    name: "SVC_ARGON2_NATIVE",
    path: "password.nativeArgon2",
    kind: "string",
    doc: "argon2id on a native implementation where one loads (the @node-rs/argon2 addon, else " +
      "node:crypto's argon2 on Node 24.7+ and Bun; same hashes, over twice as fast as WebAssembly); " +
      "false: always the WebAssembly build in the worker pool",
  },
  {
    name: "SVC_PASSWORD_MAX_BCRYPT_COST",
    path: "password.maxBcryptCost",
    kind: "int",
    doc: "largest bcrypt cost a stored (imported) hash may have; a costlier one is refused at import and " +
      "never verified at login",
  },
  {
    name: "SVC_PASSWORD_MAX_PBKDF2_ITERATIONS",
    path: "password.maxPbkdf2Iterations",
    kind: "int",
    doc: "largest PBKDF2 iteration count a stored (imported) pbkdf2-sha256 or ASP.NET Identity hash may have",
  },
  {
    name: "SVC_PASSWORD_MAX_ARGON2_MEMORY_KIB",
    path: "password.maxArgon2MemoryKiB",
    kind: "int",
    doc: "largest argon2id memory a stored hash may ask for (never below SVC_ARGON2_MEMORY_KIB)",
  },
  {
    name: "SVC_PASSWORD_MAX_ARGON2_ITERATIONS",
    path: "password.maxArgon2Iterations",
    kind: "int",
    doc: "largest argon2id iteration count a stored hash may ask for (never below SVC_ARGON2_ITERATIONS)",
  },
];

// The written-out types are exactly what the schema infers: `deno check` fails otherwise.
const _passwordOutput: Exactly<v.InferOutput<typeof passwordSettingsSchema>, PasswordHashingConfig> = true;
const _passwordInput: Exactly<
  v.InferInput<typeof passwordSettingsSchema>,
  PasswordHashingConfigInput | undefined
> = true;
