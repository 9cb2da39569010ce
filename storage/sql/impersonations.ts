/**
 * Impersonation records on SQL. "One current impersonation per actor" cannot be
 * a unique index (expiry is a read-side filter, never written), so `create`
 * serializes starts per actor with a transaction-scoped advisory lock, then
 * checks and inserts inside that transaction (READ COMMITTED: the check runs
 * after the lock is granted, so it sees what the previous holder committed).
 */
import type { Selectable } from "kysely";
import { type Clock, nowDate } from "../../core/clock.ts";
import { ConflictError } from "../../core/errors.ts";
import type {
  Impersonation,
  ImpersonationConsentSetting,
  ImpersonationStore,
} from "../../core/storage/impersonations.ts";
import type { Executor, ImpersonationConsentTable, ImpersonationsTable } from "../database.ts";
import { atomically } from "./transaction.ts";
import { LockClass, lockForTransaction } from "./advisory-locks.ts";

/** The SQL impersonation store over a kysely executor; time comes from `clock`. */
export function createSqlImpersonationStore(db: Executor, clock: Clock): ImpersonationStore {
  return {
    create(input) {
      return atomically(db, async (trx) => {
        const now = nowDate(clock);
        await lockForTransaction(trx, LockClass.impersonation, input.actorId);
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
          duration_seconds: input.durationSeconds ??
            Math.max(1, Math.round((input.expiresAt.getTime() - now.getTime()) / 1000)),
          token_issued_at: input.consentRequired ? null : now,
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

    async claimToken(id) {
      const now = nowDate(clock);
      const row = await db.updateTable("impersonations")
        .set({ token_issued_at: now })
        .where("id", "=", id)
        .where("status", "=", "Active")
        .where("token_issued_at", "is", null)
        .where("expires_at", ">", now)
        .returningAll()
        .executeTakeFirst();
      return row ? fromRow(row) : null;
    },

    async sessionIds(id) {
      const rows = await db.selectFrom("sessions").select("id").where("impersonation_id", "=", id).execute();
      return rows.map((row) => row.id);
    },

    async list(realmId, filter = {}) {
      const now = nowDate(clock);
      let query = db.selectFrom("impersonations").where("realm_id", "=", realmId);
      if (filter.targetId !== undefined) query = query.where("target_id", "=", filter.targetId);
      if (filter.targetMemberOf !== undefined) {
        const orgId = filter.targetMemberOf;
        query = query.where((eb) =>
          eb.exists(
            eb.selectFrom("org_memberships").select("org_memberships.user_id")
              .whereRef("org_memberships.user_id", "=", "impersonations.target_id")
              .where("org_memberships.org_id", "=", orgId),
          )
        );
      }
      if (filter.state === "current") {
        query = query.where("status", "<>", "Ended").where("expires_at", ">", now);
      } else if (filter.state === "past") {
        query = query.where((eb) => eb.or([eb("status", "=", "Ended"), eb("expires_at", "<=", now)]));
      }
      const [rows, count] = await Promise.all([
        query.selectAll().orderBy("created_at", "desc").orderBy("id", "desc")
          .offset(filter.offset ?? 0).limit(filter.limit ?? 50).execute(),
        query.select((eb) => eb.fn.countAll<string | number>().as("n")).executeTakeFirstOrThrow(),
      ]);
      return { items: rows.map(fromRow), total: Number(count.n) };
    },

    async consentSetting(realmId, orgId) {
      const row = await db.selectFrom("impersonation_consent").selectAll()
        .where("scope_id", "=", orgId ?? realmId)
        .where("realm_id", "=", realmId)
        .executeTakeFirst();
      return row ? consentFromRow(row) : { realmId, orgId, consentRequired: false, updatedAt: null };
    },

    setConsentSetting(realmId, orgId, consentRequired) {
      return atomically(db, async (trx) => {
        const scopeId = orgId ?? realmId;
        const previous = await trx.selectFrom("impersonation_consent").selectAll()
          .where("scope_id", "=", scopeId).forUpdate().executeTakeFirst();
        const before = previous && previous.realm_id === realmId
          ? consentFromRow(previous)
          : { realmId, orgId, consentRequired: false, updatedAt: null };
        const now = nowDate(clock);
        const row = await trx.insertInto("impersonation_consent")
          .values({
            scope_id: scopeId,
            realm_id: realmId,
            org_id: orgId,
            consent_required: consentRequired,
            updated_at: now,
          })
          .onConflict((oc) =>
            oc.column("scope_id").doUpdateSet({ consent_required: consentRequired, updated_at: now })
          )
          .returningAll()
          .executeTakeFirstOrThrow();
        return { before, after: consentFromRow(row) };
      });
    },

    async consentRequiredFor(realmId, orgIds) {
      const row = await db.selectFrom("impersonation_consent").select("scope_id")
        .where("realm_id", "=", realmId)
        .where("consent_required", "=", true)
        .where("scope_id", "in", [realmId, ...orgIds])
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },
  };
}

function consentFromRow(row: ImpersonationConsentTable): ImpersonationConsentSetting {
  return {
    realmId: row.realm_id,
    orgId: row.org_id,
    consentRequired: row.consent_required,
    updatedAt: new Date(row.updated_at),
  };
}

function fromRow(row: Selectable<ImpersonationsTable>): Impersonation {
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
    durationSeconds: row.duration_seconds,
    tokenIssuedAt: row.token_issued_at === null ? null : new Date(row.token_issued_at),
  };
}
