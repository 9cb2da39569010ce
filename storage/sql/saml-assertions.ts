/** Consumed SAML assertion ids on SQL. */
import { type Clock, nowDate } from "../../core/clock.ts";
import { samlAssertionKey, type SamlAssertionStore } from "../../core/storage/saml-assertions.ts";
import type { Executor } from "../database.ts";

/** The SQL SAML assertion store over a kysely executor; time comes from `clock`. */
export function createSqlSamlAssertionStore(db: Executor, clock: Clock): SamlAssertionStore {
  return {
    async mark(connectionId, assertionId, expiresAt) {
      const row = await db.insertInto("consumed_saml_assertions")
        .values({ assertion_id: samlAssertionKey(connectionId, assertionId), expires_at: expiresAt })
        .onConflict((oc) => oc.column("assertion_id").doNothing())
        .returning("assertion_id")
        .executeTakeFirst();
      return row !== undefined;
    },

    async isMarked(connectionId, assertionId) {
      const row = await db.selectFrom("consumed_saml_assertions").select("assertion_id")
        .where("assertion_id", "=", samlAssertionKey(connectionId, assertionId)).executeTakeFirst();
      return row !== undefined;
    },

    async prune(now = nowDate(clock)) {
      const result = await db.deleteFrom("consumed_saml_assertions").where("expires_at", "<=", now)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
