/**
 * Email OTP as an enrolled second factor: a user who enrolled it proves it at every
 * password login (TOTP, when also enrolled, takes precedence). Users who did not enroll
 * still get email OTP as the step-up fallback when the risk gate asks.
 *
 * @module
 */

/** Storage of email OTP enrollments, one row per user. */
export interface EmailOtpEnrollmentStore {
  /** Enrolls the user; enrolling again keeps the first enrollment time. Answers when it was enrolled. */
  enroll(userId: string): Promise<Date>;
  /** When the user enrolled, or null (also for an unknown or malformed id). */
  enrolledAt(userId: string): Promise<Date | null>;
  /** Removes the enrollment; false when there was none. */
  remove(userId: string): Promise<boolean>;
}
