/**
 * Initial access tokens of dynamic client registration (RFC 7591 3, "initial access token"), in
 * the plugin's own table: an administrator mints one (`/svc-admin/oidc/initial-access-tokens`),
 * hands it to a developer, and the developer's software registers clients with it as a bearer
 * token at the registration endpoint (`registration.ts`).
 *
 * - The token (`soi_` and 256 random bits) is shown once; only its SHA-256 is stored, and a
 *   presented token is compared with the stored hash in constant time.
 * - A token belongs to one realm (the provider's), may expire (`expiresAt`) and may be limited
 *   in uses (`maxUses`). A use is taken by one conditional `UPDATE` in the registration's
 *   transaction, so concurrent registrations never take more uses than the limit (Postgres
 *   re-checks the condition on the row it waited for).
 * - Revoking keeps the row (what was registered with it stays traceable) and refuses later uses.
 *
 * @module
 */
import { constantTimeEqual, type PluginSql, sha256Hex } from "../../mod.ts";

/** The prefix of an initial access token. */
export const INITIAL_ACCESS_TOKEN_PREFIX = "soi_";

/** A stored initial access token (never the token itself). */
export interface InitialAccessTokenRecord {
  readonly id: string;
  readonly realmId: string;
  /** A name for people (who it was given to), or null. */
  readonly name: string | null;
  /** How many clients it may register, or null: no limit. */
  readonly maxUses: number | null;
  /** How many it registered. */
  readonly uses: number;
  /** When it stops working, or null: never. */
  readonly expiresAt: Date | null;
  /** When it was revoked, or null. */
  readonly revokedAt: Date | null;
  readonly createdAt: Date;
}

/** What a token's state is at `now`: `active`, `expired`, `spent` (no uses left) or `revoked`. */
export function tokenStatus(
  token: InitialAccessTokenRecord,
  now: number,
): "active" | "expired" | "spent" | "revoked" {
  if (token.revokedAt !== null) return "revoked";
  if (token.expiresAt !== null && token.expiresAt.getTime() <= now) return "expired";
  if (token.maxUses !== null && token.uses >= token.maxUses) return "spent";
  return "active";
}

/** The plugin's tables for dynamic client registration. */
export const REGISTRATION_TABLES = [
  // Rows go with their realm and their client (the metadata holds contacts: personal data), on
  // every path that deletes them: the admin API, RFC 7592, a realm's deletion.
  `CREATE TABLE IF NOT EXISTS oidc_provider_initial_access_tokens (
    id uuid PRIMARY KEY,
    realm_id uuid NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
    token_hash text NOT NULL UNIQUE,
    name text,
    max_uses integer,
    uses integer NOT NULL DEFAULT 0,
    expires_at timestamptz,
    revoked_at timestamptz,
    created_at timestamptz NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS oidc_provider_initial_access_tokens_realm
    ON oidc_provider_initial_access_tokens (realm_id, created_at)`,
  // The metadata a client registered itself with (RFC 7591 names, what svc's client record has
  // no place for included: client_uri, logo_uri, contacts…), the token it used, and the SHA-256
  // of its registration access token (RFC 7592).
  `CREATE TABLE IF NOT EXISTS oidc_provider_registrations (
    client_row_id uuid PRIMARY KEY REFERENCES clients(id) ON DELETE CASCADE,
    realm_id uuid NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
    initial_access_token_id uuid,
    metadata jsonb NOT NULL,
    registration_token_hash text NOT NULL,
    created_at timestamptz NOT NULL
  )`,
];

interface TokenRow {
  id: string;
  realm_id: string;
  token_hash: string;
  name: string | null;
  max_uses: number | null;
  uses: number;
  expires_at: Date | string | null;
  revoked_at: Date | string | null;
  created_at: Date | string;
}

const COLUMNS = "id, realm_id, token_hash, name, max_uses, uses, expires_at, revoked_at, created_at";

