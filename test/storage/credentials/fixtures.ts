/** Shared fixtures of the credential-store suites: realms, users and every store over one clock. */
import type { Kysely } from "kysely";
import { ManualClock } from "../../../core/clock.ts";
import { cryptoRandom, randomUuid } from "../../../core/random.ts";
import type { Database, Executor } from "../../../storage/database.ts";
import { createSqlAdminAuditStore } from "../../../storage/sql/admin-audit.ts";
import { createSqlApiKeyStore } from "../../../storage/sql/api-keys.ts";
import { createSqlClientStore } from "../../../storage/sql/clients.ts";
import { createSqlFederatedIdentityStore } from "../../../storage/sql/federated-identities.ts";
import { createSqlKnownDeviceStore } from "../../../storage/sql/known-devices.ts";
import { createSqlPasskeyCeremonyStore } from "../../../storage/sql/passkey-ceremonies.ts";
import { createSqlPasskeyCredentialStore } from "../../../storage/sql/passkey-credentials.ts";
import { createSqlPasswordCredentialStore } from "../../../storage/sql/password-credentials.ts";
import { createSqlRefreshTokenStore } from "../../../storage/sql/refresh-tokens.ts";
import { createSqlSecurityEventStore } from "../../../storage/sql/security-events.ts";
import { createSqlServiceAccountStore } from "../../../storage/sql/service-accounts.ts";
import { createSqlSessionStore } from "../../../storage/sql/sessions.ts";
import { createSqlSigningKeyStore } from "../../../storage/sql/signing-keys.ts";
import { createSqlSubjectKeyStore } from "../../../storage/sql/subject-keys.ts";
import { createSqlTotpEnrollmentStore } from "../../../storage/sql/totp-enrollments.ts";
import { createSqlWebhookStore } from "../../../storage/sql/webhooks.ts";
import { seeder } from "../../support/seed.ts";

/** 2026-01-01T00:00:00Z. */
export const T0 = Date.UTC(2026, 0, 1);

/** A fresh manual clock at {@link T0}. */
export function clockAt(ms = T0): ManualClock {
  return new ManualClock(ms);
}

/** A new random UUID. */
export function uuid(): string {
  return randomUuid(cryptoRandom);
}

/** Inserts a realm and returns its id. */
export function makeRealm(db: Kysely<Database>): Promise<string> {
  return seeder(db).realm();
}

/** Inserts a user in the realm and returns its id. */
export function makeUser(db: Kysely<Database>, realmId: string): Promise<string> {
  return seeder(db).user(realmId);
}

/** Every store of this suite over one executor and clock. */
export function storesFor(db: Executor, clock: ManualClock) {
  const deps = { clock, random: cryptoRandom };
  return {
    signingKeys: createSqlSigningKeyStore(db, deps),
    subjectKeys: createSqlSubjectKeyStore(db, deps),
    passwords: createSqlPasswordCredentialStore(db, deps),
    totp: createSqlTotpEnrollmentStore(db, deps),
    passkeys: createSqlPasskeyCredentialStore(db, deps),
    ceremonies: createSqlPasskeyCeremonyStore(db, deps),
    devices: createSqlKnownDeviceStore(db, deps),
    federated: createSqlFederatedIdentityStore(db, deps),
    sessions: createSqlSessionStore(db, deps),
    refreshTokens: createSqlRefreshTokenStore(db, deps),
    serviceAccounts: createSqlServiceAccountStore(db, deps),
    apiKeys: createSqlApiKeyStore(db, deps),
    clients: createSqlClientStore(db, deps),
    securityEvents: createSqlSecurityEventStore(db, deps),
    audit: createSqlAdminAuditStore(db, deps),
    webhooks: createSqlWebhookStore(db, deps),
  };
}

/** Bytes 0..n-1 offset by `seed`. */
export function bytesOf(n: number, seed = 0): Uint8Array {
  return Uint8Array.from({ length: n }, (_, i) => (i + seed) & 0xff);
}
