/**
 * The SQL session store. Touch and revoke are single conditional UPDATEs; the idle
 * expiry is extended in SQL as `least(now + idle, absolute_expires_at)`.
 *
 * @module
 */
import { type Selectable, sql } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { ValidationError } from "../../core/errors.ts";
import { type RandomSource, randomUuid } from "../../core/random.ts";
import type { SessionRecord, SessionStore } from "../../core/storage/sessions.ts";
import type { Executor, SessionsTable } from "../database.ts";
import { isUuid } from "../../core/ids.ts";

/** A `sessions` row as a {@link SessionRecord}. */
export function sessionRecordOf(row: Selectable<SessionsTable>): SessionRecord {
  return {
    id: row.id,
    realmId: row.realm_id,
    userId: row.user_id,
    mfa: row.mfa,
    ipAddress: row.ip_address,
    deviceDescription: row.device_description,
    impersonationId: row.impersonation_id,
    createdAt: row.created_at,
    lastSeenAt: row.last_seen_at,
    idleExpiresAt: row.idle_expires_at,
    absoluteExpiresAt: row.absolute_expires_at,
    revokedAt: row.revoked_at,
    dpopJkt: row.dpop_jkt ?? null,
  };
}

/** A {@link SessionStore} over the svc schema. */
export function createSqlSessionStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): SessionStore {
  const now = () => new Date(deps.clock.now());
  return {
    async create(input) {
      if (!(input.idleTimeoutMs > 0) || !(input.absoluteTimeoutMs > 0)) {
        throw new ValidationError("Session timeouts must be positive.");
      }
      const at = deps.clock.now();
      const absolute = at + input.absoluteTimeoutMs;
      const row = await db.insertInto("sessions").values({
        id: randomUuid(deps.random),
        realm_id: input.realmId,
        user_id: input.userId,
        mfa: input.mfa,
        ip_address: input.ipAddress ?? null,
        device_description: input.deviceDescription ?? null,
        impersonation_id: input.impersonationId ?? null,
        created_at: new Date(at),
        last_seen_at: new Date(at),
        idle_expires_at: new Date(Math.min(at + input.idleTimeoutMs, absolute)),
        absolute_expires_at: new Date(absolute),
        revoked_at: null,
      }).returningAll().executeTakeFirstOrThrow();
      return sessionRecordOf(row);
    },

    async createWithRefreshToken(input, refresh) {
      if (!(input.idleTimeoutMs > 0) || !(input.absoluteTimeoutMs > 0)) {
        throw new ValidationError("Session timeouts must be positive.");
      }
      const at = deps.clock.now();
      const absolute = at + input.absoluteTimeoutMs;
      const created = new Date(at);
      // The token row refers to the session inserted beside it: the foreign key is checked at the
      // end of the statement, when both rows exist.
      const { rows } = await sql<Selectable<SessionsTable>>`WITH s AS (
          INSERT INTO sessions (id, realm_id, user_id, mfa, ip_address, device_description,
            impersonation_id, created_at, last_seen_at, idle_expires_at, absolute_expires_at, revoked_at)
          VALUES (${randomUuid(deps.random)}, ${input.realmId}, ${input.userId}, ${input.mfa},
            ${input.ipAddress ?? null}, ${input.deviceDescription ?? null}, ${input.impersonationId ?? null},
            ${created}, ${created}, ${new Date(Math.min(at + input.idleTimeoutMs, absolute))},
            ${new Date(absolute)}, NULL)
          RETURNING *
        ), t AS (
          INSERT INTO refresh_tokens (token_hash, family_id, session_id, user_id, realm_id, org_id, audience,
            parent_hash, created_at, expires_at, used_at, revoked_at)
          SELECT ${refresh.tokenHash}, ${refresh.familyId}, s.id, s.user_id, s.realm_id, ${refresh.orgId},
            ${refresh.audience}, NULL, ${created}, ${new Date(Math.min(at + refresh.ttlMs, absolute))},
            NULL, NULL
          FROM s
          RETURNING 1
        )
        SELECT s.* FROM s, t`.execute(db);
      return sessionRecordOf(rows[0]);
    },

    async get(id) {
      if (!isUuid(id)) return null;
      const row = await db.selectFrom("sessions").selectAll().where("id", "=", id).executeTakeFirst();
      return row ? sessionRecordOf(row) : null;
    },

    async getActive(id) {
      if (!isUuid(id)) return null;
      const at = now();
      const row = await db.selectFrom("sessions").selectAll().where("id", "=", id)
        .where("revoked_at", "is", null).where("idle_expires_at", ">", at).where(
          "absolute_expires_at",
          ">",
          at,
        )
        .executeTakeFirst();
      return row ? sessionRecordOf(row) : null;
    },

    async touch(id, idleTimeoutMs) {
      if (!isUuid(id)) return null;
      const at = now();
      const idle = new Date(at.getTime() + idleTimeoutMs);
      const row = await db.updateTable("sessions")
        .set((eb) => ({
          last_seen_at: at,
          idle_expires_at: sql<Date>`least(${idle}::timestamptz, ${eb.ref("absolute_expires_at")})`,
        }))
        .where("id", "=", id).where("revoked_at", "is", null)
        .where("idle_expires_at", ">", at).where("absolute_expires_at", ">", at)
        .returningAll().executeTakeFirst();
      return row ? sessionRecordOf(row) : null;
    },

    async setMfa(id, mfa) {
      if (!isUuid(id)) return false;
      const at = now();
      const result = await db.updateTable("sessions").set({ mfa })
        .where("id", "=", id).where("revoked_at", "is", null)
        .where("idle_expires_at", ">", at).where("absolute_expires_at", ">", at)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async revoke(id, options) {
      if (!isUuid(id) || (options?.userId !== undefined && !isUuid(options.userId))) return false;
      let query = db.updateTable("sessions").set({ revoked_at: now() })
        .where("id", "=", id).where("revoked_at", "is", null);
      if (options?.userId !== undefined) query = query.where("user_id", "=", options.userId);
      const result = await query.executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async revokeAllForUser(userId, options) {
      if (!isUuid(userId)) return [];
      let query = db.updateTable("sessions").set({ revoked_at: now() })
        .where("user_id", "=", userId).where("revoked_at", "is", null);
      if (options?.exceptId !== undefined && isUuid(options.exceptId)) {
        query = query.where("id", "<>", options.exceptId);
      }
      const rows = await query.returning("id").execute();
      return rows.map((row) => row.id);
    },

    async listEndedSince(since, limit) {
      if (!(limit > 0)) return [];
      const rows = await db.selectFrom("sessions").select(["id", "revoked_at"])
        .where("revoked_at", ">=", since).orderBy("revoked_at", "desc").orderBy("id").limit(limit).execute();
      return rows.map((row) => ({ id: row.id, endedAt: row.revoked_at!.getTime() }));
    },

    async listEndedInOrder(after, until, limit) {
      if (!(limit > 0)) return [];
      const since = new Date(after.endedAt);
      const cursor = after.id;
      let query = db.selectFrom("sessions").select(["id", "revoked_at"])
        .where("revoked_at", "<=", until);
      query = cursor !== undefined && isUuid(cursor)
        ? query.where((eb) =>
          eb.or([
            eb("revoked_at", ">", since),
            eb.and([eb("revoked_at", "=", since), eb("id", ">", cursor)]),
          ])
        )
        : query.where("revoked_at", ">=", since);
      const rows = await query.orderBy("revoked_at").orderBy("id").limit(limit).execute();
      return rows.map((row) => ({ id: row.id, endedAt: row.revoked_at!.getTime() }));
    },

    async listActiveForUser(userId, options) {
      if (!isUuid(userId)) return [];
      const at = now();
      let query = db.selectFrom("sessions").selectAll().where("user_id", "=", userId)
        .where("revoked_at", "is", null).where("idle_expires_at", ">", at).where(
          "absolute_expires_at",
          ">",
          at,
        );
      const context = options?.orgContext;
      if (context !== undefined) {
        query = query.where((eb) => {
          const tokens = (orgId: string | null) =>
            eb.selectFrom("refresh_tokens").select("refresh_tokens.session_id")
              .whereRef("refresh_tokens.session_id", "=", "sessions.id")
              .where("refresh_tokens.org_id", orgId === null ? "is not" : "=", orgId);
          return context.withoutOrg
            ? eb.or([eb.exists(tokens(context.orgId)), eb.not(eb.exists(tokens(null)))])
            : eb.exists(tokens(context.orgId));
        });
      }
      const rows = await query.orderBy("last_seen_at", "desc").orderBy("id").execute();
      return rows.map(sessionRecordOf);
    },

    async pruneExpired(before) {
      const result = await db.deleteFrom("sessions").where("absolute_expires_at", "<", before)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
