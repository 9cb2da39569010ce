/**
 * The SQL refresh-token store. Rotation marks the presented token used with one
 * conditional UPDATE (`… WHERE used_at IS NULL AND revoked_at IS NULL AND expires_at >
 * now`) and inserts the successor in the same transaction. Concurrent rotations of one
 * token serialize on its row lock: one wins, the rest see it used and report reuse.
 *
 * @module
 */
import { type Selectable, sql } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { ConflictError } from "../../core/errors.ts";
import type { RandomSource } from "../../core/random.ts";
import type {
  RefreshGrantRotation,
  RefreshRotation,
  RefreshTokenRecord,
  RefreshTokenStore,
} from "../../core/storage/refresh-tokens.ts";
import type { UserStatus } from "../../core/storage/users.ts";
import type { Executor, RefreshTokensTable, SessionsTable } from "../database.ts";
import { sessionRecordOf } from "./sessions.ts";
import { atomically } from "./transaction.ts";
import { isUuid } from "../../core/ids.ts";

function toRecord(row: Selectable<RefreshTokensTable>): RefreshTokenRecord {
  return {
    tokenHash: row.token_hash,
    familyId: row.family_id,
    sessionId: row.session_id,
    userId: row.user_id,
    realmId: row.realm_id,
    orgId: row.org_id,
    audience: row.audience,
    parentHash: row.parent_hash,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    usedAt: row.used_at,
    revokedAt: row.revoked_at,
    graceSuccessor: row.grace_successor ?? null,
  };
}

/** The session columns of a refresh grant's row, prefixed `s_` (null when the session had ended). */
const SESSION_COLUMNS = [
  "id",
  "realm_id",
  "user_id",
  "mfa",
  "ip_address",
  "device_description",
  "impersonation_id",
  "created_at",
  "last_seen_at",
  "idle_expires_at",
  "absolute_expires_at",
  "revoked_at",
  "dpop_jkt",
] as const satisfies readonly (keyof SessionsTable)[];

/** One row of a refresh grant's statement: the successor token, the touched session, the user. */
type GrantRow =
  & Selectable<RefreshTokensTable>
  & { [K in (typeof SESSION_COLUMNS)[number] as `s_${K}`]: Selectable<SessionsTable>[K] | null }
  & { user_status: UserStatus | null; member: boolean };

function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "23505";
}

