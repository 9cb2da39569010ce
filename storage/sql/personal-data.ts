/**
 * The SQL {@link PersonalDataStore}: finds copies by `position(lower(needle) in lower(column))`,
 * so a needle is data, never a pattern.
 *
 * @module
 */
import { type Expression, type ExpressionBuilder, sql, type SqlBool } from "kysely";
import { isUuid } from "../../core/ids.ts";
import type { PersonalDataStore } from "../contract/personal-data.ts";
import type { Database, Executor } from "../database.ts";

function mentions<T extends keyof Database>(
  eb: ExpressionBuilder<Database, T>,
  columns: readonly string[],
  needles: readonly string[],
): Expression<SqlBool> {
  return eb.or(
    columns.flatMap((column) =>
      needles.map((needle) => sql<SqlBool>`position(lower(${needle}) in lower(${sql.ref(column)})) > 0`)
    ),
  );
}

/** A {@link PersonalDataStore} over the svc schema. */
export function createSqlPersonalDataStore(db: Executor): PersonalDataStore {
  return {
    async ipAddressesOf(userId) {
      if (!isUuid(userId)) return [];
      const rows = await db.selectFrom("sessions").select("ip_address as ip")
        .where("user_id", "=", userId).where("ip_address", "is not", null)
        .union(
          db.selectFrom("security_events").select("ip_address as ip")
            .where("user_id", "=", userId).where("ip_address", "is not", null),
        ).execute();
      return rows.map((r) => r.ip!).sort();
    },

    async forgetSessionOrigins(userId) {
      if (!isUuid(userId)) return 0;
      const result = await db.updateTable("sessions").set({ ip_address: null, device_description: null })
        .where("user_id", "=", userId)
        .where((eb) => eb.or([eb("ip_address", "is not", null), eb("device_description", "is not", null)]))
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async webhookPayloadsMentioning(needles) {
      const wanted = needles.filter((n) => n !== "");
      if (wanted.length === 0) return [];
      return await db.selectFrom("webhook_deliveries").select(["id", "payload"])
        .where((eb) => mentions(eb, ["payload", "last_error"], wanted)).orderBy("id").execute();
    },

    async replaceWebhookPayload(id, payload) {
      await db.updateTable("webhook_deliveries").set({ payload, last_error: null }).where("id", "=", id)
        .execute();
    },

    async mailMentioning(needles) {
      const wanted = needles.filter((n) => n !== "");
      if (wanted.length === 0) return [];
      const rows = await db.selectFrom("mail_outbox").select(["id", "subject", "text_body", "html_body"])
        .where((eb) => mentions(eb, ["subject", "text_body", "html_body"], wanted))
        .orderBy("seq").execute();
      return rows.map((r) => ({ id: r.id, subject: r.subject, text: r.text_body, html: r.html_body }));
    },

    async replaceMailText(message) {
      await db.updateTable("mail_outbox")
        .set({ subject: message.subject, text_body: message.text, html_body: message.html })
        .where("id", "=", message.id).execute();
    },
  };
}
