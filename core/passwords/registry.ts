/**
 * The registry of password algorithm tags (spec 2.3). Every credential row names its
 * tag; verification dispatches on it. `argon2id` is the one algorithm svc mints; the
 * others are verify-only, for imported hashes that are rehashed on first login.
 *
 * @module
 */
import { SvcError } from "../errors.ts";
import { ARGON2ID_TAG, verifyArgon2id } from "./argon2id.ts";
import { FRAMEWORK_IDENTITY_V3_TAG, verifyAspNetIdentity } from "./aspnet-identity.ts";
import { BCRYPT_TAG, verifyBcrypt } from "./bcrypt.ts";
import type { PasswordInput } from "./password-bytes.ts";
import { PBKDF2_SHA256_TAG, verifyPbkdf2Sha256 } from "./pbkdf2-sha256.ts";

/** One registered algorithm. */
export interface PasswordAlgorithm {
  /** The tag stored on credential rows. */
  readonly tag: string;
  /** Whether svc mints new hashes with it (only the current default does). */
  readonly mints: boolean;
  /** Whether the password matches the stored hash; false (never a throw) when the hash is malformed. */
  verify(password: PasswordInput, hash: string): Promise<boolean>;
}

/** The stored tag names no registered algorithm. Code `unknown_password_algorithm`. */
export class UnknownPasswordAlgorithmError extends SvcError {
  /** The unknown tag (reported in `details.algorithm`). */
  constructor(tag: string) {
    super("unknown_password_algorithm", "The stored password uses an algorithm svc does not know.", 500, {
      algorithm: tag,
    });
  }
}

/** The tag new password hashes are minted with. */
export const CURRENT_PASSWORD_ALGORITHM: typeof ARGON2ID_TAG = ARGON2ID_TAG;

/** Every algorithm svc knows, by tag. */
export const PASSWORD_ALGORITHMS: ReadonlyMap<string, PasswordAlgorithm> = new Map(
  ([
    { tag: ARGON2ID_TAG, mints: true, verify: verifyArgon2id },
    { tag: PBKDF2_SHA256_TAG, mints: false, verify: verifyPbkdf2Sha256 },
    { tag: BCRYPT_TAG, mints: false, verify: verifyBcrypt },
    { tag: FRAMEWORK_IDENTITY_V3_TAG, mints: false, verify: verifyAspNetIdentity },
  ] satisfies PasswordAlgorithm[]).map((a) => [a.tag, Object.freeze(a)]),
);

/** The algorithm of a tag; throws `UnknownPasswordAlgorithmError` for a tag svc does not know. */
export function passwordAlgorithm(tag: string): PasswordAlgorithm {
  const algorithm = PASSWORD_ALGORITHMS.get(tag);
  if (!algorithm) throw new UnknownPasswordAlgorithmError(tag);
  return algorithm;
}

/**
 * Verifies a password against a stored hash under its tag, in the calling thread.
 * False for a wrong password or a malformed hash; throws for an unknown tag.
 */
export function verifyPasswordHash(tag: string, hash: string, password: PasswordInput): Promise<boolean> {
  return passwordAlgorithm(tag).verify(password, hash);
}
