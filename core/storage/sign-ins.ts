/**
 * The reads of a password sign-in in one round trip (issue 29): the realm, the account, its
 * password credential and what the risk gate and the second-factor rule ask about it (the
 * device, the login history, the enrolled factors), read together before the abuse gate. They
 * are reads only: no password work and no count happens before the abuse gate has reserved the
 * attempt's slot, and an unknown account is read with the same statement as a known one.
 *
 * @module
 */
import type { PasswordCredentialRecord } from "./password-credentials.ts";
import type { Realm } from "./realms.ts";
import type { User } from "./users.ts";

/** What a sign-in reads. */
export interface SignInLookup {
  /** A realm id or name; the default realm when null or empty (an id wins over a name). */
  readonly realm: string | null;
  /** The login name as submitted (normalised by the store as `users.findByEmail` does). */
  readonly email: string;
  /** The SHA-256 hex of the request's device id (`KnownDevices.fingerprintHash`), or null. */
  readonly deviceHash: string | null;
}

/** The account's login history row (`login_history`), as the risk gate reads it. */
export interface SignInHistory {
  /** The latest sign-in (ms since the epoch). */
  readonly lastAt: number;
  /** Its client address, when known. */
  readonly lastIp: string | null;
  /** The times of the latest sign-ins (ms since the epoch), newest first. */
  readonly recentMs: readonly number[];
}

/** What {@link SignInReadStore.read} found. */
export interface SignInRecord {
  /** The realm, or null when none matches. */
  readonly realm: Realm | null;
  /** The account, or null (no realm, or no such login name in it). */
  readonly user: User | null;
  /** The account's password credential (the latest), or null. */
  readonly credential: PasswordCredentialRecord | null;
  /** The account's credential stamp (the break-glass counters' epoch), or null without an account. */
  readonly credentialStamp: string | null;
  /** Whether `deviceHash` is a known device of the account (false without one or without an account). */
  readonly deviceKnown: boolean;
  /** The account's login history, or null when it never signed in. */
  readonly history: SignInHistory | null;
  /** Whether the account has a confirmed TOTP enrollment. */
  readonly totpConfirmed: boolean;
  /** Whether the account has an email OTP enrollment. */
  readonly emailOtpEnrolled: boolean;
}

/** The sign-in reads. */
export interface SignInReadStore {
  /** Everything a password sign-in reads before the password check, in one statement. */
  read(lookup: SignInLookup): Promise<SignInRecord>;
}
