/**
 * The SCIM plugin's tables: connections (per organization, bearer token stored as its SHA-256,
 * the previous one accepted until its overlap ends), the users and groups each connection
 * provisioned (their SCIM representation, version and the columns filters use), and the
 * provisioning log (the last {@link LOG_KEEP} requests per connection).
 *
 * @module
 */
import type { PluginSql } from "../../mod.ts";

/** How many provisioning log rows a connection keeps. */
export const LOG_KEEP = 200;

/** The plugin's tables. */
export const TABLES: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS scim_connections (
    id uuid PRIMARY KEY,
    realm_id uuid NOT NULL,
    org_id uuid NOT NULL,
    display_name text NOT NULL,
    token_hash text NOT NULL,
    previous_token_hash text,
    previous_token_expires_at timestamptz,
    delete_mode text NOT NULL DEFAULT 'remove_membership',
    group_roles jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    token_rotated_at timestamptz NOT NULL
  )`,
  "CREATE UNIQUE INDEX IF NOT EXISTS scim_connections_token ON scim_connections (token_hash)",
  "CREATE INDEX IF NOT EXISTS scim_connections_previous_token ON scim_connections (previous_token_hash)",
  "CREATE INDEX IF NOT EXISTS scim_connections_org ON scim_connections (realm_id, org_id)",
  `CREATE TABLE IF NOT EXISTS scim_users (
    connection_id uuid NOT NULL REFERENCES scim_connections(id) ON DELETE CASCADE,
    user_id uuid NOT NULL,
    user_name text NOT NULL,
    external_id text,
    display_name text,
    active boolean NOT NULL,
    resource jsonb NOT NULL,
    version integer NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (connection_id, user_id)
  )`,
  "CREATE UNIQUE INDEX IF NOT EXISTS scim_users_user_name ON scim_users (connection_id, lower(user_name))",
  "CREATE INDEX IF NOT EXISTS scim_users_order ON scim_users (connection_id, created_at, user_id)",
  "CREATE INDEX IF NOT EXISTS scim_users_by_user ON scim_users (user_id)",
  `CREATE TABLE IF NOT EXISTS scim_groups (
    connection_id uuid NOT NULL REFERENCES scim_connections(id) ON DELETE CASCADE,
    group_id uuid NOT NULL,
    display_name text NOT NULL,
    external_id text,
    resource jsonb NOT NULL,
    version integer NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (connection_id, group_id)
  )`,
  "CREATE UNIQUE INDEX IF NOT EXISTS scim_groups_display_name ON scim_groups (connection_id, lower(display_name))",
  "CREATE INDEX IF NOT EXISTS scim_groups_order ON scim_groups (connection_id, created_at, group_id)",
  // Users a connection of the organization deprovisioned (membership removed, account kept): the
  // organization's directory may provision them again while they belong to no organization.
  `CREATE TABLE IF NOT EXISTS scim_departed (
    org_id uuid NOT NULL,
    user_id uuid NOT NULL,
    departed_at timestamptz NOT NULL,
    PRIMARY KEY (org_id, user_id)
  )`,
  `CREATE TABLE IF NOT EXISTS scim_log (
    connection_id uuid NOT NULL REFERENCES scim_connections(id) ON DELETE CASCADE,
    seq bigint NOT NULL,
    at timestamptz NOT NULL,
    method text NOT NULL,
    path text NOT NULL,
    status integer NOT NULL,
    scim_type text,
    detail text,
    resource_id text,
    PRIMARY KEY (connection_id, seq)
  )`,
];

/** What DELETE /Users does. */
export type DeleteMode = "remove_membership" | "erase";

/** A connection. */
export interface ScimConnection {
  readonly id: string;
  readonly realmId: string;
  readonly orgId: string;
  readonly displayName: string;
  readonly deleteMode: DeleteMode;
  /** SCIM group displayName → ids of the organization's roles its svc group is assigned. */
  readonly groupRoles: Readonly<Record<string, readonly string[]>>;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly tokenRotatedAt: Date;
  /** Until when the token before the last rotation is still accepted (null: not at all). */
  readonly previousTokenExpiresAt: Date | null;
}

interface ConnectionRow {
  id: string;
  realm_id: string;
  org_id: string;
  display_name: string;
  delete_mode: string;
  group_roles: unknown;
  created_at: Date | string;
  updated_at: Date | string;
  token_rotated_at: Date | string;
  previous_token_expires_at: Date | string | null;
}

const date = (d: Date | string): Date => d instanceof Date ? d : new Date(d);
const json = (v: unknown): unknown => typeof v === "string" ? JSON.parse(v) : v;

function connectionOf(row: ConnectionRow): ScimConnection {
  return {
    id: row.id,
    realmId: row.realm_id,
    orgId: row.org_id,
    displayName: row.display_name,
    deleteMode: row.delete_mode === "erase" ? "erase" : "remove_membership",
    groupRoles: json(row.group_roles) as Record<string, string[]>,
    createdAt: date(row.created_at),
    updatedAt: date(row.updated_at),
    tokenRotatedAt: date(row.token_rotated_at),
    previousTokenExpiresAt: row.previous_token_expires_at === null
      ? null
      : date(row.previous_token_expires_at),
  };
}

const CONNECTION_COLUMNS =
  "id, realm_id, org_id, display_name, delete_mode, group_roles, created_at, updated_at, token_rotated_at, previous_token_expires_at";

/** A provisioning log row. */
export interface LogEntry {
  readonly at: Date;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly scimType: string | null;
  readonly detail: string | null;
  readonly resourceId: string | null;
}

/** The connections' store on a plugin SQL (a transaction's, or the pool's). */
export function connectionStore(db: PluginSql) {
  return {
    async create(input: {
      id: string;
      realmId: string;
      orgId: string;
      displayName: string;
      tokenHash: string;
      deleteMode: DeleteMode;
      groupRoles: Record<string, readonly string[]>;
      now: Date;
    }): Promise<ScimConnection> {
      const rows = await db.query<ConnectionRow>(
        `INSERT INTO scim_connections (id, realm_id, org_id, display_name, token_hash, delete_mode, group_roles,
           created_at, updated_at, token_rotated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $8) RETURNING ${CONNECTION_COLUMNS}`,
        [
          input.id,
          input.realmId,
          input.orgId,
          input.displayName,
          input.tokenHash,
          input.deleteMode,
          JSON.stringify(input.groupRoles),
          input.now,
        ],
      );
      return connectionOf(rows[0]);
    },
    async get(id: string): Promise<ScimConnection | null> {
      const rows = await db.query<ConnectionRow>(
        `SELECT ${CONNECTION_COLUMNS} FROM scim_connections WHERE id = $1`,
        [
          id,
        ],
      );
      return rows.length === 0 ? null : connectionOf(rows[0]);
    },
    async list(realmId: string, orgId: string | null): Promise<ScimConnection[]> {
      const rows = await db.query<ConnectionRow>(
        `SELECT ${CONNECTION_COLUMNS} FROM scim_connections WHERE realm_id = $1 AND ($2::uuid IS NULL OR org_id = $2)
         ORDER BY created_at, id`,
        [realmId, orgId],
      );
      return rows.map(connectionOf);
    },
    /**
     * The connection whose current token hashes to `hash`, or whose previous one does and is
     * still in its overlap at `now`.
     */
    async byTokenHash(
      hash: string,
      now: Date,
    ): Promise<{ connection: ScimConnection; storedHash: string } | null> {
      const rows = await db.query<ConnectionRow & { stored: string }>(
        `SELECT ${CONNECTION_COLUMNS}, token_hash AS stored FROM scim_connections WHERE token_hash = $1
         UNION ALL
         SELECT ${CONNECTION_COLUMNS}, previous_token_hash AS stored FROM scim_connections
          WHERE previous_token_hash = $1 AND previous_token_expires_at > $2
         LIMIT 1`,
        [hash, now],
      );
      return rows.length === 0 ? null : { connection: connectionOf(rows[0]), storedHash: rows[0].stored };
    },
    async update(
      id: string,
      changes: {
        displayName?: string;
        deleteMode?: DeleteMode;
        groupRoles?: Record<string, readonly string[]>;
      },
      now: Date,
    ): Promise<ScimConnection | null> {
      const rows = await db.query<ConnectionRow>(
        `UPDATE scim_connections SET display_name = COALESCE($2, display_name), delete_mode = COALESCE($3, delete_mode),
           group_roles = COALESCE($4::jsonb, group_roles), updated_at = $5
         WHERE id = $1 RETURNING ${CONNECTION_COLUMNS}`,
        [
          id,
          changes.displayName ?? null,
          changes.deleteMode ?? null,
          changes.groupRoles === undefined ? null : JSON.stringify(changes.groupRoles),
          now,
        ],
      );
      return rows.length === 0 ? null : connectionOf(rows[0]);
    },
    /** Replaces the token; the old one stays valid until `overlapUntil` (null: not at all). */
    async rotate(
      id: string,
      tokenHash: string,
      overlapUntil: Date | null,
      now: Date,
    ): Promise<ScimConnection | null> {
      const rows = await db.query<ConnectionRow>(
        `UPDATE scim_connections SET previous_token_hash = CASE WHEN $3::timestamptz IS NULL THEN NULL ELSE token_hash END,
           previous_token_expires_at = $3, token_hash = $2, token_rotated_at = $4, updated_at = $4
         WHERE id = $1 RETURNING ${CONNECTION_COLUMNS}`,
        [id, tokenHash, overlapUntil, now],
      );
      return rows.length === 0 ? null : connectionOf(rows[0]);
    },
    async delete(id: string): Promise<boolean> {
      const rows = await db.query(`DELETE FROM scim_connections WHERE id = $1 RETURNING id`, [id]);
      return rows.length > 0;
    },
    /** Appends a log row and keeps the last {@link LOG_KEEP}. */
    async log(connectionId: string, entry: LogEntry): Promise<void> {
      await db.query(
        `INSERT INTO scim_log (connection_id, seq, at, method, path, status, scim_type, detail, resource_id)
         VALUES ($1, COALESCE((SELECT max(seq) FROM scim_log WHERE connection_id = $1), 0) + 1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT DO NOTHING`,
        [
          connectionId,
          entry.at,
          entry.method,
          entry.path.slice(0, 300),
          entry.status,
          entry.scimType,
          entry.detail?.slice(0, 300) ?? null,
          entry.resourceId,
        ],
      );
      await db.query(
        `DELETE FROM scim_log WHERE connection_id = $1 AND seq <= COALESCE((SELECT max(seq) FROM scim_log WHERE connection_id = $1), 0) - $2`,
        [connectionId, LOG_KEEP],
      );
    },
    async readLog(connectionId: string, limit: number): Promise<LogEntry[]> {
      const rows = await db.query<{
        at: Date | string;
        method: string;
        path: string;
        status: number;
        scim_type: string | null;
        detail: string | null;
        resource_id: string | null;
      }>(
        `SELECT at, method, path, status, scim_type, detail, resource_id FROM scim_log WHERE connection_id = $1
         ORDER BY seq DESC LIMIT $2`,
        [connectionId, limit],
      );
      return rows.map((r) => ({
        at: date(r.at),
        method: r.method,
        path: r.path,
        status: Number(r.status),
        scimType: r.scim_type,
        detail: r.detail,
        resourceId: r.resource_id,
      }));
    },
  };
}

/** A provisioned user or group row. */
export interface ResourceRow {
  /** The svc user's or group's id (the SCIM `id`). */
  readonly id: string;
  readonly resource: Record<string, unknown>;
  readonly version: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

interface RawResourceRow {
  id: string;
  resource: unknown;
  version: number;
  created_at: Date | string;
  updated_at: Date | string;
}

export function resourceRowOf(row: RawResourceRow): ResourceRow {
  return {
    id: row.id,
    resource: json(row.resource) as Record<string, unknown>,
    version: Number(row.version),
    createdAt: date(row.created_at),
    updatedAt: date(row.updated_at),
  };
}
