/**
 * The SQL {@link PersonalDataStore}: finds copies by `position(lower(needle) in lower(column))`,
 * so a needle is data, never a pattern.
 *
 * @module
 */
import { type Expression, type ExpressionBuilder, sql, type SqlBool } from "kysely";
import { isUuid } from "../../core/ids.ts";
import type { PersonalDataStore } from "../../core/storage/personal-data.ts";
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

    async webhookPayloadsMentioning(realmId, needles) {
      const wanted = needles.filter((n) => n !== "");
      if (wanted.length === 0 || !isUuid(realmId)) return [];
      return await db.selectFrom("webhook_deliveries").select(["id", "payload"])
        .where(
          "endpoint_id",
          "in",
          (eb) =>
            eb.selectFrom("webhook_endpoints").select("id").where("realm_id", "=", realmId.toLowerCase()),
        )
        .where((eb) => mentions(eb, ["payload", "last_error"], wanted)).orderBy("id").execute();
    },

    async replaceWebhookPayload(id, payload) {
      await db.updateTable("webhook_deliveries").set({ payload, last_error: null }).where("id", "=", id)
        .execute();
    },

    async mailMentioning(realmId, needles) {
      const wanted = needles.filter((n) => n !== "");
      if (wanted.length === 0 || !isUuid(realmId)) return [];
      const rows = await db.selectFrom("mail_outbox").select(["id", "subject", "text_body", "html_body"])
        .where((eb) => eb.or([eb("realm_id", "=", realmId.toLowerCase()), eb("realm_id", "is", null)]))
        .where((eb) => mentions(eb, ["subject", "text_body", "html_body"], wanted))
        .orderBy("seq").execute();
      return rows.map((r) => ({ id: r.id, subject: r.subject, text: r.text_body, html: r.html_body }));
    },

    async auditPayloadsAbout(realmId, subjectId) {
      if (!isUuid(realmId)) return [];
      const rows = await db.selectFrom("admin_audit_entries")
        .select([
          "seq",
          sql<string | null>`before_json::text`.as("before"),
          sql<string | null>`after_json::text`.as("after"),
        ])
        .where("realm_id", "=", realmId.toLowerCase()).where("target", "=", subjectId)
        .where((eb) => eb.or([eb("before_json", "is not", null), eb("after_json", "is not", null)]))
        .orderBy("seq").execute();
      return rows.map((r) => ({ seq: Number(r.seq), before: r.before, after: r.after }));
    },

    async auditPayloadsMentioning(realmId, needles, exceptSubject) {
      const wanted = needles.filter((n) => n !== "");
      if (wanted.length === 0 || !isUuid(realmId)) return [];
      const rows = await db.selectFrom("admin_audit_entries")
        .select([
          "seq",
          sql<string | null>`before_json::text`.as("before"),
          sql<string | null>`after_json::text`.as("after"),
        ])
        .where("realm_id", "=", realmId.toLowerCase())
        .where("actor_id", "!=", exceptSubject)
        .where("target", "is distinct from", exceptSubject)
        .where("on_behalf_of", "is distinct from", exceptSubject)
        .where((eb) =>
          eb.or(
            ["before_json", "after_json"].flatMap((column) =>
              wanted.map((needle) =>
                sql<SqlBool>`position(lower(${needle}) in lower(${sql.ref(column)}::text)) > 0`
              )
            ),
          )
        )
        .orderBy("seq").execute();
      return rows.map((r) => ({ seq: Number(r.seq), before: r.before, after: r.after }));
    },

    async clearAuditPayloads(realmId, seqs) {
      if (seqs.length === 0 || !isUuid(realmId)) return 0;
      const result = await db.updateTable("admin_audit_entries").set({ before_json: null, after_json: null })
        .where("realm_id", "=", realmId.toLowerCase()).where("seq", "in", [...seqs])
        .where((eb) => eb.or([eb("before_json", "is not", null), eb("after_json", "is not", null)]))
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async freeTextMentioning(realmId, needles) {
      const wanted = needles.filter((n) => n !== "");
      if (wanted.length === 0 || !isUuid(realmId)) return [];
      const realm = realmId.toLowerCase();
      const reasons = await db.selectFrom("impersonations").select(["id", "reason as text"])
        .where("realm_id", "=", realm).where((eb) => mentions(eb, ["reason"], wanted)).orderBy("id")
        .execute();
      const names = await db.selectFrom("api_keys").select(["id", "name as text"])
        .where("realm_id", "=", realm).where((eb) => mentions(eb, ["name"], wanted)).orderBy("id").execute();
      const events = await db.selectFrom("security_events")
        .select(["id", sql<string>`data_json::text`.as("text")])
        .where("realm_id", "=", realm).where("data_json", "is not", null)
        .where(() =>
          sql<SqlBool>`(${
            sql.join(
              wanted.map((needle) => sql`position(lower(${needle}) in lower(data_json::text)) > 0`),
              sql` OR `,
            )
          })`
        )
        .orderBy("id").execute();
      return [
        ...reasons.map((r) => ({ kind: "impersonation_reason" as const, id: r.id, text: r.text })),
        ...names.map((r) => ({ kind: "api_key_name" as const, id: r.id, text: r.text })),
        ...events.map((r) => ({ kind: "security_event_data" as const, id: r.id, text: r.text })),
      ];
    },

    async replaceFreeText(text) {
      if (!isUuid(text.id)) return;
      if (text.kind === "impersonation_reason") {
        await db.updateTable("impersonations").set({ reason: text.text }).where("id", "=", text.id).execute();
      } else if (text.kind === "api_key_name") {
        await db.updateTable("api_keys").set({ name: text.text }).where("id", "=", text.id).execute();
      } else {
        await db.updateTable("security_events").set({ data_json: text.text }).where("id", "=", text.id)
          .execute();
      }
    },

    async replaceMailText(message) {
      await db.updateTable("mail_outbox")
        .set({ subject: message.subject, text_body: message.text, html_body: message.html })
        .where("id", "=", message.id).execute();
    },
  };
}
