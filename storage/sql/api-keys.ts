/**
 * The SQL API-key store. Revocation is `revoked_at = coalesce(revoked_at, now)`, keeping
 * the original time; last-use recording swallows failures.
 *
 * @module
 */
import { type Selectable, sql } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { ConflictError } from "../../core/errors.ts";
import { type RandomSource, randomUuid } from "../../core/random.ts";
import type { ApiKeyRecord, ApiKeyStore } from "../../core/storage/api-keys.ts";
import type { ApiKeysTable, Executor } from "../database.ts";
import { isUuid } from "../../core/ids.ts";

function toRecord(row: Selectable<ApiKeysTable>): ApiKeyRecord {
  return {
    id: row.id,
    realmId: row.realm_id,
    ownerKind: row.owner_kind,
    ownerId: row.owner_id,
    name: row.name,
    tokenHash: row.token_hash,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
  };
}

function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "23505";
}

/** A {@link ApiKeyStore} over the svc schema. */
export function createSqlApiKeyStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): ApiKeyStore {
  const now = () => new Date(deps.clock.now());
  return {
    async create(input) {
      try {
        const row = await db.insertInto("api_keys").values({
          id: randomUuid(deps.random),
          realm_id: input.realmId,
          owner_kind: input.ownerKind,
          owner_id: input.ownerId,
          name: input.name,
          token_hash: input.tokenHash,
          created_at: now(),
          expires_at: input.expiresAt ?? null,
          revoked_at: null,
          last_used_at: null,
        }).returningAll().executeTakeFirstOrThrow();
        return toRecord(row);
      } catch (error) {
        if (isUniqueViolation(error)) throw new ConflictError("Duplicate API key.");
        throw error;
      }
    },

    async get(id) {
      if (!isUuid(id)) return null;
      const row = await db.selectFrom("api_keys").selectAll().where("id", "=", id).executeTakeFirst();
      return row ? toRecord(row) : null;
    },

    async getByTokenHash(tokenHash) {
      const row = await db.selectFrom("api_keys").selectAll().where("token_hash", "=", tokenHash)
        .executeTakeFirst();
      return row ? toRecord(row) : null;
    },

    async listByOwner(ownerKind, ownerId) {
      if (!isUuid(ownerId)) return [];
      const rows = await db.selectFrom("api_keys").selectAll()
        .where("owner_kind", "=", ownerKind).where("owner_id", "=", ownerId)
        .orderBy("created_at", "desc").orderBy("id").execute();
      return rows.map(toRecord);
    },

    async listPage(realmId, filter, page) {
      if (!isUuid(realmId)) return { items: [], total: 0 };
      if (filter.ownerId !== undefined && !isUuid(filter.ownerId)) return { items: [], total: 0 };
      if (filter.memberOfOrgId !== undefined && !isUuid(filter.memberOfOrgId)) return { items: [], total: 0 };
      let query = db.selectFrom("api_keys").where("realm_id", "=", realmId);
      if (filter.ownerKind !== undefined) query = query.where("owner_kind", "=", filter.ownerKind);
      if (filter.ownerId !== undefined) query = query.where("owner_id", "=", filter.ownerId);
      const orgId = filter.memberOfOrgId;
      if (orgId !== undefined) {
        query = query.where("owner_kind", "=", "User").where((eb) =>
          eb.exists(
            eb.selectFrom("org_memberships").select("org_memberships.user_id")
              .whereRef("org_memberships.user_id", "=", "api_keys.owner_id")
              .where("org_memberships.org_id", "=", orgId),
          )
        );
      }
      const [rows, count] = await Promise.all([
        query.selectAll().orderBy("created_at", "desc").orderBy("id").offset(page.offset).limit(page.limit)
          .execute(),
        query.select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirstOrThrow(),
      ]);
      return { items: rows.map(toRecord), total: Number(count.n) };
    },

    async revoke(id) {
      if (!isUuid(id)) return null;
      const row = await db.updateTable("api_keys")
        .set((eb) => ({ revoked_at: sql<Date>`coalesce(${eb.ref("revoked_at")}, ${now()}::timestamptz)` }))
        .where("id", "=", id).returningAll().executeTakeFirst();
      return row ? toRecord(row) : null;
    },

    async revokeAllForOwner(ownerKind, ownerId) {
      if (!isUuid(ownerId)) return 0;
      const result = await db.updateTable("api_keys").set({ revoked_at: now() })
        .where("owner_kind", "=", ownerKind).where("owner_id", "=", ownerId).where("revoked_at", "is", null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async recordUse(id) {
      if (!isUuid(id)) return;
      try {
        await db.updateTable("api_keys").set({ last_used_at: now() }).where("id", "=", id).execute();
      } catch {
        // Best effort (spec 5.5): a failed last-use write never fails the request.
      }
    },

    async delete(id) {
      if (!isUuid(id)) return false;
      const result = await db.deleteFrom("api_keys").where("id", "=", id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}
