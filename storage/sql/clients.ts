/**
 * The SQL client store; (realm, client id) is unique and `upsert` is one
 * `INSERT … ON CONFLICT DO UPDATE` (`xmax = 0` tells a creation).
 *
 * @module
 */
import { type Selectable, sql, type Updateable } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { ConflictError } from "../../core/errors.ts";
import { type RandomSource, randomUuid } from "../../core/random.ts";
import type { ClientFields, ClientRecord, ClientStore } from "../../core/storage/clients.ts";
import type { ClientsTable, Executor } from "../database.ts";
import { isUuid } from "../../core/ids.ts";
import { jsonb } from "./directory-support.ts";

function toRecord(row: Selectable<ClientsTable>): ClientRecord {
  return {
    id: row.id,
    realmId: row.realm_id,
    clientId: row.client_id,
    clientType: row.client_type,
    redirectUris: row.redirect_uris ?? [],
    postLogoutRedirectUris: row.post_logout_redirect_uris ?? [],
    allowedScopes: row.allowed_scopes ?? [],
    requireConsent: row.require_consent,
    suspended: row.suspended,
    secretHash: row.secret_hash,
    secretAlgorithm: row.secret_algorithm,
    secretResetRequired: row.secret_reset_required,
    tokenEndpointAuthMethod: row.token_endpoint_auth_method ?? null,
    jwks: (row.jwks ?? null) as ClientRecord["jwks"],
    jwksUri: row.jwks_uri ?? null,
    requirePushedAuthorizationRequests: row.require_pushed_authorization_requests ?? false,
    backchannelLogoutUri: row.backchannel_logout_uri ?? null,
    backchannelLogoutSessionRequired: row.backchannel_logout_session_required ?? false,
    refreshTokenGraceSeconds: row.refresh_token_grace_seconds ?? 0,
    clientName: row.client_name ?? null,
    dpopBoundAccessTokens: row.dpop_bound_access_tokens ?? false,
    idTokenOnRefresh: row.id_token_on_refresh ?? true,
    dynamicallyRegistered: row.dynamically_registered ?? false,
    createdAt: row.created_at,
  };
}

function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "23505";
}

/** The columns a (partial) field set writes; omitted fields are left out. */
function columnsOf(fields: Partial<ClientFields>): Updateable<ClientsTable> {
  const out: Updateable<ClientsTable> = {};
  if (fields.clientType !== undefined) out.client_type = fields.clientType;
  if (fields.redirectUris !== undefined) out.redirect_uris = [...fields.redirectUris];
  if (fields.postLogoutRedirectUris !== undefined) {
    out.post_logout_redirect_uris = [...fields.postLogoutRedirectUris];
  }
  if (fields.allowedScopes !== undefined) out.allowed_scopes = [...fields.allowedScopes];
  if (fields.requireConsent !== undefined) out.require_consent = fields.requireConsent;
  if (fields.suspended !== undefined) out.suspended = fields.suspended;
  if (fields.secretHash !== undefined) out.secret_hash = fields.secretHash;
  if (fields.secretAlgorithm !== undefined) out.secret_algorithm = fields.secretAlgorithm;
  if (fields.secretResetRequired !== undefined) out.secret_reset_required = fields.secretResetRequired;
  if (fields.tokenEndpointAuthMethod !== undefined) {
    out.token_endpoint_auth_method = fields.tokenEndpointAuthMethod;
  }
  if (fields.jwks !== undefined) out.jwks = fields.jwks === null ? null : jsonb(fields.jwks);
  if (fields.jwksUri !== undefined) out.jwks_uri = fields.jwksUri;
  if (fields.requirePushedAuthorizationRequests !== undefined) {
    out.require_pushed_authorization_requests = fields.requirePushedAuthorizationRequests;
  }
  if (fields.backchannelLogoutUri !== undefined) out.backchannel_logout_uri = fields.backchannelLogoutUri;
  if (fields.backchannelLogoutSessionRequired !== undefined) {
    out.backchannel_logout_session_required = fields.backchannelLogoutSessionRequired;
  }
  if (fields.refreshTokenGraceSeconds !== undefined) {
    out.refresh_token_grace_seconds = fields.refreshTokenGraceSeconds;
  }
  if (fields.clientName !== undefined) out.client_name = fields.clientName;
  if (fields.dpopBoundAccessTokens !== undefined) out.dpop_bound_access_tokens = fields.dpopBoundAccessTokens;
  if (fields.idTokenOnRefresh !== undefined) out.id_token_on_refresh = fields.idTokenOnRefresh;
  if (fields.dynamicallyRegistered !== undefined) out.dynamically_registered = fields.dynamicallyRegistered;
  return out;
}

