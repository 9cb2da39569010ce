/**
 * Resetting a user's second factors on an administrator's request (a lost phone, a lost
 * security key): TOTP (a pending enrollment too), the email-OTP enrollment, passkeys and
 * recovery codes are removed inside the caller's transaction. The admin route records it as one
 * audited mutation with the reason, emits `user.factors_reset` (also written to the user's
 * security ledger) and mails the user after commit. The password is untouched: a password reset
 * is the account flows' job.
 *
 * @module
 */
import { MAIL_CATALOGUE } from "../mail/catalogue.ts";
import type { Storage } from "../storage/storage.ts";

/** The factors an administrator can reset, as the API names them. */
export const RESETTABLE_FACTORS = ["totp", "email_otp", "passkeys", "recovery_codes"] as const;

/** A factor an administrator can reset. */
export type ResettableFactor = typeof RESETTABLE_FACTORS[number];

/** The event recorded when an administrator reset a user's factors. */
export const USER_FACTORS_RESET_EVENT = "user.factors_reset";

/** How each factor is named to the user (in the notification mail). */
export const FACTOR_LABELS: Readonly<Record<ResettableFactor, string>> = MAIL_CATALOGUE.en.factorLabels;

/** What a reset removed. */
export interface RemovedFactors {
  /** A TOTP enrollment (confirmed or pending) was removed. */
  readonly totp: boolean;
  /** The email-OTP enrollment was removed. */
  readonly emailOtp: boolean;
  /** Passkeys deleted. */
  readonly passkeys: number;
  /** Unused recovery codes deleted. */
  readonly recoveryCodes: number;
}

/**
 * Removes `factors` of `userId` through `tx` (a storage bound to the caller's transaction).
 * Factors not listed are kept; a factor the user does not have counts as nothing removed.
 */
export async function removeFactors(
  tx: Storage,
  userId: string,
  factors: readonly ResettableFactor[],
): Promise<RemovedFactors> {
  const wanted = new Set(factors);
  let recoveryCodes = 0;
  if (wanted.has("recovery_codes")) {
    recoveryCodes = await tx.recoveryCodes.countRemaining(userId);
    await tx.recoveryCodes.replace(userId, []);
  }
  return {
    totp: wanted.has("totp") ? await tx.totpEnrollments.delete(userId) : false,
    emailOtp: wanted.has("email_otp") ? await tx.emailOtpEnrollments.remove(userId) : false,
    passkeys: wanted.has("passkeys") ? await tx.passkeyCredentials.deleteAllForUser(userId) : 0,
    recoveryCodes,
  };
}
