/**
 * The storage contract as one object: every store of svc over one database, plus
 * `transaction`, which gives the same object bound to one database transaction so that
 * a change across aggregates commits or rolls back as a whole.
 *
 * @module
 */
import type { Clock } from "../core/clock.ts";
import type { RandomSource } from "../core/random.ts";
import type { AdminAuditStore } from "./contract/admin-audit.ts";
import type { ApiKeyStore } from "./contract/api-keys.ts";
import type { AppCatalogStore } from "./contract/app-catalog.ts";
import type { AuthorizationCodeStore } from "./contract/authorization-codes.ts";
import type { BreakGlassStore } from "./contract/break-glass.ts";
import type { ClientStore } from "./contract/clients.ts";
import type { ConsumedTokenStore } from "./contract/consumed-tokens.ts";
import type { EmailOtpStore } from "./contract/email-otp.ts";
import type { EmailOtpEnrollmentStore } from "./contract/email-otp-enrollments.ts";
import type { FederatedIdentityStore } from "./contract/federated-identities.ts";
import type { GroupStore } from "./contract/groups.ts";
import type { ImpersonationStore } from "./contract/impersonations.ts";
import type { KnownDeviceStore } from "./contract/known-devices.ts";
import type { MailOutboxStore } from "./contract/mail-outbox.ts";
import type { OrganizationStore } from "./contract/organizations.ts";
import type { PasskeyCeremonyStore } from "./contract/passkey-ceremonies.ts";
import type { PasskeyCredentialStore } from "./contract/passkey-credentials.ts";
import type { PasswordCredentialStore } from "./contract/password-credentials.ts";
import type { PermissionCatalogStore } from "./contract/permission-catalog.ts";
import type { PolicyStore } from "./contract/policies.ts";
import type { RealmStore } from "./contract/realms.ts";
import type { RecoveryCodeStore } from "./contract/recovery-codes.ts";
import type { RefreshTokenStore } from "./contract/refresh-tokens.ts";
import type { RoleStore } from "./contract/roles.ts";
import type { SamlAssertionStore } from "./contract/saml-assertions.ts";
import type { SecurityEventStore } from "./contract/security-events.ts";
import type { ServiceAccountStore } from "./contract/service-accounts.ts";
import type { SessionStore } from "./contract/sessions.ts";
import type { SigningKeyStore } from "./contract/signing-keys.ts";
import type { SubjectGrantSource } from "./contract/subject-grants.ts";
import type { SubjectKeyStore } from "./contract/subject-keys.ts";
import type { TeamStore } from "./contract/teams.ts";
import type { TokenGrantStore } from "./contract/token-grants.ts";
import type { TotpEnrollmentStore } from "./contract/totp-enrollments.ts";
import type { UserStore } from "./contract/users.ts";
import type { WebhookStore } from "./contract/webhooks.ts";
import type { ServerSecretStore } from "./contract/server-secrets.ts";
import type { DpopStore } from "./contract/dpop.ts";
import type { PersonalDataStore } from "./contract/personal-data.ts";
import type { ShadowComparisonStore } from "./contract/shadow-comparisons.ts";
import type { RawSqlStore } from "./contract/raw-sql.ts";
import type { Executor } from "./database.ts";
import type { SvcDatabase } from "./open.ts";
import { createSqlAdminAuditStore } from "./sql/admin-audit.ts";
import { createSqlApiKeyStore } from "./sql/api-keys.ts";
import { createSqlAppCatalogStore } from "./sql/app-catalog.ts";
import { createSqlAuthorizationCodeStore } from "./sql/authorization-codes.ts";
import { createSqlBreakGlassStore } from "./sql/break-glass.ts";
import { createSqlClientStore } from "./sql/clients.ts";
import { createSqlConsumedTokenStore } from "./sql/consumed-tokens.ts";
import { createSqlDpopStore } from "./sql/dpop.ts";
import { createSqlEmailOtpStore } from "./sql/email-otp.ts";
import { createSqlEmailOtpEnrollmentStore } from "./sql/email-otp-enrollments.ts";
import { createSqlFederatedIdentityStore } from "./sql/federated-identities.ts";
import { createSqlGroupStore } from "./sql/groups.ts";
import { createSqlImpersonationStore } from "./sql/impersonations.ts";
import { createSqlKnownDeviceStore } from "./sql/known-devices.ts";
import { createSqlMailOutboxStore } from "./sql/mail-outbox.ts";
import { createSqlOrganizationStore } from "./sql/organizations.ts";
import { createSqlPasskeyCeremonyStore } from "./sql/passkey-ceremonies.ts";
import { createSqlPasskeyCredentialStore } from "./sql/passkey-credentials.ts";
import { createSqlPasswordCredentialStore } from "./sql/password-credentials.ts";
import { createSqlPermissionCatalogStore } from "./sql/permission-catalog.ts";
import { createSqlPolicyStore } from "./sql/policies.ts";
import { createSqlRealmStore } from "./sql/realms.ts";
import { createSqlRecoveryCodeStore } from "./sql/recovery-codes.ts";
import { createSqlRefreshTokenStore } from "./sql/refresh-tokens.ts";
import { createSqlRoleStore } from "./sql/roles.ts";
import { createSqlSamlAssertionStore } from "./sql/saml-assertions.ts";
import { createSqlSecurityEventStore } from "./sql/security-events.ts";
import { createSqlServiceAccountStore } from "./sql/service-accounts.ts";
import { createSqlSessionStore } from "./sql/sessions.ts";
import { createSqlSigningKeyStore } from "./sql/signing-keys.ts";
import { createSqlSubjectGrantSource } from "./sql/subject-grants.ts";
import { createSqlSubjectKeyStore } from "./sql/subject-keys.ts";
import { createSqlTeamStore } from "./sql/teams.ts";
import { createSqlTokenGrantStore } from "./sql/token-grants.ts";
import { createSqlTotpEnrollmentStore } from "./sql/totp-enrollments.ts";
import { createSqlUserStore } from "./sql/users.ts";
import { createSqlWebhookStore } from "./sql/webhooks.ts";
import { createSqlServerSecretStore } from "./sql/server-secrets.ts";
import { createSqlPersonalDataStore } from "./sql/personal-data.ts";
import { createSqlShadowComparisonStore } from "./sql/shadow-comparisons.ts";
import { createSqlRawStore } from "./sql/raw-sql.ts";
import { atomically } from "./sql/transaction.ts";
import { createSqlLoginHistory } from "./sql/login-history.ts";
import type { LoginHistory } from "../core/risk/providers.ts";

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

