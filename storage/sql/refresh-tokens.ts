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
  RefreshGrantGuard,
  RefreshGrantRotation,
  RefreshGuardFailure,
  RefreshRotation,
  RefreshTokenRecord,
  RefreshTokenStore,
} from "../../core/storage/refresh-tokens.ts";
import type { UserStatus } from "../../core/storage/users.ts";
import type { Executor, RefreshTokensTable, SessionsTable } from "../database.ts";
import { endpointPatternMatches } from "./security-events.ts";
import { sessionRecordOf } from "./sessions.ts";
import { atomically } from "./transaction.ts";
import { isUuid } from "../../core/ids.ts";
import { isSecurityLedgerKind } from "../../core/events/catalog.ts";

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
  & {
    user_status: UserStatus | null;
    member: boolean;
    companion: Record<string, unknown> | string | null;
    event_data: Record<string, unknown> | string | null;
    queued: number | string | null;
  };

const IDENTIFIER = /^[a-z][a-z0-9_]{0,62}$/;

function identifier(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`refresh grant guard: not an identifier: ${name}`);
  return name;
}

function json<T>(value: T | string | null): T | null {
  return typeof value === "string" ? JSON.parse(value) as T : value;
}

/** The companion's audience condition (`AND g.<column> = t.audience`), or nothing. */
function companionAudience(guard: RefreshGrantGuard) {
  return guard.companionAudienceColumn === undefined
    ? sql``
    : sql`AND g.${sql.ref(identifier(guard.companionAudienceColumn))} = t.audience`;
}

/**
 * The guard's conditions on the presented token's row (aliased `t`), as one SQL condition: the
 * realm and audience, the companion row, the client's version.
 */
function guardCondition(guard: RefreshGrantGuard | undefined) {
  if (guard === undefined) return sql`true`;
  const parts = [
    sql`t.realm_id = ${guard.realmId}::uuid AND t.audience = ${guard.audience}::text`,
  ];
  if (guard.companionTable !== undefined) {
    parts.push(sql`EXISTS (SELECT 1 FROM ${sql.table(identifier(guard.companionTable))} g
      WHERE g.session_id = t.session_id AND g.realm_id = t.realm_id ${companionAudience(guard)})`);
  }
  if (guard.clientVersion !== undefined) {
    parts.push(sql`EXISTS (SELECT 1 FROM clients c WHERE c.realm_id = t.realm_id
      AND c.client_id = t.audience AND NOT c.suspended AND c.xmin::text = ${guard.clientVersion}::text)`);
  }
  return sql.join(parts, sql` AND `);
}

function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "23505";
}

