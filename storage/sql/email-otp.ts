/**
 * Email OTP challenges on SQL. `verify` is one statement: a CTE locks the
 * challenge row (`FOR UPDATE`, which under READ COMMITTED waits for concurrent
 * verifiers and then sees the latest version of the row), decides the outcome
 * from that locked version, and either deletes the row or decrements its budget.
 * Concurrent verifiers therefore queue on the row and each sees the effect of
 * the previous one: the budget can never be overspent.
 */
import { sql } from "kysely";
import { type Clock, nowDate } from "../../core/clock.ts";
import {
  type EmailOtpChallenge,
  type EmailOtpStore,
  hashOtpCode,
  type OtpVerifyResult,
} from "../../core/storage/email-otp.ts";
import type { EmailOtpChallengesTable, Executor } from "../database.ts";

type Outcome = OtpVerifyResult["outcome"];

/** The SQL email OTP store over a kysely executor; time comes from `clock`. */
export function createSqlEmailOtpStore(db: Executor, clock: Clock): EmailOtpStore {
  return {
    async store(challenge) {
      const row = toRow(challenge);
      await db.insertInto("email_otp_challenges").values(row)
        .onConflict((oc) =>
          oc.column("challenge_id").doUpdateSet({
            code_hash: row.code_hash,
            expires_at: row.expires_at,
            remaining_attempts: row.remaining_attempts,
          })
        )
        .execute();
    },

    async verify(challengeId, code) {
      const now = nowDate(clock);
      const hash = hashOtpCode(code);
      const result = await sql<{ outcome: Outcome; remaining: number | null; changed: number }>`
        WITH locked AS MATERIALIZED (
          SELECT challenge_id, code_hash, expires_at, remaining_attempts
          FROM email_otp_challenges
          WHERE challenge_id = ${challengeId}
          FOR UPDATE
        ),
        decided AS MATERIALIZED (
          SELECT challenge_id,
            CASE
              WHEN expires_at <= ${now}::timestamptz THEN 'ExpiredOrMissing'
              WHEN remaining_attempts <= 0 THEN 'TooManyAttempts'
              WHEN code_hash = ${hash}::text THEN 'Success'
              ELSE 'WrongCode'
            END AS outcome
          FROM locked
        ),
        removed AS (
          DELETE FROM email_otp_challenges c
          USING decided d
          WHERE c.challenge_id = d.challenge_id AND d.outcome <> 'WrongCode'
          RETURNING c.challenge_id
        ),
        decremented AS (
          UPDATE email_otp_challenges c
          SET remaining_attempts = c.remaining_attempts - 1
          FROM decided d
          WHERE c.challenge_id = d.challenge_id AND d.outcome = 'WrongCode' AND c.remaining_attempts > 0
          RETURNING c.remaining_attempts
        )
        SELECT d.outcome,
          (SELECT remaining_attempts FROM decremented) AS remaining,
          ((SELECT count(*) FROM removed) + (SELECT count(*) FROM decremented))::int AS changed
        FROM decided d
      `.execute(db);
      const row = result.rows[0];
      if (!row) return { outcome: "ExpiredOrMissing" };
      // The row is locked by this statement, so its write cannot miss; guard anyway.
      if (Number(row.changed) !== 1) throw new Error(`email OTP verify changed ${row.changed} rows`);
      if (row.outcome === "WrongCode") {
        return { outcome: "WrongCode", remainingAttempts: Number(row.remaining) };
      }
      return { outcome: row.outcome };
    },

    async get(challengeId) {
      const row = await db.selectFrom("email_otp_challenges").selectAll()
        .where("challenge_id", "=", challengeId).executeTakeFirst();
      return row ? fromRow(row) : null;
    },

    async prune(now = nowDate(clock)) {
      const result = await db.deleteFrom("email_otp_challenges").where("expires_at", "<=", now)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

function toRow(challenge: EmailOtpChallenge): EmailOtpChallengesTable {
  return {
    challenge_id: challenge.challengeId,
    code_hash: challenge.codeHash,
    expires_at: challenge.expiresAt,
    remaining_attempts: challenge.remainingAttempts,
  };
}

function fromRow(row: EmailOtpChallengesTable): EmailOtpChallenge {
  return {
    challengeId: row.challenge_id,
    codeHash: row.code_hash,
    expiresAt: row.expires_at,
    remainingAttempts: row.remaining_attempts,
  };
}
