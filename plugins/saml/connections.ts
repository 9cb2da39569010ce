/**
 * SAML connections in the plugin's table `saml_connections`: one organization's IdP (entity id,
 * SSO URL, signing certificates, the metadata URL when it came from one), how its attributes map
 * to the user, whether it provisions users just in time and accepts IdP-initiated sign-in. No
 * secret: the IdP's certificates are public.
 *
 * @module
 */
import { type PluginContext, type PluginSql, randomUuid, type Storage } from "../../mod.ts";

/** How the assertion's attributes map to the user. */
export interface AttributeMapping {
  /** The attribute holding the email; null: the usual names, then an email-shaped NameID. */
  readonly email: string | null;
  /** The attribute holding the display name; null: the usual names. */
  readonly name: string | null;
  /** User attribute → SAML attribute. */
  readonly attributes: Readonly<Record<string, string>>;
}

/** A connection. */
export interface SamlConnection {
  readonly id: string;
  readonly realmId: string;
  readonly orgId: string;
  readonly displayName: string;
  readonly idpEntityId: string;
  readonly idpSsoUrl: string | null;
  /** Signing certificates, base64 DER. */
  readonly idpCertificates: readonly string[];
  readonly idpMetadataUrl: string | null;
  readonly metadataFetchedAt: Date | null;
  readonly attributeMapping: AttributeMapping;
  readonly jitProvisioning: boolean;
  readonly allowIdpInitiated: boolean;
  /** Refuse assertions that do not come encrypted to the SP's keys. */
  readonly requireEncryptedAssertions: boolean;
  readonly enabled: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** The fields of a new connection. */
export type NewConnection = Omit<SamlConnection, "id" | "createdAt" | "updatedAt">;

/** Changes of a connection; absent fields are kept. */
export type ConnectionChanges = Partial<
  Omit<SamlConnection, "id" | "realmId" | "orgId" | "createdAt" | "updatedAt">
>;

/** The plugin's tables. */
export const TABLES: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS saml_connections (
    id uuid PRIMARY KEY,
    realm_id uuid NOT NULL,
    org_id uuid NOT NULL,
    display_name text NOT NULL,
    idp_entity_id text NOT NULL,
    idp_sso_url text,
    idp_certificates text[] NOT NULL,
    idp_metadata_url text,
    metadata_fetched_at timestamptz,
    attribute_mapping jsonb NOT NULL,
    jit_provisioning boolean NOT NULL,
    allow_idp_initiated boolean NOT NULL,
    enabled boolean NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    require_encrypted_assertions boolean NOT NULL DEFAULT false
  )`,
  "CREATE INDEX IF NOT EXISTS saml_connections_org ON saml_connections (org_id)",
  `CREATE TABLE IF NOT EXISTS saml_requests (
    relay_hash text PRIMARY KEY,
    connection_id uuid NOT NULL,
    request_id text NOT NULL,
    return_to text NOT NULL,
    link_user_id uuid,
    expires_at timestamptz NOT NULL
  )`,
  "CREATE INDEX IF NOT EXISTS saml_requests_expiry ON saml_requests (expires_at)",
];

interface Row {
  id: string;
  realm_id: string;
  org_id: string;
  display_name: string;
  idp_entity_id: string;
  idp_sso_url: string | null;
  idp_certificates: string[];
  idp_metadata_url: string | null;
  metadata_fetched_at: Date | string | null;
  attribute_mapping: AttributeMapping | string;
  jit_provisioning: boolean;
  allow_idp_initiated: boolean;
  require_encrypted_assertions: boolean;
  enabled: boolean;
  created_at: Date | string;
  updated_at: Date | string;
}

const COLUMNS = "id, realm_id, org_id, display_name, idp_entity_id, idp_sso_url, idp_certificates, " +
  "idp_metadata_url, metadata_fetched_at, attribute_mapping, jit_provisioning, allow_idp_initiated, enabled, " +
  "created_at, updated_at, require_encrypted_assertions";

function fromRow(row: Row): SamlConnection {
  return {
    id: row.id,
    realmId: row.realm_id,
    orgId: row.org_id,
    displayName: row.display_name,
    idpEntityId: row.idp_entity_id,
    idpSsoUrl: row.idp_sso_url,
    idpCertificates: row.idp_certificates,
    idpMetadataUrl: row.idp_metadata_url,
    metadataFetchedAt: row.metadata_fetched_at === null ? null : new Date(row.metadata_fetched_at),
    attributeMapping: typeof row.attribute_mapping === "string"
      ? JSON.parse(row.attribute_mapping)
      : row.attribute_mapping,
    jitProvisioning: row.jit_provisioning,
    allowIdpInitiated: row.allow_idp_initiated,
    requireEncryptedAssertions: row.require_encrypted_assertions,
    enabled: row.enabled,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The connections table, on the plugin's connection or (with {@link ConnectionStore.in}) a transaction. */
export class ConnectionStore {
  readonly #ctx: PluginContext<unknown>;
  readonly #sql: PluginSql;

  constructor(ctx: PluginContext<unknown>, storage: Pick<Storage, "pluginSql"> = ctx.storage) {
    this.#ctx = ctx;
    this.#sql = storage.pluginSql;
  }

  /** The same store on `tx` (an admin mutation's transaction-bound storage). */
  in(tx: Pick<Storage, "pluginSql">): ConnectionStore {
    return new ConnectionStore(this.#ctx, tx);
  }

  /** Stores a new connection. */
  async create(input: NewConnection): Promise<SamlConnection> {
    const id = randomUuid(this.#ctx.random);
    const now = new Date(this.#ctx.clock.now());
    const [row] = await this.#sql.query<Row>(
      `INSERT INTO saml_connections (id, realm_id, org_id, display_name, idp_entity_id, idp_sso_url, idp_certificates,
         idp_metadata_url, metadata_fetched_at, attribute_mapping, jit_provisioning, allow_idp_initiated, enabled,
         created_at, updated_at, require_encrypted_assertions)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12, $13, $14, $14, $15) RETURNING ${COLUMNS}`,
      [
        id,
        input.realmId,
        input.orgId,
        input.displayName,
        input.idpEntityId,
        input.idpSsoUrl,
        [...input.idpCertificates],
        input.idpMetadataUrl,
        input.metadataFetchedAt,
        JSON.stringify(input.attributeMapping),
        input.jitProvisioning,
        input.allowIdpInitiated,
        input.enabled,
        now,
        input.requireEncryptedAssertions,
      ],
    );
    return fromRow(row);
  }

  /** The connection with this id, or null. */
  async get(id: string): Promise<SamlConnection | null> {
    if (!UUID.test(id)) return null;
    const [row] = await this.#sql.query<Row>(`SELECT ${COLUMNS} FROM saml_connections WHERE id = $1`, [id]);
    return row === undefined ? null : fromRow(row);
  }

  /** The connections of a realm (optionally of one organization), by creation time then id. */
  async list(realmId: string, orgId: string | null = null): Promise<SamlConnection[]> {
    const rows = await this.#sql.query<Row>(
      `SELECT ${COLUMNS} FROM saml_connections WHERE realm_id = $1 AND ($2::uuid IS NULL OR org_id = $2::uuid)
       ORDER BY created_at, id`,
      [realmId, orgId],
    );
    return rows.map(fromRow);
  }

  /** Applies changes; null when there is no such connection. */
  async update(id: string, changes: ConnectionChanges): Promise<SamlConnection | null> {
    const before = await this.get(id);
    if (before === null) return null;
    const next = {
      ...before,
      ...Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)),
    };
    const [row] = await this.#sql.query<Row>(
      `UPDATE saml_connections SET display_name = $2, idp_entity_id = $3, idp_sso_url = $4, idp_certificates = $5,
         idp_metadata_url = $6, metadata_fetched_at = $7, attribute_mapping = $8::jsonb, jit_provisioning = $9,
         allow_idp_initiated = $10, enabled = $11, updated_at = $12, require_encrypted_assertions = $13
       WHERE id = $1 RETURNING ${COLUMNS}`,
      [
        id,
        next.displayName,
        next.idpEntityId,
        next.idpSsoUrl,
        [...next.idpCertificates],
        next.idpMetadataUrl,
        next.metadataFetchedAt,
        JSON.stringify(next.attributeMapping),
        next.jitProvisioning,
        next.allowIdpInitiated,
        next.enabled,
        new Date(this.#ctx.clock.now()),
        next.requireEncryptedAssertions,
      ],
    );
    return row === undefined ? null : fromRow(row);
  }

  /** Deletes a connection (and its sign-ins in flight). */
  async delete(id: string): Promise<boolean> {
    const rows = await this.#sql.query("DELETE FROM saml_connections WHERE id = $1 RETURNING id", [id]);
    await this.#sql.query("DELETE FROM saml_requests WHERE connection_id = $1", [id]);
    return rows.length > 0;
  }
}
