/**
 * Passkeys (WebAuthn): ceremonies over the credential and ceremony stores, and the
 * first-factor eligibility and sign-count rules.
 *
 * @module
 */
export {
  type AssertionFacts,
  type AuthenticatorDataSummary,
  isFirstFactorEligible,
  PASSKEY_MFA_LEVEL,
  type PasskeyFactor,
  passkeyFactor,
  PasskeyLoginError,
  PasskeyNotEligibleError,
  PasskeyRegistrationError,
  readAuthenticatorData,
  type SignCountOutcome,
  signCountOutcome,
} from "./rules.ts";
export {
  type AuthenticationResponse,
  AuthenticationResponseSchema,
  CeremonyKinds,
  type CeremonyStart,
  PasskeyService,
  type PasskeyServiceOptions,
  type RegistrationResponse,
  RegistrationResponseSchema,
  type RelyingParty,
  SUPPORTED_ALGORITHMS,
  userHandle,
  type VerifiedAssertion,
} from "./service.ts";