/** A {@link ClientStore} over the svc schema. */
export function createSqlClientStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): ClientStore {
  const newRow = (realmId: string, clientId: string, fields: ClientFields) => ({
    id: randomUuid(deps.random),
    realm_id: realmId,
    client_id: clientId,
    client_type: fields.clientType,
    redirect_uris: [...(fields.redirectUris ?? [])],
    post_logout_redirect_uris: [...(fields.postLogoutRedirectUris ?? [])],
    allowed_scopes: [...(fields.allowedScopes ?? [])],
    require_consent: fields.requireConsent ?? false,
    suspended: fields.suspended ?? false,
    secret_hash: fields.secretHash ?? null,
    secret_algorithm: fields.secretAlgorithm ?? null,
    secret_reset_required: fields.secretResetRequired ?? false,
    token_endpoint_auth_method: fields.tokenEndpointAuthMethod ?? null,
    jwks: fields.jwks === undefined || fields.jwks === null ? null : jsonb(fields.jwks),
    jwks_uri: fields.jwksUri ?? null,
    require_pushed_authorization_requests: fields.requirePushedAuthorizationRequests ?? false,
    backchannel_logout_uri: fields.backchannelLogoutUri ?? null,
    backchannel_logout_session_required: fields.backchannelLogoutSessionRequired ?? false,
    refresh_token_grace_seconds: fields.refreshTokenGraceSeconds ?? 0,
    client_name: fields.clientName ?? null,
    dpop_bound_access_tokens: fields.dpopBoundAccessTokens ?? false,
    id_token_on_refresh: fields.idTokenOnRefresh ?? true,
    dynamically_registered: fields.dynamicallyRegistered ?? false,
    created_at: new Date(deps.clock.now()),
  });
  return {
    async create(realmId, clientId, fields) {
      try {
        const row = await db.insertInto("clients").values(newRow(realmId, clientId, fields)).returningAll()
          .executeTakeFirstOrThrow();
        return toRecord(row);
      } catch (error) {
        if (isUniqueViolation(error)) throw new ConflictError("A client with this client id exists.");
        throw error;
      }
    },

    async upsert(realmId, clientId, fields) {
      const row = await db.insertInto("clients").values(newRow(realmId, clientId, fields))
        .onConflict((oc) => oc.columns(["realm_id", "client_id"]).doUpdateSet(columnsOf(fields)))
        .returningAll().returning(sql<boolean>`(xmax = 0)`.as("inserted")).executeTakeFirstOrThrow();
      return { client: toRecord(row), created: row.inserted };
    },

    async get(id) {
      if (!isUuid(id)) return null;
      const row = await db.selectFrom("clients").selectAll().where("id", "=", id).executeTakeFirst();
      return row ? toRecord(row) : null;
    },

    async getByClientId(realmId, clientId) {
      if (!isUuid(realmId)) return null;
      // xmin: the row version (every update writes a new row version with the updater's xid).
      const row = await db.selectFrom("clients").selectAll()
        .select(sql<string>`xmin::text`.as("row_version"))
        .where("realm_id", "=", realmId).where("client_id", "=", clientId).executeTakeFirst();
      return row ? { ...toRecord(row), version: row.row_version } : null;
    },

    async list(realmId) {
      if (!isUuid(realmId)) return [];
      const rows = await db.selectFrom("clients").selectAll().where("realm_id", "=", realmId)
        .orderBy("client_id").execute();
      return rows.map(toRecord);
    },

    async update(id, patch) {
      if (!isUuid(id)) return null;
      const set = columnsOf(patch);
      if (Object.keys(set).length === 0) {
        const row = await db.selectFrom("clients").selectAll().where("id", "=", id).executeTakeFirst();
        return row ? toRecord(row) : null;
      }
      const row = await db.updateTable("clients").set(set).where("id", "=", id).returningAll()
        .executeTakeFirst();
      return row ? toRecord(row) : null;
    },

    async delete(id) {
      if (!isUuid(id)) return false;
      const result = await db.deleteFrom("clients").where("id", "=", id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}