/**
 * The SQL storage over an open database (PGlite or Postgres).
 *
 * @example
 * ```ts
 * import { createSqlStorage, cryptoRandom, openDatabase, systemClock } from "@svc/svc";
 *
 * // In memory here; `dataDir` keeps the embedded store in a folder, `{ kind: "postgres", url }` uses a server.
 * const database = await openDatabase({ kind: "embedded" });
 * await database.ensureSchema();
 * const storage = createSqlStorage(database, { clock: systemClock, random: cryptoRandom });
 * await storage.transaction(async (tx) => {
 *   const realm = await tx.realms.create({ name: "acme", displayName: "Acme" });
 *   await tx.roles.create({ realmId: realm.id, key: "admin", displayName: "Admin" });
 * }); // both rows, or neither
 * await database.close();
 * ```
 */
export function createSqlStorage(database: Pick<SvcDatabase, "db">, deps: StorageDeps): Storage {
  return bind(database.db, deps);
}

function bind(db: Executor, deps: StorageDeps): Storage {
  const { clock } = deps;
  return {
    realms: createSqlRealmStore(db, deps),
    organizations: createSqlOrganizationStore(db, deps),
    users: createSqlUserStore(db, deps),
    teams: createSqlTeamStore(db, deps),
    groups: createSqlGroupStore(db, deps),
    roles: createSqlRoleStore(db, deps),
    policies: createSqlPolicyStore(db, deps),
    permissionCatalog: createSqlPermissionCatalogStore(db, deps),
    appCatalog: createSqlAppCatalogStore(db, deps),
    subjectGrants: createSqlSubjectGrantSource(db),
    passwordCredentials: createSqlPasswordCredentialStore(db, deps),
    recoveryCodes: createSqlRecoveryCodeStore(db, clock),
    totpEnrollments: createSqlTotpEnrollmentStore(db, deps),
    passkeyCredentials: createSqlPasskeyCredentialStore(db, deps),
    passkeyCeremonies: createSqlPasskeyCeremonyStore(db, deps),
    knownDevices: createSqlKnownDeviceStore(db, deps),
    federatedIdentities: createSqlFederatedIdentityStore(db, deps),
    sessions: createSqlSessionStore(db, deps),
    refreshTokens: createSqlRefreshTokenStore(db, deps),
    signingKeys: createSqlSigningKeyStore(db, deps),
    subjectKeys: createSqlSubjectKeyStore(db, deps),
    serverSecrets: createSqlServerSecretStore(db, deps),
    serviceAccounts: createSqlServiceAccountStore(db, deps),
    apiKeys: createSqlApiKeyStore(db, deps),
    clients: createSqlClientStore(db, deps),
    emailOtp: createSqlEmailOtpStore(db, clock),
    emailOtpEnrollments: createSqlEmailOtpEnrollmentStore(db, clock),
    consumedTokens: createSqlConsumedTokenStore(db, clock),
    dpop: createSqlDpopStore(db, clock),
    samlAssertions: createSqlSamlAssertionStore(db, clock),
    authorizationCodes: createSqlAuthorizationCodeStore(db, clock),
    tokenGrants: createSqlTokenGrantStore(db, clock),
    breakGlass: createSqlBreakGlassStore(db, clock),
    impersonations: createSqlImpersonationStore(db, clock),
    securityEvents: createSqlSecurityEventStore(db, deps),
    loginHistory: createSqlLoginHistory(db),
    adminAudit: createSqlAdminAuditStore(db, deps),
    webhooks: createSqlWebhookStore(db, deps),
    mailOutbox: createSqlMailOutboxStore(db, deps),
    personalData: createSqlPersonalDataStore(db),
    shadowComparisons: createSqlShadowComparisonStore(db, deps),
    pluginSql: createSqlRawStore(db),
    transaction<T>(work: (storage: Storage) => Promise<T>): Promise<T> {
      return atomically(db, (trx) => work(bind(trx, deps)));
    },
  };
}
