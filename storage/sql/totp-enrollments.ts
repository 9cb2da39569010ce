/**
 * The SQL TOTP-enrollment store. Step acceptance is one conditional UPDATE
 * (`… WHERE last_accepted_step IS NULL OR last_accepted_step < $step`), so of two
 * concurrent presentations of one code only one succeeds.
 *
 * @module
 */
import { type Selectable, sql } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { ConflictError } from "../../core/errors.ts";
import { type RandomSource, randomUuid } from "../../core/random.ts";
import type { TotpEnrollmentRecord, TotpEnrollmentStore } from "../../core/storage/totp-enrollments.ts";
import type { Executor, TotpEnrollmentsTable } from "../database.ts";
import { isUuid } from "../../core/ids.ts";

function toRecord(row: Selectable<TotpEnrollmentsTable>): TotpEnrollmentRecord {
  return {
    id: row.id,
    userId: row.user_id,
    secretCiphertext: new Uint8Array(row.secret_ciphertext),
    confirmedAt: row.confirmed_at,
    lastAcceptedStep: row.last_accepted_step,
    createdAt: row.created_at,
  };
}

/** A {@link TotpEnrollmentStore} over the svc schema. */
export function createSqlTotpEnrollmentStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): TotpEnrollmentStore {
  const now = () => new Date(deps.clock.now());
  return {
    async begin(userId, secretCiphertext) {
      const at = now();
      // Replaces only an unconfirmed enrollment; a confirmed one makes the upsert a no-op.
      const row = await db.insertInto("totp_enrollments").values({
        id: randomUuid(deps.random),
        user_id: userId,
        secret_ciphertext: secretCiphertext,
        confirmed_at: null,
        last_accepted_step: null,
        created_at: at,
      }).onConflict((oc) =>
        oc.column("user_id").doUpdateSet((eb) => ({
          id: eb.ref("excluded.id"),
          secret_ciphertext: eb.ref("excluded.secret_ciphertext"),
          last_accepted_step: null,
          created_at: eb.ref("excluded.created_at"),
        })).where("totp_enrollments.confirmed_at", "is", null)
      ).returningAll().executeTakeFirst();
      if (!row) throw new ConflictError("TOTP is already enrolled and confirmed.");
      return toRecord(row);
    },

    async get(userId) {
      if (!isUuid(userId)) return null;
      const row = await db.selectFrom("totp_enrollments").selectAll().where("user_id", "=", userId)
        .executeTakeFirst();
      return row ? toRecord(row) : null;
    },

    async confirm(userId, step) {
      if (!isUuid(userId)) return false;
      const result = await db.updateTable("totp_enrollments")
        .set({ confirmed_at: now(), last_accepted_step: step })
        .where("user_id", "=", userId).where("confirmed_at", "is", null)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async advanceStep(userId, step) {
      if (!isUuid(userId) || !Number.isSafeInteger(step)) return false;
      const result = await db.updateTable("totp_enrollments")
        .set({ last_accepted_step: step })
        .where("user_id", "=", userId)
        .where("confirmed_at", "is not", null)
        .where((eb) =>
          eb.or([
            eb("last_accepted_step", "is", null),
            eb("last_accepted_step", "<", sql<number>`${step}::bigint`),
          ])
        )
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async delete(userId) {
      if (!isUuid(userId)) return false;
      const result = await db.deleteFrom("totp_enrollments").where("user_id", "=", userId).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}
