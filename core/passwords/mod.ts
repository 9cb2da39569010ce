/**
 * Password hashing (spec 2.3, 5.1, 5.2): the algorithm-tag registry (`argon2id`, minted;
 * `pbkdf2-sha256`, `bcrypt` and `framework-identity-v3`, verify-only), rehash decisions,
 * the worker pool that keeps argon2id off the event loop, and the dummy verification for
 * unknown users. Web APIs only; the Node worker adapter lives in `cli/`.
 *
 * @example
 * ```ts
 * const passwords = new PasswordService({ hasher: createPasswordHasher(), params: DEFAULT_ARGON2ID_PARAMS });
 * const stored = await passwords.hash("correct horse");           // { algorithm: "argon2id", hash: "$argon2id$v=19$…" }
 * const { valid, needsRehash } = await passwords.verify(stored, "correct horse");
 * await passwords.verifyAgainstDummy("whatever");                  // unknown user: same work, always false
 * ```
 *
 * @module
 */
export {
  type Argon2idParams,
  argon2idParamsFromConfig,
  DEFAULT_ARGON2ID_PARAMS,
  isWeakerArgon2id,
  type PasswordConfig,
} from "./argon2-params.ts";
export {
  ARGON2ID_TAG,
  type Argon2idHash,
  formatArgon2id,
  hashArgon2id,
  parseArgon2id,
  verifyArgon2id,
} from "./argon2id.ts";
export {
  parsePbkdf2Sha256,
  PBKDF2_SHA256_TAG,
  type Pbkdf2Sha256Hash,
  verifyPbkdf2Sha256,
} from "./pbkdf2-sha256.ts";
export { BCRYPT_TAG, isBcryptHash, verifyBcrypt } from "./bcrypt.ts";
export {
  type AspNetIdentityHash,
  FRAMEWORK_IDENTITY_V3_TAG,
  parseAspNetIdentityHash,
  verifyAspNetIdentity,
} from "./aspnet-identity.ts";
export { type PasswordInput } from "./password-bytes.ts";
export {
  CURRENT_PASSWORD_ALGORITHM,
  PASSWORD_ALGORITHMS,
  type PasswordAlgorithm,
  passwordAlgorithm,
  UnknownPasswordAlgorithmError,
  verifyPasswordHash,
} from "./registry.ts";
export { needsRehash } from "./rehash.ts";
export {
  ceilingsAdmitting,
  costCeilingExceeded,
  DEFAULT_PASSWORD_COST_CEILINGS,
  PASSWORD_COST_CEILING_BOUNDS,
  type PasswordCostCeilingConfig,
  type PasswordCostCeilings,
  passwordCostCeilingsFromConfig,
  type PasswordHashCost,
  passwordHashCost,
} from "./cost.ts";
export { InThreadPasswordHasher, type PasswordHasher } from "./hasher.ts";
export {
  type PasswordJob,
  type PasswordJobMessage,
  type PasswordJobReply,
  replyToPasswordJob,
  runPasswordJob,
} from "./jobs.ts";
export {
  defaultWorkerCount,
  type PasswordWorker,
  type PasswordWorkerFactory,
  webWorkerFactory,
  type WorkerPoolOptions,
  WorkerPoolPasswordHasher,
  type WorkerPoolStats,
} from "./pool.ts";
export { createPasswordHasher, type PasswordHasherOptions } from "./create.ts";
export {
  type DummyVerificationInfo,
  PasswordService,
  type PasswordServiceOptions,
  type PasswordVerification,
  type TaggedPasswordHash,
} from "./service.ts";
