/**
 * The federation plugin's upstream providers, in its own table `federation_providers`. The
 * client secret must be usable to call the upstream, so it is sealed (AES-256-GCM) under a key
 * of its own provider (svc's per-subject keys, `SubjectCrypto`, the provider id as subject):
 * deleting the provider destroys the key, and the secret with it. It is never shown again.
 *
 * @module
 */
import { type PluginContext, type PluginSql, randomUuid, type Storage, SubjectCrypto } from "../../mod.ts";

/** How claims of the upstream's ID token map to the user. */
export interface ClaimMapping {
  /** The claim holding the email (default `email`). */
  readonly email: string;
  /** The claim holding the display name (default `name`). */
  readonly name: string;
  /** User attribute → claim. */
  readonly attributes: Readonly<Record<string, string>>;
}

/** An upstream provider (never its secret). */
export interface FederationProvider {
  readonly id: string;
  readonly realmId: string;
  readonly orgId: string;
  readonly issuer: string;
  readonly clientId: string;
  readonly scopes: readonly string[];
  readonly claimMapping: ClaimMapping;
  readonly allowJitProvisioning: boolean;
  readonly enabled: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** The fields of a new provider. */
export interface NewProvider {
  readonly realmId: string;
  readonly orgId: string;
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly scopes: readonly string[];
  readonly claimMapping: ClaimMapping;
  readonly allowJitProvisioning: boolean;
  readonly enabled: boolean;
}

/** Changes of a provider; absent fields are kept. */
export interface ProviderChanges {
  readonly issuer?: string;
  readonly clientId?: string;
  readonly clientSecret?: string;
  readonly scopes?: readonly string[];
  readonly claimMapping?: ClaimMapping;
  readonly allowJitProvisioning?: boolean;
  readonly enabled?: boolean;
}

/** The plugin's tables. */
export const TABLES: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS federation_providers (
    id uuid PRIMARY KEY,
    realm_id uuid NOT NULL,
    org_id uuid NOT NULL,
    issuer text NOT NULL,
    client_id text NOT NULL,
    client_secret text NOT NULL,
    scopes text[] NOT NULL,
    claim_mapping jsonb NOT NULL,
    allow_jit_provisioning boolean NOT NULL,
    enabled boolean NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`,
  "CREATE INDEX IF NOT EXISTS federation_providers_org ON federation_providers (org_id)",
  `CREATE TABLE IF NOT EXISTS federation_states (
    state_hash text PRIMARY KEY,
    provider_id uuid NOT NULL,
    return_to text NOT NULL,
    link_user_id uuid,
    expires_at timestamptz NOT NULL
  )`,
  "CREATE INDEX IF NOT EXISTS federation_states_expiry ON federation_states (expires_at)",
];

interface Row {
  id: string;
  realm_id: string;
  org_id: string;
  issuer: string;
  client_id: string;
  scopes: string[];
  claim_mapping: ClaimMapping | string;
  allow_jit_provisioning: boolean;
  enabled: boolean;
  created_at: Date | string;
  updated_at: Date | string;
}

const COLUMNS =
  "id, realm_id, org_id, issuer, client_id, scopes, claim_mapping, allow_jit_provisioning, enabled, created_at, updated_at";

function fromRow(row: Row): FederationProvider {
  return {
    id: row.id,
    realmId: row.realm_id,
    orgId: row.org_id,
    issuer: row.issuer,
    clientId: row.client_id,
    scopes: row.scopes,
    claimMapping: typeof row.claim_mapping === "string" ? JSON.parse(row.claim_mapping) : row.claim_mapping,
    allowJitProvisioning: row.allow_jit_provisioning,
    enabled: row.enabled,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

function toBase64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The providers table, with the secret sealed under the provider's own key (in svc's subject
 * keys). Bound to the plugin's connection, or with {@link ProviderStore.in} to an admin
 * mutation's transaction, so that a change and its audit entry commit together.
 */
export class ProviderStore {
  readonly #ctx: PluginContext<unknown>;
  readonly #sql: PluginSql;
  readonly #crypto: SubjectCrypto;

  constructor(
    ctx: PluginContext<unknown>,
    storage: Pick<Storage, "pluginSql" | "subjectKeys"> = ctx.storage,
  ) {
    this.#ctx = ctx;
    this.#sql = storage.pluginSql;
    this.#crypto = new SubjectCrypto(storage.subjectKeys, ctx.random);
  }

  /** The same store on `tx` (an admin mutation's transaction-bound storage). */
  in(tx: Pick<Storage, "pluginSql" | "subjectKeys">): ProviderStore {
    return new ProviderStore(this.#ctx, tx);
  }

  /** Stores a new provider (its secret sealed). */
  async create(input: NewProvider): Promise<FederationProvider> {
    const id = randomUuid(this.#ctx.random);
    const now = new Date(this.#ctx.clock.now());
    const sealed = toBase64(await this.#crypto.encrypt(id, input.clientSecret));
    const [row] = await this.#sql.query<Row>(
      `INSERT INTO federation_providers (id, realm_id, org_id, issuer, client_id, client_secret, scopes, claim_mapping,
         allow_jit_provisioning, enabled, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $11) RETURNING ${COLUMNS}`,
      [
        id,
        input.realmId,
        input.orgId,
        input.issuer,
        input.clientId,
        sealed,
        [...input.scopes],
        JSON.stringify(input.claimMapping),
        input.allowJitProvisioning,
        input.enabled,
        now,
      ],
    );
    return fromRow(row);
  }

  /** The provider with this id, or null. */
  async get(id: string): Promise<FederationProvider | null> {
    if (!UUID.test(id)) return null;
    const [row] = await this.#sql.query<Row>(
      `SELECT ${COLUMNS} FROM federation_providers WHERE id = $1`,
      [id],
    );
    return row === undefined ? null : fromRow(row);
  }

  /** The providers of a realm (optionally of one organization), by creation time then id. */
  async list(realmId: string, orgId: string | null = null): Promise<FederationProvider[]> {
    const rows = await this.#sql.query<Row>(
      `SELECT ${COLUMNS} FROM federation_providers WHERE realm_id = $1 AND ($2::uuid IS NULL OR org_id = $2::uuid)
       ORDER BY created_at, id`,
      [realmId, orgId],
    );
    return rows.map(fromRow);
  }

  /** Applies changes (a new secret is sealed); null when there is no such provider. */
  async update(id: string, changes: ProviderChanges): Promise<FederationProvider | null> {
    const sealed = changes.clientSecret === undefined
      ? null
      : toBase64(await this.#crypto.encrypt(id, changes.clientSecret));
    const [row] = await this.#sql.query<Row>(
      `UPDATE federation_providers SET
         issuer = COALESCE($2, issuer),
         client_id = COALESCE($3, client_id),
         client_secret = COALESCE($4, client_secret),
         scopes = COALESCE($5, scopes),
         claim_mapping = COALESCE($6::jsonb, claim_mapping),
         allow_jit_provisioning = COALESCE($7, allow_jit_provisioning),
         enabled = COALESCE($8, enabled),
         updated_at = $9
       WHERE id = $1 RETURNING ${COLUMNS}`,
      [
        id,
        changes.issuer ?? null,
        changes.clientId ?? null,
        sealed,
        changes.scopes === undefined ? null : [...changes.scopes],
        changes.claimMapping === undefined ? null : JSON.stringify(changes.claimMapping),
        changes.allowJitProvisioning ?? null,
        changes.enabled ?? null,
        new Date(this.#ctx.clock.now()),
      ],
    );
    return row === undefined ? null : fromRow(row);
  }

  /** Deletes a provider and destroys its key (the sealed secret becomes unrecoverable). */
  async delete(id: string): Promise<boolean> {
    const rows = await this.#sql.query("DELETE FROM federation_providers WHERE id = $1 RETURNING id", [
      id,
    ]);
    await this.#crypto.destroy(id);
    return rows.length > 0;
  }

  /** The provider's client secret, opened. */
  async clientSecret(id: string): Promise<string> {
    const [row] = await this.#sql.query<{ client_secret: string }>(
      "SELECT client_secret FROM federation_providers WHERE id = $1",
      [id],
    );
    if (row === undefined) throw new Error("no such provider");
    return await this.#crypto.decryptText(id, fromBase64(row.client_secret));
  }
}
