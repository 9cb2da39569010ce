/** DPoP used proofs and session key bindings on SQL. */
import { type Clock, nowDate } from "../../core/clock.ts";
import type { DpopStore } from "../../core/storage/dpop.ts";
import type { Executor } from "../database.ts";

/** The SQL DPoP store over a kysely executor; time comes from `clock`. */
export function createSqlDpopStore(db: Executor, clock: Clock): DpopStore {
  return {
    async useProof(proofKey, expiresAt) {
      const row = await db.insertInto("dpop_proofs").values({ proof_key: proofKey, expires_at: expiresAt })
        .onConflict((oc) => oc.column("proof_key").doNothing())
        .returning("proof_key")
        .executeTakeFirst();
      return row !== undefined;
    },

    async prune(now = nowDate(clock)) {
      const result = await db.deleteFrom("dpop_proofs").where("expires_at", "<=", now).executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async bindSession(sessionId, jkt) {
      await db.updateTable("sessions").set({ dpop_jkt: jkt }).where("id", "=", sessionId).execute();
    },

    async sessionKey(sessionId) {
      const row = await db.selectFrom("sessions").select("dpop_jkt").where("id", "=", sessionId)
        .executeTakeFirst();
      return row?.dpop_jkt ?? null;
    },

    async refreshTokenKey(tokenHash) {
      const row = await db.selectFrom("refresh_tokens")
        .innerJoin("sessions", "sessions.id", "refresh_tokens.session_id")
        .select("sessions.dpop_jkt")
        .where("refresh_tokens.token_hash", "=", tokenHash)
        .executeTakeFirst();
      return row?.dpop_jkt ?? null;
    },
  };
}
