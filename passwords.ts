/**
 * `@svc/svc/passwords`: svc's password hash verifiers on their own (Web Crypto and WASM, any
 * runtime): argon2id (svc's own), and the verify-only legacy formats importers bring —
 * `pbkdf2-sha256` (PHC and passlib forms), `bcrypt`, and ASP.NET Core Identity V2/V3
 * (`framework-identity-v3`). `verifyPasswordHash` dispatches on the algorithm tag stored beside
 * each hash.
 *
 * @example
 * ```ts
 * import { DEFAULT_ARGON2ID_PARAMS, hashArgon2id, verifyPasswordHash } from "@svc/svc/passwords";
 *
 * const salt = crypto.getRandomValues(new Uint8Array(16));
 * const encoded = await hashArgon2id("correct horse", DEFAULT_ARGON2ID_PARAMS, salt);
 * await verifyPasswordHash("argon2id", encoded, "correct horse"); // true
 * ```
 *
 * @module
 */
export {
  CURRENT_PASSWORD_ALGORITHM,
  PASSWORD_ALGORITHMS,
  type PasswordAlgorithm,
  passwordAlgorithm,
  UnknownPasswordAlgorithmError,
  verifyPasswordHash,
} from "./core/passwords/registry.ts";
export {
  ARGON2ID_TAG,
  type Argon2idHash,
  formatArgon2id,
  hashArgon2id,
  parseArgon2id,
  verifyArgon2id,
} from "./core/passwords/argon2id.ts";
export { BCRYPT_TAG, isBcryptHash, verifyBcrypt } from "./core/passwords/bcrypt.ts";
export {
  parsePbkdf2Sha256,
  PBKDF2_SHA256_TAG,
  type Pbkdf2Sha256Hash,
  verifyPbkdf2Sha256,
} from "./core/passwords/pbkdf2-sha256.ts";
export {
  type AspNetIdentityHash,
  FRAMEWORK_IDENTITY_V3_TAG,
  parseAspNetIdentityHash,
  verifyAspNetIdentity,
} from "./core/passwords/aspnet-identity.ts";
export { type Argon2idParams, DEFAULT_ARGON2ID_PARAMS } from "./core/passwords/argon2-params.ts";
export type { PasswordInput } from "./core/passwords/password-bytes.ts";
export type { Pbkdf2Hash } from "./core/passwords/pbkdf2.ts";
export { SvcError } from "./core/errors.ts";
