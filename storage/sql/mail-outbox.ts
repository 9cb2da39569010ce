/** The mail outbox on SQL: one row per message, ordered by a database sequence. */
import { type Selectable, sql } from "kysely";
import { type Clock, nowDate } from "../../core/clock.ts";
import { type RandomSource, randomUuid } from "../../core/random.ts";
import {
  MAIL_RETRY_DELAYS_MS,
  type MailOutboxStore,
  type OutboxMessage,
  type OutboxQuery,
} from "../../core/storage/mail-outbox.ts";
import type { Executor, MailOutboxTable } from "../database.ts";
import { isUuid } from "../../core/ids.ts";

const ZERO_UUID = "00000000-0000-0000-0000-000000000000";

/** A realm or user id as a uuid parameter; text that is no uuid matches nothing. */
const uuidOrZero = (id: string) => isUuid(id) ? id.toLowerCase() : ZERO_UUID;

function toMessage(row: Selectable<MailOutboxTable>): OutboxMessage {
  return {
    id: row.id,
    realmId: row.realm_id,
    userId: row.user_id,
    seq: Number(row.seq),
    kind: row.kind,
    to: row.recipient,
    from: row.sender,
    subject: row.subject,
    text: row.text_body,
    html: row.html_body,
    createdAt: row.created_at,
    sentAt: row.sent_at,
    deliveryStatus: row.delivery_status,
    attempts: Number(row.attempts),
    nextAttemptAt: row.next_attempt_at,
    lastError: row.last_error,
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
    if (query.deliveryStatus !== undefined) q = q.where("delivery_status", "=", query.deliveryStatus);
    if (query.realmId !== undefined) q = q.where("realm_id", "=", uuidOrZero(query.realmId));
    return q;
  };
  return {
    async add(message) {
      const row = await db.insertInto("mail_outbox").values({
        id: randomUuid(deps.random),
        realm_id: uuidOrZero(message.realmId),
        user_id: message.userId === null ? null : uuidOrZero(message.userId),
        kind: message.kind,
        recipient: message.to,
        sender: message.from,
        subject: message.subject,
        text_body: message.text,
        html_body: message.html,
        created_at: nowDate(deps.clock),
        sent_at: null,
        next_attempt_at: nowDate(deps.clock),
        last_error: null,
      }).returningAll().executeTakeFirstOrThrow();
      return toMessage(row);
    },

    async list(query = {}) {
      const limit = Math.max(1, Math.min(1000, Math.trunc(query.limit ?? 100)));
      const offset = Math.max(0, Math.trunc(query.offset ?? 0));
      const rows = await filtered(query).orderBy("seq", query.newestFirst ? "desc" : "asc").limit(limit)
        .offset(offset).execute();
      return rows.map(toMessage);
    },

    async count(query = {}) {
      const row = await filtered(query).clearSelect().select(sql<string>`count(*)`.as("n"))
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    async latest(query = {}) {
      const row = await filtered({ ...query, afterSeq: undefined }).orderBy("seq", "desc").limit(1)
        .executeTakeFirst();
      return row ? toMessage(row) : null;
    },

    async markSent(id) {
      if (!isUuid(id)) return false;
      const result = await db.updateTable("mail_outbox")
        .set({ sent_at: nowDate(deps.clock), delivery_status: "sent", next_attempt_at: null })
        .where("id", "=", id).where("sent_at", "is", null).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async get(id, scope) {
      if (!isUuid(id)) return null;
      let q = db.selectFrom("mail_outbox").selectAll().where("id", "=", id);
      if (scope !== undefined) q = q.where("realm_id", "=", uuidOrZero(scope.realmId));
      const row = await q.executeTakeFirst();
      return row ? toMessage(row) : null;
    },

    async claimDue(options) {
      const limit = Math.max(1, Math.min(1000, Math.trunc(options?.limit ?? 10)));
      const at = deps.clock.now();
      const lease = new Date(at + Math.max(1000, options?.leaseMs ?? 120_000));
      const claimed = await sql<Selectable<MailOutboxTable>>`
        UPDATE mail_outbox AS m
        SET attempts = m.attempts + 1, next_attempt_at = ${lease}::timestamptz
        FROM (
          SELECT o.id FROM mail_outbox AS o
          WHERE o.delivery_status IN ('pending', 'retrying')
            AND coalesce(o.next_attempt_at, o.created_at) <= ${new Date(at)}::timestamptz
          ORDER BY o.seq
          LIMIT ${limit}
          FOR UPDATE OF o SKIP LOCKED
        ) AS due
        WHERE m.id = due.id
        RETURNING m.*`.execute(db);
      return claimed.rows.map(toMessage).sort((a, b) => a.seq - b.seq);
    },

    async markDelivered(id) {
      if (!isUuid(id)) return false;
      const result = await db.updateTable("mail_outbox")
        .set({
          sent_at: nowDate(deps.clock),
          delivery_status: "sent",
          next_attempt_at: null,
          last_error: null,
        })
        .where("id", "=", id).where("delivery_status", "in", ["pending", "retrying"]).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async markDeliveryFailed(id, error, options) {
      if (!isUuid(id)) return null;
      const delays = options?.retryDelaysMs ?? MAIL_RETRY_DELAYS_MS;
      const row = await db.selectFrom("mail_outbox").select(["attempts", "delivery_status"])
        .where("id", "=", id).executeTakeFirst();
      if (!row || (row.delivery_status !== "pending" && row.delivery_status !== "retrying")) return null;
      const attempts = Number(row.attempts);
      const delay = delays[Math.max(0, attempts - 1)];
      const status = delay === undefined ? "dead_letter" : "retrying";
      const result = await db.updateTable("mail_outbox").set({
        delivery_status: status,
        next_attempt_at: delay === undefined ? null : new Date(deps.clock.now() + delay),
        last_error: error.split("\n")[0].slice(0, 500),
      }).where("id", "=", id).where("delivery_status", "in", ["pending", "retrying"])
        .where("attempts", "=", attempts).executeTakeFirst();
      return result.numUpdatedRows > 0n ? status : null;
    },

    async prune(before) {
      const result = await db.deleteFrom("mail_outbox").where("created_at", "<", before).executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async deleteForUser(userId, scope) {
      if (!isUuid(userId)) return 0;
      const addresses = [
        ...new Set(scope.addresses.map((a) => a.trim().toLowerCase()).filter((a) => a !== "")),
      ];
      const result = await db.deleteFrom("mail_outbox").where((eb) =>
        eb.or([
          eb("user_id", "=", userId.toLowerCase()),
          ...(addresses.length === 0 ? [] : [
            eb.and([
              eb("user_id", "is", null),
              eb.or([eb("realm_id", "=", uuidOrZero(scope.realmId)), eb("realm_id", "is", null)]),
              eb(sql`lower(recipient)`, "in", addresses),
            ]),
          ]),
        ])
      ).executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async addressesOf(userId) {
      if (!isUuid(userId)) return [];
      const rows = await db.selectFrom("mail_outbox")
        .select([sql<string>`lower(recipient)`.as("address"), sql<number>`min(seq)`.as("first")])
        .where("user_id", "=", userId.toLowerCase()).groupBy(sql`lower(recipient)`).orderBy("first")
        .execute();
      return rows.map((r) => r.address);
    },
  };
}
