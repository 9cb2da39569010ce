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
  readonly redirectUris: readonly string[];
  readonly postLogoutRedirectUris: readonly string[];
  readonly allowedScopes: readonly string[];
  readonly requireConsent: boolean;
  readonly suspended: boolean;
  /** Hash of the client secret (never plaintext); null for public clients. */
  readonly secretHash: string | null;
  readonly secretAlgorithm: string | null;
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
  /** When it was created. */
  readonly createdAt: Date;
}

/** The writable fields of a client. */
export interface ClientFields {
  readonly clientType: string;
  readonly redirectUris?: readonly string[];
  readonly postLogoutRedirectUris?: readonly string[];
  readonly allowedScopes?: readonly string[];
  readonly requireConsent?: boolean;
  readonly suspended?: boolean;
  /** The secret's hash (the secret itself is never stored). */
  readonly secretHash?: string | null;
  readonly secretAlgorithm?: string | null;
  readonly secretResetRequired?: boolean;
  readonly tokenEndpointAuthMethod?: string | null;
  readonly jwks?: { readonly keys: readonly Record<string, unknown>[] } | null;
  readonly jwksUri?: string | null;
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
  get(id: string): Promise<ClientRecord | null>;
  getByClientId(realmId: string, clientId: string): Promise<ClientRecord | null>;
  /** The realm's clients by client id. */
  list(realmId: string): Promise<ClientRecord[]>;
  /** Updates the given fields; returns the client, or null when unknown. */
  update(id: string, patch: Partial<ClientFields>): Promise<ClientRecord | null>;
  /** Deletes; returns whether it existed. */
  delete(id: string): Promise<boolean>;
}
