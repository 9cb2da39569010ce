/**
 * The SQL email OTP enrollment store.
 *
 * @module
 */
import type { Clock } from "../../core/clock.ts";
import type { EmailOtpEnrollmentStore } from "../../core/storage/email-otp-enrollments.ts";
import type { Executor } from "../database.ts";
import { isUuid } from "../../core/ids.ts";

/** An {@link EmailOtpEnrollmentStore} over the svc schema. */
export function createSqlEmailOtpEnrollmentStore(db: Executor, clock: Clock): EmailOtpEnrollmentStore {
  return {
    async enroll(userId) {
      // One statement: insert, or touch nothing and read the existing row back.
      const row = await db.insertInto("email_otp_enrollments")
        .values({ user_id: userId, enrolled_at: new Date(clock.now()) })
        .onConflict((oc) =>
          oc.column("user_id").doUpdateSet((eb) => ({
            enrolled_at: eb.ref("email_otp_enrollments.enrolled_at"),
          }))
        )
        .returning("enrolled_at")
        .executeTakeFirstOrThrow();
      return row.enrolled_at;
    },
    async enrolledAt(userId) {
      if (!isUuid(userId)) return null;
      const row = await db.selectFrom("email_otp_enrollments").select("enrolled_at").where(
        "user_id",
        "=",
        userId,
      )
        .executeTakeFirst();
      return row?.enrolled_at ?? null;
    },
    async remove(userId) {
      if (!isUuid(userId)) return false;
      const result = await db.deleteFrom("email_otp_enrollments").where("user_id", "=", userId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
