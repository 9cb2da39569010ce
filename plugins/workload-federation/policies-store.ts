/**
 * Trust policies of workload federation, in the plugin's own table: which external issuer's
 * tokens (checked against its JWKS, audience and required claim values) are exchanged for which
 * service account's access token.
 *
 * @module
 */
import type { PluginSql } from "../../mod.ts";

/** A trust policy. */
export interface TrustPolicy {
  readonly id: string;
  readonly realmId: string;
  /** Unique in the realm. */
  readonly name: string;
  /** The external tokens' `iss`, exactly. */
  readonly issuer: string;
  /** Where the issuer publishes its keys (or null with static `jwks`). */
  readonly jwksUri: string | null;
  /** Static public keys (or null with `jwksUri`). */
  readonly jwks: { readonly keys: readonly Record<string, unknown>[] } | null;
  /** The `aud` the external token must carry. */
  readonly audience: string;
  /** Claims the external token must carry with exactly these string values. */
  readonly requiredClaims: Readonly<Record<string, string>>;
  /** The service account whose access token an exchange issues. */
  readonly serviceAccountId: string;
  readonly enabled: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** The writable fields of a policy. */
export type TrustPolicyFields = Omit<TrustPolicy, "id" | "realmId" | "createdAt" | "updatedAt">;

/** The parameters `$1`…`$11` of a policy row: id, realm, the fields, then the time of the write. */
function rowParams(id: string, realmId: string, fields: TrustPolicyFields, now: Date): unknown[] {
  return [
    id,
    realmId,
    fields.name,
    fields.issuer,
    fields.jwksUri,
    fields.jwks === null ? null : JSON.stringify(fields.jwks),
    fields.audience,
    JSON.stringify(fields.requiredClaims),
    fields.serviceAccountId,
    fields.enabled,
    now,
  ];
}

/** The plugin's tables. */
export const TABLES: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS workload_federation_policies (
    id uuid PRIMARY KEY,
    realm_id uuid NOT NULL,
    name text NOT NULL,
    issuer text NOT NULL,
    jwks_uri text,
    jwks jsonb,
    audience text NOT NULL,
    required_claims jsonb NOT NULL,
    service_account_id uuid NOT NULL,
    enabled boolean NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    UNIQUE (realm_id, name)
  )`,
  "CREATE INDEX IF NOT EXISTS workload_federation_policies_issuer ON workload_federation_policies (realm_id, issuer)",
];

interface Row {
  id: string;
  realm_id: string;
  name: string;
  issuer: string;
  jwks_uri: string | null;
  jwks: unknown;
  audience: string;
  required_claims: unknown;
  service_account_id: string;
  enabled: boolean;
  created_at: Date | string;
  updated_at: Date | string;
}

const json = (value: unknown) => typeof value === "string" ? JSON.parse(value) : value;

function toPolicy(row: Row): TrustPolicy {
  return {
    id: row.id,
    realmId: row.realm_id,
    name: row.name,
    issuer: row.issuer,
    jwksUri: row.jwks_uri,
    jwks: row.jwks === null ? null : json(row.jwks) as TrustPolicy["jwks"],
    audience: row.audience,
    requiredClaims: json(row.required_claims) as Record<string, string>,
    serviceAccountId: row.service_account_id,
    enabled: row.enabled,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a database error is a unique violation (a policy name taken in the realm). */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "23505";
}

/** The policy store over plugin SQL (the context's, or a transaction's `pluginSql`). */
export function policyStore(sql: PluginSql) {
  return {
    /** Creates a policy; a taken name throws the database's unique violation. */
    async create(id: string, realmId: string, fields: TrustPolicyFields, now: Date): Promise<TrustPolicy> {
      const [row] = await sql.query<Row>(
        `INSERT INTO workload_federation_policies
           (id, realm_id, name, issuer, jwks_uri, jwks, audience, required_claims, service_account_id, enabled, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6::text::jsonb, $7, $8::text::jsonb, $9, $10, $11, $11) RETURNING *`,
        rowParams(id, realmId, fields, now),
      );
      return toPolicy(row);
    },

    /** The policy of the realm with this id, or null. */
    async get(realmId: string, id: string): Promise<TrustPolicy | null> {
      if (!UUID.test(id)) return null;
      const [row] = await sql.query<Row>(
        "SELECT * FROM workload_federation_policies WHERE id = $1 AND realm_id = $2",
        [id, realmId],
      );
      return row === undefined ? null : toPolicy(row);
    },

    /** The realm's policies by name. */
    async list(realmId: string): Promise<TrustPolicy[]> {
      const rows = await sql.query<Row>(
        "SELECT * FROM workload_federation_policies WHERE realm_id = $1 ORDER BY name",
        [realmId],
      );
      return rows.map(toPolicy);
    },

    /** The realm's enabled policies for an issuer, by name. */
    async forIssuer(realmId: string, issuer: string): Promise<TrustPolicy[]> {
      const rows = await sql.query<Row>(
        `SELECT * FROM workload_federation_policies WHERE realm_id = $1 AND issuer = $2 AND enabled
         ORDER BY name LIMIT 20`,
        [realmId, issuer],
      );
      return rows.map(toPolicy);
    },

    /** Replaces a policy's fields; null when it does not exist. */
    async update(
      realmId: string,
      id: string,
      fields: TrustPolicyFields,
      now: Date,
    ): Promise<TrustPolicy | null> {
      if (!UUID.test(id)) return null;
      const [row] = await sql.query<Row>(
        `UPDATE workload_federation_policies SET name = $3, issuer = $4, jwks_uri = $5, jwks = $6::text::jsonb,
           audience = $7, required_claims = $8::text::jsonb, service_account_id = $9, enabled = $10, updated_at = $11
         WHERE id = $1 AND realm_id = $2 RETURNING *`,
        rowParams(id, realmId, fields, now),
      );
      return row === undefined ? null : toPolicy(row);
    },

    /** Deletes a policy; whether it existed. */
    async delete(realmId: string, id: string): Promise<boolean> {
      if (!UUID.test(id)) return false;
      const rows = await sql.query<{ id: string }>(
        "DELETE FROM workload_federation_policies WHERE id = $1 AND realm_id = $2 RETURNING id",
        [id, realmId],
      );
      return rows.length > 0;
    },
  };
}
