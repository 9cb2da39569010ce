/**
 * The storage contract (svc's storage port) as one object: every store of svc over one database, plus
 * `transaction`, which gives the same object bound to one database transaction so that
 * a change across aggregates commits or rolls back as a whole.
 *
 * @module
 */
import type { Clock } from "../clock.ts";
import type { RandomSource } from "../random.ts";
import type { AdminAuditStore } from "./admin-audit.ts";
import type { ApiKeyStore } from "./api-keys.ts";
import type { AppCatalogStore } from "./app-catalog.ts";
import type { AuthorizationCodeStore } from "./authorization-codes.ts";
import type { BreakGlassStore } from "./break-glass.ts";
import type { ClientStore } from "./clients.ts";
import type { ConsumedTokenStore } from "./consumed-tokens.ts";
import type { EmailOtpStore } from "./email-otp.ts";
import type { EmailOtpEnrollmentStore } from "./email-otp-enrollments.ts";
import type { FederatedIdentityStore } from "./federated-identities.ts";
import type { GroupStore } from "./groups.ts";
import type { ImpersonationStore } from "./impersonations.ts";
import type { KnownDeviceStore } from "./known-devices.ts";
import type { MailOutboxStore } from "./mail-outbox.ts";
import type { OrganizationStore } from "./organizations.ts";
import type { PasskeyCeremonyStore } from "./passkey-ceremonies.ts";
import type { PasskeyCredentialStore } from "./passkey-credentials.ts";
import type { PasswordCredentialStore } from "./password-credentials.ts";
import type { PermissionCatalogStore } from "./permission-catalog.ts";
import type { PolicyStore } from "./policies.ts";
import type { RealmStore } from "./realms.ts";
import type { RecoveryCodeStore } from "./recovery-codes.ts";
import type { RefreshTokenStore } from "./refresh-tokens.ts";
import type { RoleStore } from "./roles.ts";
import type { SamlAssertionStore } from "./saml-assertions.ts";
import type { SecurityEventStore } from "./security-events.ts";
import type { ServiceAccountStore } from "./service-accounts.ts";
import type { SessionStore } from "./sessions.ts";
import type { SigningKeyStore } from "./signing-keys.ts";
import type { SubjectGrantSource } from "./subject-grants.ts";
import type { SubjectKeyStore } from "./subject-keys.ts";
import type { TeamStore } from "./teams.ts";
import type { TokenGrantStore } from "./token-grants.ts";
import type { TotpEnrollmentStore } from "./totp-enrollments.ts";
import type { UserStore } from "./users.ts";
import type { WebhookStore } from "./webhooks.ts";
import type { ServerSecretStore } from "./server-secrets.ts";
import type { DpopStore } from "./dpop.ts";
import type { PersonalDataStore } from "./personal-data.ts";
import type { ShadowComparisonStore } from "./shadow-comparisons.ts";
import type { RawSqlStore } from "./raw-sql.ts";
import type { LoginHistory } from "../risk/providers.ts";
import type { SignInReadStore } from "./sign-ins.ts";

