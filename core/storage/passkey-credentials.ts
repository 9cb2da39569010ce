/**
 * Passkey (WebAuthn) credentials (spec 2.3, 5.3). The stored sign count only moves
 * forward.
 *
 * @module
 */

/** A stored passkey credential. */
export interface PasskeyCredentialRecord {
  /** The id. */
  readonly id: string;
  /** The user it concerns. */
  readonly userId: string;
  /** The authenticator's credential id (raw bytes). */
  readonly credentialId: Uint8Array;
  /** The COSE public key. */
  readonly publicKey: Uint8Array;
  /** The authenticator's signature counter; only moves forward. */
  readonly signCount: number;
  /** Whether the credential supports user verification (first-factor eligibility). */
  readonly userVerificationCapable: boolean;
  /** WebAuthn transport hints (for example `usb`, `internal`). */
  readonly transports: readonly string[];
  /** The name. */
  readonly name: string | null;
  /** When it was last used, or null. */
  readonly lastUsedAt: Date | null;
  /** When it was created. */
  readonly createdAt: Date;
}

/** A credential to store after a registration ceremony. */
export interface NewPasskeyCredential {
  /** The user it concerns. */
  readonly userId: string;
  /** The authenticator's credential id (raw bytes). */
  readonly credentialId: Uint8Array;
  /** The COSE public key. */
  readonly publicKey: Uint8Array;
  /** Defaults to 0. */
  readonly signCount?: number;
  /** Whether the credential supports user verification (first-factor eligibility). */
  readonly userVerificationCapable: boolean;
  /** WebAuthn transport hints; default none. */
  readonly transports?: readonly string[];
  /** The name. */
  readonly name?: string | null;
}

/** Passkey-credential storage. */
export interface PasskeyCredentialStore {
  /** Stores a credential; `ConflictError` when the credential id is already registered. */
  create(input: NewPasskeyCredential): Promise<PasskeyCredentialRecord>;
  /** The user's credentials, oldest first. */
  listByUser(userId: string): Promise<PasskeyCredentialRecord[]>;
  /** One credential by svc id, or null. */
  get(id: string): Promise<PasskeyCredentialRecord | null>;
  /** One credential by authenticator credential id, or null. */
  getByCredentialId(credentialId: Uint8Array): Promise<PasskeyCredentialRecord | null>;
  /**
   * Records a successful assertion: sets the sign count to `newCount` only if it moves
   * forward (stored < new), or both are 0 (authenticators without counters), and the last
   * use time (default: now). Single conditional UPDATE; returns whether it applied, false
   * meaning a regression (or an unknown id).
   */
  updateCounter(id: string, newCount: number, lastUsedAt?: Date): Promise<boolean>;
  /** Renames a credential of the user; returns whether it applied. */
  rename(userId: string, id: string, name: string | null): Promise<boolean>;
  /** Deletes one credential of the user; false when it is not theirs or does not exist. */
  delete(userId: string, id: string): Promise<boolean>;
  /** Deletes every credential of the user (erasure); returns how many. */
  deleteAllForUser(userId: string): Promise<number>;
}
