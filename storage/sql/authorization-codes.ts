/**
 * Authorization codes on SQL. `exchange` is one statement: a CTE locks the code
 * row (`FOR NO KEY UPDATE`; concurrent exchanges queue on it and each sees the
 * latest version), and the row is flipped to consumed only if it was unconsumed
 * and unexpired. Exactly one caller ever gets `Consumed`; the others see the
 * consumed row and get `Reused`.
 */
import { sql } from "kysely";
import { type Clock, nowDate } from "../../core/clock.ts";
import type { AuthorizationCode, AuthorizationCodeStore } from "../../core/storage/authorization-codes.ts";
import type { AuthorizationCodesTable, Executor } from "../database.ts";

/** The SQL authorization code store over a kysely executor; time comes from `clock`. */
export function createSqlAuthorizationCodeStore(db: Executor, clock: Clock): AuthorizationCodeStore {
  return {
    async store(code) {
      await db.insertInto("authorization_codes").values({
        code_hash: code.codeHash,
        client_id: code.clientId,
        redirect_uri: code.redirectUri,
        realm_id: code.realmId,
        user_id: code.userId,
        session_id: code.sessionId,
        org_id: code.orgId ?? null,
        scopes: [...code.scopes],
        auth_time: code.authTime,
        expires_at: code.expiresAt,
        consumed: false,
        code_challenge: code.codeChallenge ?? null,
        code_challenge_method: code.codeChallengeMethod ?? null,
        nonce: code.nonce ?? null,
        dpop_jkt: code.dpopJkt ?? null,
      }).execute();
    },

    async exchange(codeHash) {
      const now = nowDate(clock);
      const result = await sql<AuthorizationCodesTable & { won: number }>`
        WITH locked AS MATERIALIZED (
          SELECT * FROM authorization_codes WHERE code_hash = ${codeHash} FOR NO KEY UPDATE
        ),
        taken AS (
          UPDATE authorization_codes a
          SET consumed = true
          FROM locked l
          WHERE a.code_hash = l.code_hash AND NOT a.consumed AND l.expires_at > ${now}::timestamptz
          RETURNING a.code_hash
        )
        SELECT l.*, (SELECT count(*) FROM taken)::int AS won FROM locked l
      `.execute(db);
      const row = result.rows[0];
      if (!row) return { outcome: "Unknown" };
      if (Number(row.won) === 1) return { outcome: "Consumed", code: { ...fromRow(row), consumed: true } };
      if (row.consumed) return { outcome: "Reused", code: fromRow(row) };
      return { outcome: "Unknown" };
    },

    async get(codeHash) {
      const row = await db.selectFrom("authorization_codes").selectAll().where("code_hash", "=", codeHash)
        .executeTakeFirst();
      return row ? fromRow(row) : null;
    },

    async purge(now = nowDate(clock)) {
      const result = await db.deleteFrom("authorization_codes").where("expires_at", "<=", now)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

function fromRow(row: AuthorizationCodesTable): AuthorizationCode {
  return {
    codeHash: row.code_hash,
    clientId: row.client_id,
    redirectUri: row.redirect_uri,
    realmId: row.realm_id,
    userId: row.user_id,
    sessionId: row.session_id,
    orgId: row.org_id,
    scopes: [...row.scopes],
    authTime: new Date(row.auth_time),
    expiresAt: new Date(row.expires_at),
    consumed: row.consumed,
    codeChallenge: row.code_challenge,
    codeChallengeMethod: row.code_challenge_method,
    nonce: row.nonce,
    // Present only when bound, so unbound codes read as before.
    ...(row.dpop_jkt ? { dpopJkt: row.dpop_jkt } : {}),
  };
}
