/** Shared helpers of the single-use storage tests. */
import { ManualClock } from "../../../core/clock.ts";
import type { Executor } from "../../../storage/database.ts";
import { createSqlAuthorizationCodeStore } from "../../../storage/sql/authorization-codes.ts";
import { createSqlBreakGlassStore } from "../../../storage/sql/break-glass.ts";
import { createSqlConsumedTokenStore } from "../../../storage/sql/consumed-tokens.ts";
import { createSqlEmailOtpStore } from "../../../storage/sql/email-otp.ts";
import { createSqlImpersonationStore } from "../../../storage/sql/impersonations.ts";
import { createSqlRecoveryCodeStore } from "../../../storage/sql/recovery-codes.ts";
import { createSqlSamlAssertionStore } from "../../../storage/sql/saml-assertions.ts";
import { createSqlTokenGrantStore } from "../../../storage/sql/token-grants.ts";
import type { NewAuthorizationCode } from "../../../core/storage/authorization-codes.ts";

/** A fixed starting instant for manual clocks. */
export const T0 = Date.UTC(2026, 0, 1);

/** Every single-use store over one executor and clock. */
export function singleUseStores(db: Executor, clock = new ManualClock(T0)) {
  return {
    clock,
    otp: createSqlEmailOtpStore(db, clock),
    tokens: createSqlConsumedTokenStore(db, clock),
    saml: createSqlSamlAssertionStore(db, clock),
    codes: createSqlAuthorizationCodeStore(db, clock),
    grants: createSqlTokenGrantStore(db, clock),
    breakGlass: createSqlBreakGlassStore(db, clock),
    impersonations: createSqlImpersonationStore(db, clock),
    recovery: createSqlRecoveryCodeStore(db, clock),
  };
}

/** A random uuid (tests only; svc draws ids from its RandomSource). */
export const uuid = (): string => crypto.randomUUID();

/** A unique text id with a readable prefix. */
export const uniqueId = (prefix: string): string => `${prefix}-${crypto.randomUUID()}`;

/** Inserts a realm and a user (recovery codes reference users) and returns the user id. */
export async function insertUser(db: Executor): Promise<string> {
  const realmId = uuid();
  const userId = uuid();
  const now = new Date(T0);
  await db.insertInto("realms")
    .values({ id: realmId, name: `r-${realmId}`, display_name: "R", is_default: false, created_at: now })
    .execute();
  await db.insertInto("users").values({
    id: userId,
    realm_id: realmId,
    email: `${userId}@example.test`,
    email_verified: false,
    display_name: null,
    status: "Active",
    attributes: "{}",
    is_break_glass: false,
    anonymized_at: null,
    created_at: now,
    updated_at: now,
  }).execute();
  return userId;
}

/** A new authorization code record expiring `ttlMs` after `nowMs`. */
export function newCode(codeHash: string, nowMs: number, ttlMs = 60_000): NewAuthorizationCode {
  return {
    codeHash,
    clientId: "client-a",
    redirectUri: "https://app.example.test/cb",
    realmId: uuid(),
    userId: uuid(),
    sessionId: uuid(),
    scopes: ["openid", "profile"],
    authTime: new Date(nowMs - 1000),
    expiresAt: new Date(nowMs + ttlMs),
    codeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    codeChallengeMethod: "S256",
    nonce: "n-0S6_WzA2Mj",
  };
}
