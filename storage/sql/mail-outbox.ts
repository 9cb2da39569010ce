/** The mail outbox on SQL: one row per message, ordered by a database sequence. */
import { type Selectable, sql } from "kysely";
import { type Clock, nowDate } from "../../core/clock.ts";
import { type RandomSource, randomUuid } from "../../core/random.ts";
import type { MailOutboxStore, OutboxMessage, OutboxQuery } from "../contract/mail-outbox.ts";
import type { Executor, MailOutboxTable } from "../database.ts";
import { isUuid } from "../../core/ids.ts";

function toMessage(row: Selectable<MailOutboxTable>): OutboxMessage {
  return {
    id: row.id,
    seq: Number(row.seq),
    kind: row.kind,
    to: row.recipient,
    from: row.sender,
    subject: row.subject,
    text: row.text_body,
    html: row.html_body,
    createdAt: row.created_at,
    sentAt: row.sent_at,
  };
}

/** The SQL {@link MailOutboxStore} over a kysely executor. */
export function createSqlMailOutboxStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): MailOutboxStore {
  const filtered = (query: Omit<OutboxQuery, "limit">) => {
    let q = db.selectFrom("mail_outbox").selectAll();
    if (query.to !== undefined) q = q.where(sql`lower(recipient)`, "=", query.to.toLowerCase());
    if (query.kind !== undefined) q = q.where("kind", "=", query.kind);
    if (query.pendingOnly) q = q.where("sent_at", "is", null);
    if (query.afterSeq !== undefined) q = q.where("seq", ">", query.afterSeq);
    return q;
  };
  return {
    async add(message) {
      const row = await db.insertInto("mail_outbox").values({
        id: randomUuid(deps.random),
        kind: message.kind,
        recipient: message.to,
        sender: message.from,
        subject: message.subject,
        text_body: message.text,
        html_body: message.html,
        created_at: nowDate(deps.clock),
        sent_at: null,
      }).returningAll().executeTakeFirstOrThrow();
      return toMessage(row);
    },

    async list(query = {}) {
      const limit = Math.max(1, Math.min(1000, Math.trunc(query.limit ?? 100)));
      const rows = await filtered(query).orderBy("seq", "asc").limit(limit).execute();
      return rows.map(toMessage);
    },

    async latest(query = {}) {
      const row = await filtered({ ...query, afterSeq: undefined }).orderBy("seq", "desc").limit(1)
        .executeTakeFirst();
      return row ? toMessage(row) : null;
    },

    async markSent(id) {
      if (!isUuid(id)) return false;
      const result = await db.updateTable("mail_outbox").set({ sent_at: nowDate(deps.clock) })
        .where("id", "=", id).where("sent_at", "is", null).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async prune(before) {
      const result = await db.deleteFrom("mail_outbox").where("created_at", "<", before).executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async deleteForRecipient(to) {
      const result = await db.deleteFrom("mail_outbox").where(sql`lower(recipient)`, "=", to.toLowerCase())
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
