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
  /** The last fetch of the metadata URL (by the periodic refresh or an administrator), or null. */
  readonly metadataRefresh: MetadataRefresh | null;
  /** When `saml.certificate_expiring` was raised, by certificate (SHA-256 hex). */
  readonly expiryAnnounced: Readonly<Record<string, Date>>;
}

/** What the last fetch of a connection's metadata URL found. */
export interface MetadataRefresh {
  /** When it was fetched. */
  readonly attemptedAt: Date;
  /** The last fetch that succeeded, or null. */
  readonly succeededAt: Date | null;
  /** `updated` (the certificates, entity id or SSO URL changed), `unchanged` or `failed`. */
  readonly outcome: "updated" | "unchanged" | "failed";
  /** Why it failed (an error code, then the reason), or null. */
  readonly error: string | null;
}

/** The fields of a new connection. */
export type NewConnection = Omit<
  SamlConnection,
  "id" | "createdAt" | "updatedAt" | "metadataRefresh" | "expiryAnnounced"
>;

/** Changes of a connection; absent fields are kept. */
export type ConnectionChanges = Partial<
  Omit<
    SamlConnection,
    "id" | "realmId" | "orgId" | "createdAt" | "updatedAt" | "metadataRefresh" | "expiryAnnounced"
  >
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
  // The maintenance job's schedule and what the last metadata fetch found (one row per connection).
  `CREATE TABLE IF NOT EXISTS saml_connection_checks (
    connection_id uuid PRIMARY KEY,
    next_check_at timestamptz NOT NULL,
    lease_until timestamptz,
    refresh_attempted_at timestamptz,
    refresh_succeeded_at timestamptz,
    refresh_outcome text,
    refresh_error text
  )`,
  // Certificates whose coming expiry was announced (saml.certificate_expiring): once each.
  `CREATE TABLE IF NOT EXISTS saml_certificate_notices (
    connection_id uuid NOT NULL,
    sha256 text NOT NULL,
    not_after timestamptz NOT NULL,
    announced_at timestamptz NOT NULL,
    PRIMARY KEY (connection_id, sha256)
  )`,
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
  refresh_attempted_at: Date | string | null;
  refresh_succeeded_at: Date | string | null;
  refresh_outcome: string | null;
  refresh_error: string | null;
  notices: Record<string, string> | string | null;
}

const COLUMNS =
  "c.id, c.realm_id, c.org_id, c.display_name, c.idp_entity_id, c.idp_sso_url, c.idp_certificates, " +
  "c.idp_metadata_url, c.metadata_fetched_at, c.attribute_mapping, c.jit_provisioning, c.allow_idp_initiated, " +
  "c.enabled, c.created_at, c.updated_at, c.require_encrypted_assertions, k.refresh_attempted_at, k.refresh_succeeded_at, k.refresh_outcome, " +
  "k.refresh_error, (SELECT json_object_agg(n.sha256, n.announced_at) FROM saml_certificate_notices n " +
  "WHERE n.connection_id = c.id) AS notices";
const FROM = "saml_connections c LEFT JOIN saml_connection_checks k ON k.connection_id = c.id";

const date = (value: Date | string | null): Date | null => value === null ? null : new Date(value);

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
    metadataRefresh: row.refresh_attempted_at === null || row.refresh_outcome === null ? null : {
      attemptedAt: new Date(row.refresh_attempted_at),
      succeededAt: date(row.refresh_succeeded_at),
      outcome: row.refresh_outcome as MetadataRefresh["outcome"],
      error: row.refresh_error,
    },
    expiryAnnounced: Object.fromEntries(
      Object.entries(
        (typeof row.notices === "string" ? JSON.parse(row.notices) : row.notices) ?? {},
      ).map(([sha256, at]) => [sha256, new Date(at as string)]),
    ),
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
    await this.#sql.query(
      `INSERT INTO saml_connections (id, realm_id, org_id, display_name, idp_entity_id, idp_sso_url, idp_certificates,
         idp_metadata_url, metadata_fetched_at, attribute_mapping, jit_provisioning, allow_idp_initiated, enabled,
         created_at, updated_at, require_encrypted_assertions)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12, $13, $14, $14, $15)`,
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
    const created = await this.get(id);
    if (created === null) throw new Error("saml: a created connection is missing");
    return created;
  }

  /** The connection with this id, or null. */
  async get(id: string): Promise<SamlConnection | null> {
    if (!UUID.test(id)) return null;
    const [row] = await this.#sql.query<Row>(`SELECT ${COLUMNS} FROM ${FROM} WHERE c.id = $1`, [id]);
    return row === undefined ? null : fromRow(row);
  }

  /** The connections of a realm (optionally of one organization), by creation time then id. */
  async list(realmId: string, orgId: string | null = null): Promise<SamlConnection[]> {
    const rows = await this.#sql.query<Row>(
      `SELECT ${COLUMNS} FROM ${FROM} WHERE c.realm_id = $1 AND ($2::uuid IS NULL OR c.org_id = $2::uuid)
       ORDER BY c.created_at, c.id`,
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
    const rows = await this.#sql.query(
      `UPDATE saml_connections SET display_name = $2, idp_entity_id = $3, idp_sso_url = $4, idp_certificates = $5,
         idp_metadata_url = $6, metadata_fetched_at = $7, attribute_mapping = $8::jsonb, jit_provisioning = $9,
         allow_idp_initiated = $10, enabled = $11, updated_at = $12, require_encrypted_assertions = $13
       WHERE id = $1 RETURNING id`,
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
    return rows.length === 0 ? null : await this.get(id);
  }

  /** Deletes a connection (and its sign-ins in flight). */
  async delete(id: string): Promise<boolean> {
    const rows = await this.#sql.query("DELETE FROM saml_connections WHERE id = $1 RETURNING id", [id]);
    await this.#sql.query("DELETE FROM saml_requests WHERE connection_id = $1", [id]);
    await this.#sql.query("DELETE FROM saml_connection_checks WHERE connection_id = $1", [id]);
    await this.#sql.query("DELETE FROM saml_certificate_notices WHERE connection_id = $1", [id]);
    return rows.length > 0;
  }
}
