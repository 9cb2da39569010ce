/**
 * The passkey rules of spec 5.1 and 5.3, as pure functions over what an authenticator
 * reported: its flags and sign count (from the authenticator data), the stored credential's
 * user-verification capability and counter.
 *
 * - A passkey is a first factor only when the credential is user-verification capable AND
 *   user verification occurred in this assertion; otherwise it is a second factor only.
 * - The sign count only moves forward. A counter that stays 0 is the normal case of
 *   authenticators without counters (synced passkeys) and not a regression; any other
 *   presented count at or below the stored one is.
 *
 * @module
 */
import { SvcError } from "../errors.ts";

/** The flags and counter of WebAuthn authenticator data (the fixed 37-byte prefix). */
export interface AuthenticatorDataSummary {
  /** SHA-256 of the RP id the authenticator signed for. */
  readonly rpIdHash: Uint8Array;
  /** User present (UP, bit 0). */
  readonly userPresent: boolean;
  /** User verified (UV, bit 2). */
  readonly userVerified: boolean;
  /** Backup eligible (BE, bit 3). */
  readonly backupEligible: boolean;
  /** Backed up (BS, bit 4). */
  readonly backedUp: boolean;
  /** Attested credential data included (AT, bit 6): registrations. */
  readonly attestedCredentialData: boolean;
  /** The signature counter (big-endian uint32). */
  readonly signCount: number;
}

/** Reads the flags and sign count of authenticator data; `null` when it is shorter than 37 bytes. */
export function readAuthenticatorData(data: Uint8Array): AuthenticatorDataSummary | null {
  if (data.length < 37) return null;
  const flags = data[32];
  return {
    rpIdHash: data.slice(0, 32),
    userPresent: (flags & 0x01) !== 0,
    userVerified: (flags & 0x04) !== 0,
    backupEligible: (flags & 0x08) !== 0,
    backedUp: (flags & 0x10) !== 0,
    attestedCredentialData: (flags & 0x40) !== 0,
    signCount: new DataView(data.buffer, data.byteOffset + 33, 4).getUint32(0, false),
  };
}

/** What a credential proved in one assertion. */
export interface AssertionFacts {
  /** Whether the stored credential supports user verification (recorded at registration). */
  readonly userVerificationCapable: boolean;
  /** Whether the authenticator verified the user (UV flag) in this assertion. */
  readonly userVerified: boolean;
}

/** The factor a passkey assertion can stand for. */
export type PasskeyFactor = "first" | "second";

/**
 * Whether an assertion may sign a user in on its own (spec 5.1): only a UV-capable credential
 * whose assertion carried UV.
 */
export function isFirstFactorEligible(facts: AssertionFacts): boolean {
  return facts.userVerificationCapable && facts.userVerified;
}

/** The strongest factor an assertion can stand for. */
export function passkeyFactor(facts: AssertionFacts): PasskeyFactor {
  return isFirstFactorEligible(facts) ? "first" : "second";
}

/** How a presented sign count relates to the stored one. */
export type SignCountOutcome =
  /** The counter moved forward: store the new value. */
  | "advanced"
  /** Both are 0: an authenticator without a counter; nothing to store but the last use. */
  | "no_counter"
  /** At or below the stored value (and not both 0): a possible cloned authenticator. */
  | "regression";

/** Classifies a presented sign count against the stored one (the rule of the counter store). */
export function signCountOutcome(stored: number, presented: number): SignCountOutcome {
  if (stored === 0 && presented === 0) return "no_counter";
  return presented > stored ? "advanced" : "regression";
}

/** The MFA level of a session a passkey signed in (spec 2.1): first or second factor alike. */
export const PASSKEY_MFA_LEVEL = "PhishingResistant";

/**
 * A passkey that is not first-factor eligible (no user verification in this assertion, or a
 * credential without it) was used as a first factor. Code `passkey_not_eligible`, status 401:
 * sign in with another factor first, then use the passkey as the second.
 */
export class PasskeyNotEligibleError extends SvcError {
  constructor() {
    super(
      "passkey_not_eligible",
      "This passkey did not verify the user, so it can only be a second factor; sign in another way first.",
      401,
    );
  }
}

/**
 * A passkey login failed: unknown or expired ceremony, unknown credential, bad signature,
 * wrong origin, a sign-count regression… Every reason is the same 401 on the wire (code
 * `invalid_credentials`, as a wrong password); the reason stays on the error for logs and tests.
 */
export class PasskeyLoginError extends SvcError {
  /** Why; never sent to clients. */
  readonly reason: string;
  /** `reason` stays on the error for logs and tests; the message is always the generic one. */
  constructor(reason: string) {
    super("invalid_credentials", "The credentials are invalid.", 401);
    this.reason = reason;
  }
}

/**
 * A registration ceremony failed (unknown, expired or already used ceremony, or a response
 * that does not verify). Code `passkey_registration_failed`, status 400: start again.
 */
export class PasskeyRegistrationError extends SvcError {
  /** Why; never sent to clients. */
  readonly reason: string;
  /** `reason` stays on the error for logs and tests; the message is always the generic one. */
  constructor(reason: string) {
    super(
      "passkey_registration_failed",
      "The passkey could not be registered; start the registration again.",
      400,
    );
    this.reason = reason;
  }
}
