/**
 * TOTP (RFC 6238) for svc: the algorithm, base32 secrets, `otpauth://` URIs and the
 * enrollment service.
 *
 * @module
 */
export { decodeBase32, encodeBase32 } from "./base32.ts";
export {
  DEFAULT_TOTP_PARAMETERS,
  findTotpStep,
  hotp,
  matchingTotpSteps,
  normalizeTotpCode,
  type TotpAlgorithm,
  totpCode,
  type TotpParameters,
  totpStep,
} from "./totp.ts";
export { buildOtpauthUri, type OtpauthUri, type OtpauthUriInput, parseOtpauthUri } from "./uri.ts";
export {
  type SecretCipher,
  TOTP_SECRET_BYTES,
  type TotpConfirmResult,
  type TotpEnrollmentStart,
  TotpService,
  type TotpServiceDeps,
  type TotpSettings,
  type TotpStatus,
  type TotpVerifyResult,
} from "./service.ts";
