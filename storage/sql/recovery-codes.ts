/** Recovery codes on SQL: the set is replaced in one transaction, a code consumed by one DELETE. */
import { type Clock, nowDate } from "../../core/clock.ts";
import { hashRecoveryCode, type RecoveryCodeStore } from "../../core/storage/recovery-codes.ts";
import type { Executor } from "../database.ts";
import { atomically } from "./transaction.ts";

/** The SQL recovery code store over a kysely executor; time comes from `clock`. */
export function createSqlRecoveryCodeStore(db: Executor, clock: Clock): RecoveryCodeStore {
  return {
    replace(userId, codes) {
      return atomically(db, async (trx) => {
        const now = nowDate(clock);
        await trx.deleteFrom("recovery_codes").where("user_id", "=", userId).execute();
        const seen = new Set<string>();
        const rows = codes.filter((c) => !seen.has(c.codeHash) && seen.add(c.codeHash))
          .map((c) => ({ id: c.id, user_id: userId, code_hash: c.codeHash, created_at: now }));
        if (rows.length > 0) await trx.insertInto("recovery_codes").values(rows).execute();
      });
    },

    async consume(userId, code) {
      const row = await db.deleteFrom("recovery_codes")
        .where("user_id", "=", userId)
        .where("code_hash", "=", hashRecoveryCode(code))
        .returning("id")
        .executeTakeFirst();
      return row !== undefined;
    },

    async countRemaining(userId) {
      const row = await db.selectFrom("recovery_codes")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("user_id", "=", userId)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}
