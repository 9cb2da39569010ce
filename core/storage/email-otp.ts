/**
 * Email OTP challenges (spec 2.9, section 3): a caller-chosen challenge id, the
 * SHA-256 hex of the code, an expiry and an attempt budget.
 */
import { sha256Hex } from "../digest.ts";

/** A stored challenge. */
export interface EmailOtpChallenge {
  /** Caller-chosen primary key; storing the same id again replaces the challenge. */
  readonly challengeId: string;
  /** Lowercase SHA-256 hex of the code, as computed by {@link hashOtpCode}. */
  readonly codeHash: string;
  /** The challenge is dead from this instant on (`expiresAt <= now` is expired). */
  readonly expiresAt: Date;
  /** Guesses still allowed; each wrong guess takes one, a correct one needs at least one left. */
  readonly remainingAttempts: number;
}

/**
 * Result of a verification.
 * - `Success`: the code matched while unexpired with attempts left; the challenge is deleted.
 * - `WrongCode`: the code did not match and an attempt was left; it was taken (atomically), and
 *   `remainingAttempts` is what is left now (0 after the last one: the challenge stays, exhausted).
 * - `TooManyAttempts`: the challenge was unexpired but exhausted (0 attempts left); this call
 *   deleted it. Exactly one caller gets this result per exhausted challenge.
 * - `ExpiredOrMissing`: no such challenge (never stored, already deleted by a success or an
 *   exhaustion, or re-stored under a snapshot this call could not see), or it had expired (this
 *   call deleted it).
 *
 * Hence, with a budget of N and only wrong guesses, however concurrent: exactly N `WrongCode`,
 * then exactly one `TooManyAttempts`, then `ExpiredOrMissing` for every later guess. A correct
 * guess arriving after the N-th wrong one never succeeds.
 */
export type OtpVerifyResult =
  | { outcome: "Success" }
  | { outcome: "WrongCode"; remainingAttempts: number }
  | { outcome: "TooManyAttempts" }
  | { outcome: "ExpiredOrMissing" };

/** Where email OTP challenges live. */
export interface EmailOtpStore {
  /** Stores a challenge; an existing challenge with the same id is replaced (code, expiry, budget). */
  store(challenge: EmailOtpChallenge): Promise<void>;
  /**
   * Checks a presented code (plaintext; hashed here with {@link hashOtpCode}) in one atomic
   * statement. The hash comparison is SQL equality of two SHA-256 hex strings: both sides are
   * hashes, so a timing difference reveals at most a prefix of the hash of the guess itself,
   * never anything about the stored code.
   */
  verify(challengeId: string, code: string): Promise<OtpVerifyResult>;
  /** Reads a challenge as stored (expired ones included), or null. For tests and admin views. */
  get(challengeId: string): Promise<EmailOtpChallenge | null>;
  /** Deletes challenges expired at `now` (default: the store's clock). Returns how many. */
  prune(now?: Date): Promise<number>;
}

/** The hash stored for an OTP code: lowercase SHA-256 hex of its UTF-8 text. */
export function hashOtpCode(code: string): string {
  return sha256Hex(code);
}
