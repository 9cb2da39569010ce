/**
 * Recovery codes (spec 2.3, section 3): stored only as hashes, single use,
 * regenerable as a set.
 */
import { sha256Hex } from "../digest.ts";

/** A stored recovery code. */
export interface RecoveryCode {
  readonly id: string;
  readonly userId: string;
  /** Lowercase SHA-256 hex of the code, as computed by {@link hashRecoveryCode}. */
  readonly codeHash: string;
  readonly createdAt: Date;
}

/** A code of a new set: its id (from svc's RandomSource) and its hash. */
export interface NewRecoveryCode {
  /** The id. */
  readonly id: string;
  /** Lowercase SHA-256 hex of the code ({@link hashRecoveryCode}). */
  readonly codeHash: string;
}

/** Where recovery codes live. */
export interface RecoveryCodeStore {
  /**
   * Replaces the user's whole set in one transaction (old codes deleted, new ones inserted,
   * createdAt = now). Duplicate hashes in `codes` are stored once.
   */
  replace(userId: string, codes: readonly NewRecoveryCode[]): Promise<void>;
  /**
   * Consumes a presented code (plaintext; hashed here with {@link hashRecoveryCode}) with one
   * `DELETE … RETURNING`: true when a matching code was deleted by this call, false otherwise
   * (unknown, or already used: a second use, concurrent or not, returns false).
   */
  consume(userId: string, code: string): Promise<boolean>;
  /** How many unused codes the user has. */
  countRemaining(userId: string): Promise<number>;
}

/**
 * The hash stored for a recovery code: lowercase SHA-256 hex of its UTF-8 text. Recovery codes are
 * high-entropy random strings, so a fast hash suffices. Normalize (case, separators) before hashing.
 */
export function hashRecoveryCode(code: string): string {
  return sha256Hex(code);
}
