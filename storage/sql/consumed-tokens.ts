/** The consumed-jti deny-list on SQL. */
import { type Clock, nowDate } from "../../core/clock.ts";
import type { ConsumedTokenStore } from "../../core/storage/consumed-tokens.ts";
import type { Executor } from "../database.ts";

/** The SQL consumed-token store over a kysely executor; time comes from `clock`. */
export function createSqlConsumedTokenStore(db: Executor, clock: Clock): ConsumedTokenStore {
  return {
    async consume(jti, expiresAt) {
      const row = await db.insertInto("consumed_tokens").values({ jti, expires_at: expiresAt })
        .onConflict((oc) => oc.column("jti").doNothing())
        .returning("jti")
        .executeTakeFirst();
      return row !== undefined;
    },

    async isConsumed(jti) {
      const row = await db.selectFrom("consumed_tokens").select("jti").where("jti", "=", jti)
        .executeTakeFirst();
      return row !== undefined;
    },

    async prune(now = nowDate(clock)) {
      const result = await db.deleteFrom("consumed_tokens").where("expires_at", "<=", now).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
