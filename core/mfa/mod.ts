/**
 * Second factors besides TOTP (`core/totp/`): email one-time codes and recovery codes.
 *
 * @module
 */
export {
  DEFAULT_EMAIL_OTP_SETTINGS,
  EMAIL_OTP_DIGITS,
  type EmailOtpIssued,
  type EmailOtpIssueInput,
  EmailOtpService,
  type EmailOtpServiceDeps,
  type EmailOtpSettings,
  type EmailOtpVerifyResult,
  normalizeOtpCode,
  randomOtpCode,
} from "./email-otp.ts";
export {
  generateRecoveryCode,
  normalizeRecoveryCode,
  RECOVERY_CODE_COUNT,
  RECOVERY_CODE_LENGTH,
  RecoveryCodeService,
  type RecoveryCodeServiceDeps,
} from "./recovery-codes.ts";
