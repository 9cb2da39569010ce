/**
 * OAuth/OIDC clients (spec 2.11 ImportedClient fields), unique per (realm, client id).
 *
 * @module
 */

/** A stored client. */
export interface ClientRecord {
  /** The id. */
  readonly id: string;
  /** The realm it belongs to. */
  readonly realmId: string;
  /** The client id. */
  readonly clientId: string;
  /** For example `confidential` or `public`. */
  readonly clientType: string;
  /** The registered redirect URIs. */
  readonly redirectUris: readonly string[];
  /** The registered post-logout redirect URIs. */
  readonly postLogoutRedirectUris: readonly string[];
  /** The scopes the client may request. */
  readonly allowedScopes: readonly string[];
  /** Whether users must consent before the client gets tokens. */
  readonly requireConsent: boolean;
  /** Whether the client is suspended. */
  readonly suspended: boolean;
  /** Hash of the client secret (never plaintext); null for public clients. */
  readonly secretHash: string | null;
  /** The algorithm tag of `secretHash`; null when there is no secret. */
  readonly secretAlgorithm: string | null;
  /** True when an import generated the secret, which then has to be handed out or reset. */
  readonly secretResetRequired: boolean;
  /**
   * How the client authenticates at the token endpoint: `private_key_jwt` (RFC 7523 assertions
   * signed by a key of `jwks` or `jwksUri`), or null for the default (its secret when
   * confidential, none when public).
   */
  readonly tokenEndpointAuthMethod: string | null;
  /** The client's public keys (a JWK Set) for `private_key_jwt`. */
  readonly jwks: { readonly keys: readonly Record<string, unknown>[] } | null;
  /** Where the client publishes its public keys for `private_key_jwt`. */
  readonly jwksUri: string | null;
  /** Whether its authorization requests must be pushed first (RFC 9126 `require_pushed_authorization_requests`). */
  readonly requirePushedAuthorizationRequests: boolean;
  /** Where the provider POSTs logout tokens (OIDC Back-Channel Logout 1.0), or null. */
  readonly backchannelLogoutUri: string | null;
  /** Whether the client requires `sid` in its logout tokens. */
  readonly backchannelLogoutSessionRequired: boolean;
  /** Seconds a rotated refresh token still answers its successor (the refresh grace window; 0: off). */
  readonly refreshTokenGraceSeconds: number;
  /** The name users see (consent, apps with access), or null: the client id is shown. */
  readonly clientName: string | null;
  /** Whether its access tokens must be DPoP-bound (RFC 9449 `dpop_bound_access_tokens`; absent: false). */
  readonly dpopBoundAccessTokens?: boolean;
  /**
   * Whether a refresh grant answers a new ID token (absent: true, as node-oidc-provider does).
   * OIDC Core 12.2 makes it optional; without it a refresh costs one signature less.
   */
  readonly idTokenOnRefresh?: boolean;
  /** Whether the client registered itself (RFC 7591 dynamic client registration; absent: false). */
  readonly dynamicallyRegistered?: boolean;
  /** When it was created. */
  readonly createdAt: Date;
  /**
   * An opaque version of the stored row, changed by every update (set by `getByClientId`): a
   * refresh grant's statement checks it (`RefreshGrantGuard.clientVersion`), so a cached copy
   * is never honoured after the client changed.
   */
  readonly version?: string;
}

/** The writable fields of a client. */
export interface ClientFields {
  /** For example `confidential` or `public`. */
  readonly clientType: string;
  /** The registered redirect URIs; default none. */
  readonly redirectUris?: readonly string[];
  /** The registered post-logout redirect URIs; default none. */
  readonly postLogoutRedirectUris?: readonly string[];
  /** The scopes the client may request; default none. */
  readonly allowedScopes?: readonly string[];
  /** Whether users must consent before the client gets tokens; default false. */
  readonly requireConsent?: boolean;
  /** Whether the client is suspended; default false. */
  readonly suspended?: boolean;
  /** The secret's hash (the secret itself is never stored). */
  readonly secretHash?: string | null;
  /** The algorithm tag of `secretHash`. */
  readonly secretAlgorithm?: string | null;
  /** True when the secret was generated (by an import) and has to be handed out or reset; default false. */
  readonly secretResetRequired?: boolean;
  /** `private_key_jwt`, or null for the default (see {@link ClientRecord.tokenEndpointAuthMethod}). */
  readonly tokenEndpointAuthMethod?: string | null;
  /** The client's public keys (a JWK Set) for `private_key_jwt`. */
  readonly jwks?: { readonly keys: readonly Record<string, unknown>[] } | null;
  /** Where the client publishes its public keys for `private_key_jwt`. */
  readonly jwksUri?: string | null;
  /** Whether its authorization requests must be pushed first (RFC 9126); default false. */
  readonly requirePushedAuthorizationRequests?: boolean;
  /** Where the provider POSTs logout tokens; default none. */
  readonly backchannelLogoutUri?: string | null;
  /** Whether the client requires `sid` in its logout tokens; default false. */
  readonly backchannelLogoutSessionRequired?: boolean;
  /** The refresh grace window in seconds; default 0 (off). */
  readonly refreshTokenGraceSeconds?: number;
  /** The name users see; default none. */
  readonly clientName?: string | null;
  /** Whether its access tokens must be DPoP-bound; default false. */
  readonly dpopBoundAccessTokens?: boolean;
  /** Whether a refresh grant answers a new ID token; default true. */
  readonly idTokenOnRefresh?: boolean;
  /** Whether the client registered itself (RFC 7591); default false. Set at creation only. */
  readonly dynamicallyRegistered?: boolean;
}

/** Client storage. */
export interface ClientStore {
  /** Creates; `ConflictError` when (realm, client id) is taken. */
  create(realmId: string, clientId: string, fields: ClientFields): Promise<ClientRecord>;
  /**
   * Creates or updates by (realm, client id) in one statement (idempotent imports).
   * Omitted optional fields keep their stored values on update. `created` tells which.
   */
  upsert(
    realmId: string,
    clientId: string,
    fields: ClientFields,
  ): Promise<{ client: ClientRecord; created: boolean }>;
  /** The client with this svc id, or null. */
  get(id: string): Promise<ClientRecord | null>;
  /** The client of the realm with this client id, or null. */
  getByClientId(realmId: string, clientId: string): Promise<ClientRecord | null>;
  /** The realm's clients by client id. */
  list(realmId: string): Promise<ClientRecord[]>;
  /** Updates the given fields; returns the client, or null when unknown. */
  update(id: string, patch: Partial<ClientFields>): Promise<ClientRecord | null>;
  /** Deletes; returns whether it existed. */
  delete(id: string): Promise<boolean>;
}
