/**
 * The first-run setup links' tokens on SQL (table `setup_tokens`): only the SHA-256 of a token is
 * stored. A token is consumed by one `DELETE … RETURNING`, so of any number of concurrent
 * redemptions exactly one gets it. Over {@link RawSqlStore}, so that it runs inside the
 * transaction of the storage it comes from.
 *
 * @module
 */
import type { RawSqlStore } from "../../core/storage/raw-sql.ts";
import type { SetupTokenStore } from "../../core/storage/setup-tokens.ts";

/** The {@link SetupTokenStore} over raw SQL (the storage's `rawSql`, bound to its transaction). */
export function createSqlSetupTokenStore(sql: RawSqlStore): SetupTokenStore {
  return {
    async insert(realmId, tokenHash, expiresAt, now) {
      await sql.query("DELETE FROM setup_tokens WHERE expires_at <= $1", [now.toISOString()]);
      await sql.query(
        "INSERT INTO setup_tokens (token_hash, realm_id, expires_at, created_at) VALUES ($1, $2, $3, $4)",
        [tokenHash, realmId, expiresAt.toISOString(), now.toISOString()],
      );
    },
    async find(tokenHash, now) {
      const rows = await sql.query<{ realm_id: string }>(
        "SELECT realm_id FROM setup_tokens WHERE token_hash = $1 AND expires_at > $2",
        [tokenHash, now.toISOString()],
      );
      return rows[0]?.realm_id ?? null;
    },
    async consume(tokenHash, now) {
      const rows = await sql.query<{ realm_id: string }>(
        "DELETE FROM setup_tokens WHERE token_hash = $1 AND expires_at > $2 RETURNING realm_id",
        [tokenHash, now.toISOString()],
      );
      return rows[0]?.realm_id ?? null;
    },
    async clear(realmId) {
      const rows = await sql.query("DELETE FROM setup_tokens WHERE realm_id = $1 RETURNING token_hash", [
        realmId,
      ]);
      return rows.length;
    },
  };
}