/** A {@link RefreshTokenStore} over the svc schema. */
export function createSqlRefreshTokenStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): RefreshTokenStore {
  const now = () => new Date(deps.clock.now());
  /** Which condition of the guard fails for the token (read after its rotation did not happen), or null. */
  const refusedBy = async (
    oldHash: string,
    guard: RefreshGrantGuard | undefined,
  ): Promise<RefreshGuardFailure | null> => {
    if (guard === undefined) return null;
    const companion = guard.companionTable === undefined ? sql`true` : sql`EXISTS (
      SELECT 1 FROM ${sql.table(identifier(guard.companionTable))} g
      WHERE g.session_id = t.session_id AND g.realm_id = t.realm_id ${companionAudience(guard)})`;
    const client = guard.clientVersion === undefined ? sql`true` : sql`EXISTS (
      SELECT 1 FROM clients c WHERE c.realm_id = t.realm_id AND c.client_id = t.audience
      AND NOT c.suspended AND c.xmin::text = ${guard.clientVersion}::text)`;
    const checked = await sql<{ audience_ok: boolean; companion_ok: boolean; client_ok: boolean }>`
      SELECT (t.realm_id = ${guard.realmId}::uuid AND t.audience IS NOT DISTINCT FROM ${guard.audience}::text)
          AS audience_ok, ${companion} AS companion_ok, ${client} AS client_ok
      FROM refresh_tokens t WHERE t.token_hash = ${oldHash}`.execute(db);
    const found = checked.rows[0];
    if (found === undefined) return null;
    if (!found.audience_ok) return "audience";
    if (!found.companion_ok) return "companion";
    if (!found.client_ok) return "client";
    return null;
  };
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

    async rotateForGrant(oldHash, next, idleTimeoutMs, guard): Promise<RefreshGrantRotation> {
      const at = now();
      const event = guard?.event;
      if (event !== undefined && isSecurityLedgerKind(event.kind)) {
        throw new Error(`refresh grant guard: ${event.kind} is a security-ledger kind`);
      }
      const companionTable = guard?.companionTable;
      const companionJson = companionTable === undefined ? sql`NULL::json` : sql`(
        SELECT row_to_json(g) FROM ${sql.table(identifier(companionTable))} g
        WHERE g.session_id = i.session_id AND g.realm_id = i.realm_id)`;
      // The event's data (json_build_object keeps the order) and its webhook deliveries.
      let eventCte = sql``;
      let eventColumns = sql`, NULL::json AS event_data, NULL::bigint AS queued`;
      if (event !== undefined) {
        const pairs = [
          ...Object.entries(event.data).map(([key, value]) =>
            sql`${key}::text, ${JSON.stringify(value ?? null)}::json`
          ),
          ...Object.entries(event.companionData ?? {}).map(([key, column]) => {
            if (companionTable === undefined) {
              throw new Error("refresh grant guard: companionData needs a companion");
            }
            return sql`${key}::text, to_json(g.${sql.ref(identifier(column))})`;
          }),
        ];
        const data = pairs.length === 0
          ? sql`json_build_object()`
          : sql`json_build_object(${sql.join(pairs)})`;
        const companionJoin = companionTable === undefined
          ? sql``
          : sql`LEFT JOIN ${
            sql.table(identifier(companionTable))
          } g ON g.session_id = i.session_id AND g.realm_id = i.realm_id`;
        // The webhook body of `webhookBody` (core/events/publisher.ts), built here.
        eventCte = sql`, event AS (
            SELECT ${data} AS data, json_build_object('id', ${event.id}::text, 'kind', ${event.kind}::text,
              'occurredAt', ${new Date(event.occurredAt).toISOString()}::text, 'realmId', i.realm_id,
              'orgId', i.org_id, 'userId', i.user_id, 'data', ${data})::text AS payload,
              i.realm_id, i.org_id
            FROM inserted i JOIN touched s ON true
              JOIN users u ON u.id = i.user_id AND u.status = 'Active' ${companionJoin}
            WHERE s.impersonation_id IS NULL
              AND (s.dpop_jkt IS NULL OR s.dpop_jkt = ${event.sessionKey ?? null}::text)
              AND (i.org_id IS NULL OR EXISTS (
                SELECT 1 FROM org_memberships m WHERE m.org_id = i.org_id AND m.user_id = i.user_id))
          ), queued AS (
            INSERT INTO webhook_deliveries (id, endpoint_id, event_kind, payload, status, attempts,
              next_attempt_at, created_at)
            SELECT gen_random_uuid(), e.id, ${event.kind}::text, ev.payload, 'pending', 0,
              ${at}::timestamptz, ${at}::timestamptz
            FROM event ev JOIN webhook_endpoints e ON e.realm_id = ev.realm_id AND e.enabled
              AND (e.org_id IS NULL OR e.org_id = ev.org_id)
              AND ${endpointPatternMatches(event.kind)}
            RETURNING 1
          )`;
        eventColumns = sql`, (SELECT data FROM event) AS event_data, (SELECT count(*) FROM queued) AS queued`;
      }
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
            UPDATE refresh_tokens t SET used_at = ${at}::timestamptz,
              grace_successor = ${next.sealedSuccessor ?? null}::text
            WHERE t.token_hash = ${oldHash} AND t.used_at IS NULL AND t.revoked_at IS NULL
              AND t.expires_at > ${at}::timestamptz AND ${guardCondition(guard)}
            RETURNING t.*
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
          )${eventCte}
          SELECT i.*, ${sessionColumns}, u.status AS user_status,
            (i.org_id IS NULL OR EXISTS (
              SELECT 1 FROM org_memberships m WHERE m.org_id = i.org_id AND m.user_id = i.user_id
            )) AS member, ${companionJson} AS companion${eventColumns}
          FROM inserted i
          LEFT JOIN touched s ON true
          LEFT JOIN users u ON u.id = i.user_id`.execute(db);
        row = result.rows[0];
      } catch (error) {
        if (isUniqueViolation(error)) throw new ConflictError("Duplicate refresh token.");
        throw error;
      }
      if (row === undefined) {
        const failed = await refusedBy(oldHash, guard);
        return failed !== null ? { outcome: "refused", failed } : await classify(oldHash);
      }
      const session = row.s_id === null ? null : sessionRecordOf(Object.fromEntries(
        SESSION_COLUMNS.map((c) => [c, row[`s_${c}`]]),
      ) as Selectable<SessionsTable>);
      return {
        outcome: "rotated",
        token: toRecord(row),
        session,
        userStatus: row.user_status,
        member: row.member,
        companion: json(row.companion),
        event: row.event_data === null
          ? null
          : { data: json(row.event_data) ?? {}, queued: Number(row.queued ?? 0) },
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