/** A {@link RefreshTokenStore} over the svc schema. */
export function createSqlRefreshTokenStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): RefreshTokenStore {
  const now = () => new Date(deps.clock.now());
  /** Why a token did not rotate (a fresh read after the conditional update found nothing). */
  const classify = async (
    oldHash: string,
  ): Promise<Exclude<RefreshRotation, { readonly outcome: "rotated" }>> => {
    const row = await db.selectFrom("refresh_tokens").selectAll().where("token_hash", "=", oldHash)
      .executeTakeFirst();
    if (!row) return { outcome: "unknown" };
    const previous = toRecord(row);
    if (row.used_at !== null) return { outcome: "reused", previous };
    if (row.revoked_at !== null) return { outcome: "revoked", previous };
    return { outcome: "expired", previous };
  };
  return {
    async insert(input) {
      try {
        const row = await db.insertInto("refresh_tokens").values({
          token_hash: input.tokenHash,
          family_id: input.familyId,
          session_id: input.sessionId,
          user_id: input.userId,
          realm_id: input.realmId,
          org_id: input.orgId ?? null,
          audience: input.audience ?? null,
          parent_hash: null,
          created_at: now(),
          expires_at: input.expiresAt,
          used_at: null,
          revoked_at: null,
        }).returningAll().executeTakeFirstOrThrow();
        return toRecord(row);
      } catch (error) {
        if (isUniqueViolation(error)) throw new ConflictError("Duplicate refresh token.");
        throw error;
      }
    },

    async get(tokenHash) {
      const row = await db.selectFrom("refresh_tokens").selectAll().where("token_hash", "=", tokenHash)
        .executeTakeFirst();
      return row ? toRecord(row) : null;
    },

    async rotate(oldHash, next): Promise<RefreshRotation> {
      const at = now();
      const rotated = await atomically(db, async (trx) => {
        const previous = await trx.updateTable("refresh_tokens").set({ used_at: at })
          .where("token_hash", "=", oldHash)
          .where("used_at", "is", null).where("revoked_at", "is", null).where("expires_at", ">", at)
          .returningAll().executeTakeFirst();
        if (!previous) return null;
        try {
          const token = await trx.insertInto("refresh_tokens").values({
            token_hash: next.tokenHash,
            family_id: previous.family_id,
            session_id: previous.session_id,
            user_id: previous.user_id,
            realm_id: previous.realm_id,
            org_id: next.orgId === undefined ? previous.org_id : next.orgId,
            audience: next.audience === undefined ? previous.audience : next.audience,
            parent_hash: previous.token_hash,
            created_at: at,
            expires_at: next.expiresAt,
            used_at: null,
            revoked_at: null,
          }).returningAll().executeTakeFirstOrThrow();
          return { outcome: "rotated" as const, previous: toRecord(previous), token: toRecord(token) };
        } catch (error) {
          if (isUniqueViolation(error)) throw new ConflictError("Duplicate refresh token.");
          throw error;
        }
      });
      if (rotated) return rotated;
      return await classify(oldHash);
    },

    async rotateForGrant(oldHash, next, idleTimeoutMs): Promise<RefreshGrantRotation> {
      const at = now();
      const idle = new Date(at.getTime() + idleTimeoutMs);
      const orgId = next.orgId === undefined ? sql.ref("org_id") : sql`${next.orgId}::uuid`;
      const audience = next.audience === undefined ? sql.ref("audience") : sql`${next.audience}::text`;
      const sessionColumns = sql.join(
        SESSION_COLUMNS.map((c) => sql`s.${sql.ref(c)} AS ${sql.ref(`s_${c}`)}`),
      );
      let row: GrantRow | undefined;
      try {
        // Data-modifying CTEs: one statement, so one round trip and atomic without BEGIN/COMMIT.
        // The conditional UPDATE is the single-winner gate, as in `rotate`; when it matches
        // nothing, neither does anything that follows it.
        const result = await sql<GrantRow>`
          WITH rotated AS (
            UPDATE refresh_tokens SET used_at = ${at}::timestamptz,
              grace_successor = ${next.sealedSuccessor ?? null}::text
            WHERE token_hash = ${oldHash} AND used_at IS NULL AND revoked_at IS NULL
              AND expires_at > ${at}::timestamptz
            RETURNING *
          ), inserted AS (
            INSERT INTO refresh_tokens (token_hash, family_id, session_id, user_id, realm_id, org_id,
              audience, parent_hash, created_at, expires_at, used_at, revoked_at)
            SELECT ${next.tokenHash}::text, family_id, session_id, user_id, realm_id, ${orgId}, ${audience},
              token_hash, ${at}::timestamptz, ${next.expiresAt}::timestamptz, NULL, NULL
            FROM rotated
            RETURNING *
          ), touched AS (
            UPDATE sessions SET last_seen_at = ${at}::timestamptz,
              idle_expires_at = least(${idle}::timestamptz, absolute_expires_at)
            WHERE id = (SELECT session_id FROM rotated) AND revoked_at IS NULL
              AND idle_expires_at > ${at}::timestamptz AND absolute_expires_at > ${at}::timestamptz
            RETURNING *
          )
          SELECT i.*, ${sessionColumns}, u.status AS user_status,
            (i.org_id IS NULL OR EXISTS (
              SELECT 1 FROM org_memberships m WHERE m.org_id = i.org_id AND m.user_id = i.user_id
            )) AS member
          FROM inserted i
          LEFT JOIN touched s ON true
          LEFT JOIN users u ON u.id = i.user_id`.execute(db);
        row = result.rows[0];
      } catch (error) {
        if (isUniqueViolation(error)) throw new ConflictError("Duplicate refresh token.");
        throw error;
      }
      if (row === undefined) return await classify(oldHash);
      const session = row.s_id === null ? null : sessionRecordOf(Object.fromEntries(
        SESSION_COLUMNS.map((c) => [c, row[`s_${c}`]]),
      ) as Selectable<SessionsTable>);
      return {
        outcome: "rotated",
        token: toRecord(row),
        session,
        userStatus: row.user_status,
        member: row.member,
      };
    },

    async revokeFamily(familyId) {
      if (!isUuid(familyId)) return 0;
      const result = await db.updateTable("refresh_tokens").set({ revoked_at: now() })
        .where("family_id", "=", familyId).where("revoked_at", "is", null).executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async revokeForSession(sessionId) {
      if (!isUuid(sessionId)) return 0;
      const result = await db.updateTable("refresh_tokens").set({ revoked_at: now() })
        .where("session_id", "=", sessionId).where("revoked_at", "is", null).executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async revokeAllForUser(userId) {
      if (!isUuid(userId)) return 0;
      const result = await db.updateTable("refresh_tokens").set({ revoked_at: now() })
        .where("user_id", "=", userId).where("revoked_at", "is", null).executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async pruneExpired(before) {
      const result = await db.deleteFrom("refresh_tokens").where("expires_at", "<", before)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
