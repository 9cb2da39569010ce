/**
 * `PasswordService`: what the login pipeline and the account flows call. It mints
 * argon2id hashes with the configured parameters, verifies stored hashes under their tag,
 * decides rehashes, and runs the dummy verification for unknown users (spec 5.2 step 2):
 * the same argon2id work as a real verification, against a hash made once with the
 * current parameters, so that timing does not tell an unknown user from a wrong password.
 * A stored hash that asks for more work than the cost ceilings allow (`cost.ts`) is never
 * handed to the hasher: it gets the dummy verification instead and answers "no match".
 *
 * @module
 */
import { ValidationError } from "../errors.ts";
import { inSpan } from "../tracing.ts";
import { cryptoRandom, type RandomSource, randomToken } from "../random.ts";
import { ARGON2ID_SALT_BYTES, type Argon2idParams, DEFAULT_ARGON2ID_PARAMS } from "./argon2-params.ts";
import { ARGON2ID_TAG } from "./argon2id.ts";
import type { PasswordHasher } from "./hasher.ts";
import {
  ceilingsAdmitting,
  costCeilingExceeded,
  DEFAULT_PASSWORD_COST_CEILINGS,
  type PasswordCostCeilings,
} from "./cost.ts";
import { needsRehash } from "./rehash.ts";

/** A hash with its algorithm tag (the shape stored on a password credential row). */
export interface TaggedPasswordHash {
  /** The algorithm tag stored beside the hash. */
  readonly algorithm: string;
  /** The hash, in the algorithm's own format. */
  readonly hash: string;
}

/** The outcome of verifying a stored hash. */
export interface PasswordVerification {
  /** The password matches. */
  readonly valid: boolean;
  /** The password matches and the hash should be replaced by `hash(password)` (spec 5.1). */
  readonly needsRehash: boolean;
}

/** What a dummy verification reports to its hook. */
export interface DummyVerificationInfo {
  /** The argon2id parameters the dummy hash was made with (the configured ones). */
  readonly params: Argon2idParams;
}

/** Options of `PasswordService`. */
export interface PasswordServiceOptions {
  /** Where the work runs (a worker pool or in-thread). */
  readonly hasher: PasswordHasher;
  /** argon2id parameters of new hashes; the spec default when absent. */
  readonly params?: Argon2idParams;
  /**
   * The most work a stored hash may ask for (`password.max*`); the defaults when absent.
   * The argon2id ceilings are raised to `params` so that svc's own hashes always verify.
   */
  readonly ceilings?: PasswordCostCeilings;
  /** Salts and the dummy password. */
  readonly random?: RandomSource;
  /** Called after each dummy verification, with its parameters (tests and metrics). */
  readonly onDummyVerification?: (info: DummyVerificationInfo) => void;
}

/** Password hashing for svc: mint, verify, rehash decisions, dummy verification. */
export class PasswordService {
  /** argon2id parameters of new hashes. */
  readonly params: Argon2idParams;
  /** The cost ceilings stored hashes are held to (argon2id's at least `params`). */
  readonly ceilings: PasswordCostCeilings;
  readonly #hasher: PasswordHasher;
  readonly #random: RandomSource;
  readonly #onDummy?: (info: DummyVerificationInfo) => void;
  #dummy: Promise<string> | null = null;
  #dummyCount = 0;

  /** The service over a hasher (where the work runs) and the argon2id parameters of new hashes. */
  constructor(options: PasswordServiceOptions) {
    this.#hasher = options.hasher;
    this.params = Object.freeze({ ...(options.params ?? DEFAULT_ARGON2ID_PARAMS) });
    this.ceilings = ceilingsAdmitting(options.ceilings ?? DEFAULT_PASSWORD_COST_CEILINGS, this.params);
    this.#random = options.random ?? cryptoRandom;
    this.#onDummy = options.onDummyVerification;
  }

  /** The hasher the work runs on. */
  get hasher(): PasswordHasher {
    return this.#hasher;
  }

  /**
   * A new argon2id hash of the password with the configured parameters and a fresh salt.
   * Throws `ValidationError` for the empty password.
   */
  async hash(password: string): Promise<TaggedPasswordHash & { algorithm: "argon2id" }> {
    if (password.length === 0) throw new ValidationError("The password is empty.", { field: "password" });
    const salt = this.#random.bytes(ARGON2ID_SALT_BYTES);
    const hash = await inSpan(
      "svc.password.hash",
      { attributes: { "svc.password.algorithm": ARGON2ID_TAG } },
      () => this.#hasher.hashArgon2id(password, this.params, salt),
    );
    return { algorithm: ARGON2ID_TAG, hash };
  }

  /**
   * Verifies a password against a stored hash under its tag. Rejects with
   * `UnknownPasswordAlgorithmError` for a tag svc does not know. A hash beyond the cost
   * ceilings is not verified: the dummy verification runs in its place (the same work as
   * for an unknown user) and the answer is "no match".
   */
  async verify(stored: TaggedPasswordHash, password: string): Promise<PasswordVerification> {
    if (this.exceedsCeiling(stored) !== null) {
      await this.verifyAgainstDummy(password);
      return { valid: false, needsRehash: false };
    }
    const valid = await this.#verifySpan(stored.algorithm, stored.hash, password);
    return { valid, needsRehash: valid && this.needsRehash(stored.algorithm, stored.hash) };
  }

  /**
   * Why a stored hash asks for more work than the ceilings allow (a sentence naming the
   * setting), or null when it does not. Reads the hash's header only.
   */
  exceedsCeiling(stored: TaggedPasswordHash): string | null {
    return costCeilingExceeded(stored.algorithm, stored.hash, this.ceilings);
  }

  /** Whether a stored hash is under an older tag or weaker argon2id parameters than configured. */
  needsRehash(tag: string, hash: string): boolean {
    return needsRehash(tag, hash, this.params);
  }

  /**
   * The verification an unknown user gets: the same argon2id work as a real one, against a
   * dummy hash made with the configured parameters. Always false.
   */
  async verifyAgainstDummy(password: string): Promise<false> {
    const dummy = await this.#dummyHash();
    await this.#verifySpan(ARGON2ID_TAG, dummy, password);
    this.#dummyCount++;
    this.#onDummy?.({ params: this.params });
    return false;
  }

  /** How many dummy verifications have run. */
  get dummyVerifications(): number {
    return this.#dummyCount;
  }

  /** Makes the dummy hash now (at boot) rather than on the first unknown user. */
  async prepare(): Promise<void> {
    await this.#dummyHash();
  }

  /** Closes the hasher. */
  close(): Promise<void> {
    return this.#hasher.close();
  }

  /** A verification in a span that looks the same for a real hash and for the dummy one. */
  #verifySpan(tag: string, hash: string, password: string): Promise<boolean> {
    return inSpan(
      "svc.password.verify",
      { attributes: { "svc.password.algorithm": tag } },
      () => this.#hasher.verify(tag, hash, password),
    );
  }

  #dummyHash(): Promise<string> {
    if (!this.#dummy) {
      const password = randomToken(this.#random, 32);
      const salt = this.#random.bytes(ARGON2ID_SALT_BYTES);
      this.#dummy = this.#hasher.hashArgon2id(password, this.params, salt);
      this.#dummy.catch(() => (this.#dummy = null));
    }
    return this.#dummy;
  }
}
