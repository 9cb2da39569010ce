/** Token grants on SQL. */
import type { Clock } from "../../core/clock.ts";
import type { TokenGrant, TokenGrantStore } from "../../core/storage/token-grants.ts";
import type { Executor, TokenGrantsTable } from "../database.ts";

/** The SQL token grant store over a kysely executor (`clock` is unused: callers stamp issuedAt). */
export function createSqlTokenGrantStore(db: Executor, _clock: Clock): TokenGrantStore {
  return {
    async store(grant) {
      const row: TokenGrantsTable = {
        code_hash: grant.codeHash,
        client_id: grant.clientId,
        realm_id: grant.realmId,
        user_id: grant.userId,
        session_id: grant.sessionId,
        scopes: [...grant.scopes],
        issued_at: grant.issuedAt,
        refresh_family_id: grant.refreshFamilyId,
      };
      const { code_hash: _key, ...rest } = row;
      await db.insertInto("token_grants").values(row)
        .onConflict((oc) => oc.column("code_hash").doUpdateSet(rest))
        .execute();
    },

    async findByCodeHash(codeHash) {
      const row = await db.selectFrom("token_grants").selectAll().where("code_hash", "=", codeHash)
        .executeTakeFirst();
      return row ? fromRow(row) : null;
    },

    async deleteByRefreshFamily(refreshFamilyId) {
      const result = await db.deleteFrom("token_grants").where("refresh_family_id", "=", refreshFamilyId)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async sessionIdsOfClient(realmId, clientId) {
      const rows = await db.selectFrom("token_grants").select("session_id").distinct()
        .where("realm_id", "=", realmId).where("client_id", "=", clientId).execute();
      return rows.map((row) => row.session_id);
    },
  };
}

function fromRow(row: TokenGrantsTable): TokenGrant {
  return {
    codeHash: row.code_hash,
    clientId: row.client_id,
    realmId: row.realm_id,
    userId: row.user_id,
    sessionId: row.session_id,
    scopes: [...row.scopes],
    issuedAt: new Date(row.issued_at),
    refreshFamilyId: row.refresh_family_id,
  };
}