/** Every store of svc. */
export interface Stores {
  // Directory (spec 2.10)
  /** Realms: the tenants, each with its own users, keys and settings. */
  readonly realms: RealmStore;
  /** Organizations of a realm, their members and verified domains. */
  readonly organizations: OrganizationStore;
  /** Users of a realm: profile, status, credential stamp. */
  readonly users: UserStore;
  /** Teams inside organizations and their members. */
  readonly teams: TeamStore;
  /** Groups (realm or organization level) and their members. */
  readonly groups: GroupStore;
  /** Roles, their grants and their assignments. */
  readonly roles: RoleStore;
  /** Policies: grants attached directly to a user or a group, realm-wide or in one organization. */
  readonly policies: PolicyStore;
  /** The catalog of declared permissions (tombstoned when no longer declared). */
  readonly permissionCatalog: PermissionCatalogStore;
  /** The app catalog: the app keys tokens can be scoped to (`aud`). */
  readonly appCatalog: AppCatalogStore;
  /** The rows a subject snapshot is built from. */
  readonly subjectGrants: SubjectGrantSource;
  // Credentials (spec 2.3)
  /** Password hashes (argon2id, and imported legacy formats). */
  readonly passwordCredentials: PasswordCredentialStore;
  /** MFA recovery codes (hashed). */
  readonly recoveryCodes: RecoveryCodeStore;
  /** TOTP enrollments (secrets encrypted). */
  readonly totpEnrollments: TotpEnrollmentStore;
  /** Registered passkeys. */
  readonly passkeyCredentials: PasskeyCredentialStore;
  /** Passkey ceremonies in progress (single use, five minutes). */
  readonly passkeyCeremonies: PasskeyCeremonyStore;
  /** Devices a user has signed in from (new-device detection). */
  readonly knownDevices: KnownDeviceStore;
  /** Links from users to identities at external identity providers. */
  readonly federatedIdentities: FederatedIdentityStore;
  // Tokens, sessions and keys (spec 2.1, 2.2, 2.9)
  /** Sessions: sign-ins with their idle and absolute expiry. */
  readonly sessions: SessionStore;
  /** Refresh tokens (SHA-256 only), rotated in families. */
  readonly refreshTokens: RefreshTokenStore;
  /** Per-realm signing keys and their rotation. */
  readonly signingKeys: SigningKeyStore;
  /** Per-subject encryption keys (deleting one shreds the subject's data). */
  readonly subjectKeys: SubjectKeyStore;
  /** Secrets of svc itself, created once and read by every instance and restart. */
  readonly serverSecrets: ServerSecretStore;
  /** Service accounts and their secrets (hashed, with rotation overlap). */
  readonly serviceAccounts: ServiceAccountStore;
  /** API keys (SHA-256 only). */
  readonly apiKeys: ApiKeyStore;
  /** OAuth/OIDC clients registered with svc. */
  readonly clients: ClientStore;
  // Single-use and stateful records (spec 2.9)
  /** Emailed one-time code challenges. */
  readonly emailOtp: EmailOtpStore;
  /** Email OTP second-factor enrollments. */
  readonly emailOtpEnrollments: EmailOtpEnrollmentStore;
  /** Ids of used single-use tokens (each consumed once). */
  readonly consumedTokens: ConsumedTokenStore;
  /** DPoP proofs already accepted (each jti once) and sessions' refresh-token key bindings. */
  readonly dpop: DpopStore;
  /** SAML assertion ids already accepted, per connection (replay guard). */
  readonly samlAssertions: SamlAssertionStore;
  /** OAuth authorization codes (single use). */
  readonly authorizationCodes: AuthorizationCodeStore;
  /** Token grants: what an exchanged authorization code issued, so a reused code revokes it. */
  readonly tokenGrants: TokenGrantStore;
  /** Break-glass state per realm: the last drill and the last break-glass login. */
  readonly breakGlass: BreakGlassStore;
  /** Impersonation windows: requested, consented, active, ended. */
  readonly impersonations: ImpersonationStore;
  // Ledgers and webhooks (spec 2.7, 2.8)
  /** The security ledger: security events per user. */
  readonly securityEvents: SecurityEventStore;
  /** The risk gate's login history, kept by the ledger's `login.succeeded` appends (issue 29). */
  readonly loginHistory: LoginHistory;
  /** A password sign-in's reads (account, credential, device, history, factors) in one statement (issue 29). */
  readonly signIns: SignInReadStore;
  /** The admin audit chain (hash-linked, per realm). */
  readonly adminAudit: AdminAuditStore;
  /** Webhook endpoints and the delivery outbox. */
  readonly webhooks: WebhookStore;
  // Mail (issue 5)
  /** The mail outbox: queued, sent and failed messages. */
  readonly mailOutbox: MailOutboxStore;
  // Erasure (spec 6): copies of personal data across the stores above
  /** Every copy of a user's personal data, for erasure. */
  readonly personalData: PersonalDataStore;
  // Migration (issue 15): shadow-mode authorization comparisons
  /** Shadow-mode comparisons of a legacy decision with svc's. */
  readonly shadowComparisons: ShadowComparisonStore;
  /** Raw SQL on plugins' own tables (in the transaction when the storage is bound to one). */
  readonly pluginSql: RawSqlStore;
}

/** The stores plus transactions. */
export interface Storage extends Stores {
  /**
   * Runs `work` with the stores bound to one transaction: it commits when `work`
   * resolves and rolls back when it throws. Nested calls join the outer transaction.
   */
  transaction<T>(work: (storage: Storage) => Promise<T>): Promise<T>;
}

/** What the stores need besides the database. */
export interface StorageDeps {
  /** The source of the current time (expiry, timestamps). */
  clock: Clock;
  /** The source of random bytes (ids, tokens). */
  random: RandomSource;
}