function toRecord(row: TokenRow): InitialAccessTokenRecord {
  return {
    id: row.id,
    realmId: row.realm_id,
    name: row.name,
    maxUses: row.max_uses,
    uses: Number(row.uses),
    expiresAt: row.expires_at === null ? null : new Date(row.expires_at),
    revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at),
    createdAt: new Date(row.created_at),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The fields of a new token. */
export interface NewInitialAccessToken {
  readonly name: string | null;
  readonly maxUses: number | null;
  readonly expiresAt: Date | null;
}

/** The initial access tokens of the plugin's table through `sql`. */
export function initialAccessTokenStore(sql: PluginSql) {
  return {
    /** Stores a token by the hash of `token`. */
    async create(
      id: string,
      realmId: string,
      token: string,
      fields: NewInitialAccessToken,
      now: Date,
    ): Promise<InitialAccessTokenRecord> {
      const rows = await sql.query<TokenRow>(
        `INSERT INTO oidc_provider_initial_access_tokens
          (id, realm_id, token_hash, name, max_uses, uses, expires_at, revoked_at, created_at)
         VALUES ($1, $2, $3, $4, $5, 0, $6, NULL, $7) RETURNING ${COLUMNS}`,
        [id, realmId, sha256Hex(token), fields.name, fields.maxUses, fields.expiresAt, now],
      );
      return toRecord(rows[0]);
    },

    /** The realm's tokens, newest first. */
    async list(realmId: string): Promise<InitialAccessTokenRecord[]> {
      const rows = await sql.query<TokenRow>(
        `SELECT ${COLUMNS} FROM oidc_provider_initial_access_tokens WHERE realm_id = $1
         ORDER BY created_at DESC, id`,
        [realmId],
      );
      return rows.map(toRecord);
    },

    /** The realm's token with this id, or null. */
    async get(realmId: string, id: string): Promise<InitialAccessTokenRecord | null> {
      if (!UUID.test(id)) return null;
      const rows = await sql.query<TokenRow>(
        `SELECT ${COLUMNS} FROM oidc_provider_initial_access_tokens WHERE realm_id = $1 AND id = $2`,
        [realmId, id],
      );
      return rows.length === 0 ? null : toRecord(rows[0]);
    },

    /**
     * The realm's token that `presented` is, or null (unknown, another realm's, or not a token):
     * found by its hash, which is then compared with the stored one in constant time.
     */
    async find(realmId: string, presented: string): Promise<InitialAccessTokenRecord | null> {
      if (!presented.startsWith(INITIAL_ACCESS_TOKEN_PREFIX) || presented.length > 200) return null;
      const hash = sha256Hex(presented);
      const rows = await sql.query<TokenRow>(
        `SELECT ${COLUMNS} FROM oidc_provider_initial_access_tokens WHERE token_hash = $1`,
        [hash],
      );
      const row = rows[0];
      if (row === undefined || !constantTimeEqual(row.token_hash, hash)) return null;
      return row.realm_id === realmId.toLowerCase() ? toRecord(row) : null;
    },

    /**
     * Takes one use of the token if it is usable at `now` (not revoked, not expired, uses left):
     * one conditional statement, so concurrent takers never exceed `maxUses`. True when taken.
     */
    async take(id: string, now: Date): Promise<boolean> {
      const rows = await sql.query(
        `UPDATE oidc_provider_initial_access_tokens SET uses = uses + 1
         WHERE id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)
           AND (max_uses IS NULL OR uses < max_uses)
         RETURNING id`,
        [id, now],
      );
      return rows.length === 1;
    },

    /** Revokes the realm's token; answers it as revoked, or null when it was revoked already or is unknown. */
    async revoke(realmId: string, id: string, now: Date): Promise<InitialAccessTokenRecord | null> {
      if (!UUID.test(id)) return null;
      const rows = await sql.query<TokenRow>(
        `UPDATE oidc_provider_initial_access_tokens SET revoked_at = $3
         WHERE realm_id = $1 AND id = $2 AND revoked_at IS NULL RETURNING ${COLUMNS}`,
        [realmId, id, now],
      );
      return rows.length === 0 ? null : toRecord(rows[0]);
    },

    /** Records the metadata a client registered itself with, and the hash of its registration access token. */
    async recordRegistration(
      clientRowId: string,
      realmId: string,
      tokenId: string | null,
      metadata: Record<string, unknown>,
      registrationToken: string,
      now: Date,
    ): Promise<void> {
      await sql.query(
        `INSERT INTO oidc_provider_registrations
          (client_row_id, realm_id, initial_access_token_id, metadata, registration_token_hash, created_at)
         VALUES ($1, $2, $3, $4::jsonb, $5, $6)`,
        [clientRowId, realmId, tokenId, JSON.stringify(metadata), sha256Hex(registrationToken), now],
      );
    },

    /**
     * The registered metadata of the client with this row id when `presented` is its registration
     * access token (compared by hash in constant time), else null.
     */
    async registrationFor(
      clientRowId: string,
      presented: string,
    ): Promise<{ readonly metadata: Record<string, unknown> } | null> {
      const rows = await sql.query<
        { metadata: Record<string, unknown> | string; registration_token_hash: string }
      >(
        `SELECT metadata, registration_token_hash FROM oidc_provider_registrations WHERE client_row_id = $1`,
        [clientRowId],
      );
      const row = rows[0];
      if (row === undefined || !constantTimeEqual(row.registration_token_hash, sha256Hex(presented))) {
        return null;
      }
      return { metadata: typeof row.metadata === "string" ? JSON.parse(row.metadata) : row.metadata };
    },

    /** Replaces the registered metadata of a client. */
    async updateRegistration(clientRowId: string, metadata: Record<string, unknown>): Promise<void> {
      await sql.query(
        `UPDATE oidc_provider_registrations SET metadata = $2::jsonb WHERE client_row_id = $1`,
        [clientRowId, JSON.stringify(metadata)],
      );
    },
  };
}
