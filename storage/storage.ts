/**
 * The SQL implementation of the storage port (`core/storage/storage.ts`): every store over one
 * database, bound to a transaction by `transaction`.
 *
 * @module
 */
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
import { createSqlSignInReadStore } from "./sql/sign-ins.ts";
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

import type { Storage, StorageDeps } from "../core/storage/storage.ts";

export type { Storage, StorageDeps, Stores } from "../core/storage/storage.ts";

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
    signIns: createSqlSignInReadStore(db),
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
