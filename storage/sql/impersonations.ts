/**
 * Impersonation records on SQL. "One current impersonation per actor" cannot be
 * a unique index (expiry is a read-side filter, never written), so `create`
 * serializes starts per actor with a transaction-scoped advisory lock, then
 * checks and inserts inside that transaction (READ COMMITTED: the check runs
 * after the lock is granted, so it sees what the previous holder committed).
 */
import { sql } from "kysely";
import { type Clock, nowDate } from "../../core/clock.ts";
import { ConflictError } from "../../core/errors.ts";
import type { Impersonation, ImpersonationStore } from "../contract/impersonations.ts";
import type { Executor, ImpersonationsTable } from "../database.ts";
import { atomically } from "./transaction.ts";

/** Advisory lock class (first key of the two-key form) for per-actor impersonation starts. */
const IMPERSONATION_LOCK_CLASS = 7_361_002;

/** The SQL impersonation store over a kysely executor; time comes from `clock`. */
export function createSqlImpersonationStore(db: Executor, clock: Clock): ImpersonationStore {
  return {
    create(input) {
      return atomically(db, async (trx) => {
        const now = nowDate(clock);
        await sql`SELECT pg_advisory_xact_lock(${IMPERSONATION_LOCK_CLASS}::int4, hashtext(${input.actorId}::text))`
          .execute(trx);
        const existing = await trx.selectFrom("impersonations").select("id")
          .where("actor_id", "=", input.actorId)
          .where("status", "<>", "Ended")
          .where("expires_at", ">", now)
          .executeTakeFirst();
        if (existing) {
          throw new ConflictError("The actor already has a current impersonation.", {
            impersonationId: existing.id,
          });
        }
        const row = await trx.insertInto("impersonations").values({
          id: input.id,
          realm_id: input.realmId,
          actor_id: input.actorId,
          target_id: input.targetId,
          org_id: input.orgId ?? null,
          reason: input.reason,
          status: input.consentRequired ? "PendingConsent" : "Active",
          consent_required: input.consentRequired,
          created_at: now,
          started_at: input.consentRequired ? null : now,
          expires_at: input.expiresAt,
          ended_at: null,
        }).returningAll().executeTakeFirstOrThrow();
        return fromRow(row);
      });
    },

    async get(id) {
      const row = await db.selectFrom("impersonations").selectAll().where("id", "=", id).executeTakeFirst();
      return row ? fromRow(row) : null;
    },

    async current(actorId) {
      const row = await db.selectFrom("impersonations").selectAll()
        .where("actor_id", "=", actorId)
        .where("status", "<>", "Ended")
        .where("expires_at", ">", nowDate(clock))
        .orderBy("created_at", "desc")
        .limit(1)
        .executeTakeFirst();
      return row ? fromRow(row) : null;
    },

    async approveConsent(id, options = {}) {
      const now = nowDate(clock);
      const row = await db.updateTable("impersonations")
        .set({
          status: "Active",
          started_at: now,
          ...(options.expiresAt ? { expires_at: options.expiresAt } : {}),
        })
        .where("id", "=", id)
        .where("status", "=", "PendingConsent")
        .where("expires_at", ">", now)
        .returningAll()
        .executeTakeFirst();
      return row ? fromRow(row) : null;
    },

    async end(id) {
      const row = await db.updateTable("impersonations")
        .set({ status: "Ended", ended_at: nowDate(clock) })
        .where("id", "=", id)
        .where("status", "<>", "Ended")
        .returningAll()
        .executeTakeFirst();
      return row ? fromRow(row) : null;
    },
  };
}

function fromRow(row: ImpersonationsTable): Impersonation {
  return {
    id: row.id,
    realmId: row.realm_id,
    actorId: row.actor_id,
    targetId: row.target_id,
    orgId: row.org_id,
    reason: row.reason,
    status: row.status,
    consentRequired: row.consent_required,
    createdAt: new Date(row.created_at),
    startedAt: row.started_at === null ? null : new Date(row.started_at),
    expiresAt: new Date(row.expires_at),
    endedAt: row.ended_at === null ? null : new Date(row.ended_at),
  };
}
