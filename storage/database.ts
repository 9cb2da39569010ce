/**
 * Kysely table types of the svc schema (see `schema.ts`). Column names are
 * snake_case as in SQL; the stores map rows to camelCase records.
 */
import type { ColumnType, Generated, Kysely, Transaction } from "kysely";

/** A JSON column's value (kysely reads it parsed). */
export type Json = unknown;
/** A timestamptz column: read as Date, written as Date. */
export type Timestamp = Date;
/** A jsonb column: written as a JSON string or value, read parsed. */
export type JsonColumn = ColumnType<Json, Json, Json>;

/** A row of the `realms` table. */
export interface RealmsTable {
  /** Primary key. */
  id: string;
  /** The name. */
  name: string;
  /** The name people see. */
  display_name: string;
  /** Whether this is the default realm (at most one realm is). */
  is_default: boolean;
  /** Whether people may sign themselves up on the hosted pages. */
  self_sign_up: Generated<boolean>;
  /** The realm's branding (null: the server's): product name, colour `#rrggbb`, https logo URL. */
  brand_product_name: string | null;
  /** The realm's brand colour (`#rrggbb`), or null for the server's. */
  brand_color: string | null;
  /** The realm's logo (an https URL), or null for the server's. */
  brand_logo_url: string | null;
  /** When the row was created. */
  created_at: Timestamp;
}
/** A row of the `organizations` table. */
export interface OrganizationsTable {
  /** Primary key. */
  id: string;
  /** The realm (`realms.id`). */
  realm_id: string;
  /** The name. */
  name: string;
  /** The name people see. */
  display_name: string;
  /** Lifecycle status, `Active` by default; other values are stored as given. */
  status: string;
  /** The id of the identity provider the organization's users sign in with by default, or null. */
  default_identity_provider_id: string | null;
  /** When the row was created. */
  created_at: Timestamp;
  /** Bumped by every update (ETag / If-Match of the admin API). */
  version: Generated<number>;
}
/** A row of the `organization_domains` table. */
export interface OrganizationDomainsTable {
  /** Primary key. */
  id: string;
  /** The organization (`organizations.id`). */
  org_id: string;
  /** What the domain is used for, for example `EmailDomain` (routes logins). */
  kind: string;
  /** The domain itself, trimmed and lowercased. */
  value: string;
  /** Whether control of the domain was proven; only verified domains route logins. */
  verified: boolean;
  /** When the row was created. */
  created_at: Timestamp;
  /** The DNS TXT proof token of the admin API (public by design: it is published in DNS). */
  verification_token: Generated<string | null>;
}
/** A row of the `users` table. */
export interface UsersTable {
  /** Primary key. */
  id: string;
  /** The realm (`realms.id`). */
  realm_id: string;
  /** The email address, trimmed and lowercased; unique per realm. */
  email: string;
  /** Whether the email address was verified. */
  email_verified: boolean;
  /** The name people see. */
  display_name: string | null;
  /** `Active`, or `Suspended` (cannot sign in). */
  status: "Active" | "Suspended";
  /** The user's ABAC attribute bag (a JSON object, `{}` by default). */
  attributes: JsonColumn;
  /** Whether this is the realm's break-glass account (at most one per realm). */
  is_break_glass: boolean;
  /** When the user was erased (personal data replaced); null otherwise. */
  anonymized_at: Timestamp | null;
  /** When the row was created. */
  created_at: Timestamp;
  /** When the row last changed. */
  updated_at: Timestamp;
  /** Rotated on every password change; reset links carry it (issue 19 item 6). */
  credential_stamp: Generated<string>;
  /** Bumped by every update (the admin API's ETag). */
  version: Generated<number>;
}
/** A row of the `org_memberships` table. */
export interface OrgMembershipsTable {
  /** The organization (`organizations.id`). */
  org_id: string;
  /** The user (`users.id`). */
  user_id: string;
  /** When the row was created. */
  created_at: Timestamp;
}
/** A row of the `teams` table. */
export interface TeamsTable {
  /** Primary key. */
  id: string;
  /** The realm (`realms.id`). */
  realm_id: string;
  /** The organization (`organizations.id`). */
  org_id: string;
  /** The name. */
  name: string;
  /** When the row was created. */
  created_at: Timestamp;
}
/** A row of the `team_members` table. */
export interface TeamMembersTable {
  /** The team (`teams.id`). */
  team_id: string;
  /** The user (`users.id`). */
  user_id: string;
  /** When the row was created. */
  created_at: Timestamp;
}
/** A row of the `groups` table. */
export interface GroupsTable {
  /** Primary key. */
  id: string;
  /** The realm (`realms.id`). */
  realm_id: string;
  /** The organization (`organizations.id`), or null. */
  org_id: string | null;
  /** Unique per (realm, organization or realm level). */
  key: string;
  /** The name people see. */
  display_name: string;
  /** When the row was created. */
  created_at: Timestamp;
}
/** A row of the `group_members` table. */
export interface GroupMembersTable {
  /** The group (`groups.id`). */
  group_id: string;
  /** The user (`users.id`). */
  user_id: string;
  /** When the row was created. */
  created_at: Timestamp;
}
/** A row of the `roles` table. */
export interface RolesTable {
  /** Primary key. */
  id: string;
  /** The realm (`realms.id`). */
  realm_id: string;
  /** The organization (`organizations.id`), or null. */
  org_id: string | null;
  /** Unique per (realm, organization or realm level). */
  key: string;
  /** The name people see. */
  display_name: string;
  /** Bumped by every update (the ETag of the admin API). */
  version: Generated<number>;
  /** When the row was created. */
  created_at: Timestamp;
}
/** A row of the `policies` table. */
export interface PoliciesTable {
  /** Primary key. */
  id: string;
  /** The realm (`realms.id`). */
  realm_id: string;
  /** The organization (`organizations.id`), or null. */
  org_id: string | null;
  /** The name. */
  name: string;
  /** Whether the policy applies to a user or a group. */
  principal_kind: "User" | "Group";
  /** The user (`users.id`) or group (`groups.id`) the policy applies to, per `principal_kind`. */
  principal_id: string;
  /** When the row was created. */
  created_at: Timestamp;
}
/** A row of the `grants` table. */
export interface GrantsTable {
  /** Primary key. */
  id: string;
  /** The role (`roles.id`), or null. */
  role_id: string | null;
  /** The policy (`policies.id`), or null; exactly one of `role_id` and `policy_id` is set. */
  policy_id: string | null;
  /** The permission pattern, stored as given (validated when an authorization snapshot is built). */
  pattern: string;
  /** Whether the grant allows or denies the matching permissions. */
  effect: "Allow" | "Deny";
  /** The organization (`organizations.id`), or null. */
  org_id: string | null;
  /** Team ids the grant is restricted to; empty: no team restriction. */
  team_ids: string[];
  /** The ABAC condition document (JSON), or null for none. */
  condition: JsonColumn | null;
  /** When the row was created. */
  created_at: Timestamp;
}
/** A row of the `role_assignments` table. */
export interface RoleAssignmentsTable {
  /** Primary key. */
  id: string;
  /** The realm (`realms.id`). */
  realm_id: string;
  /** The role (`roles.id`). */
  role_id: string;
  /** Whether the role goes to a user, a group or a service account. */
  principal_kind: "User" | "Group" | "ServiceAccount";
  /** The user (`users.id`), group (`groups.id`) or service account (`service_accounts.id`), per `principal_kind`. */
  principal_id: string;
  /** The organization (`organizations.id`), or null. */
  org_id: string | null;
  /** When the row was created. */
  created_at: Timestamp;
}
/** A row of the `permission_catalog` table. */
export interface PermissionCatalogTable {
  /** The permission id, as declared (primary key). */
  permission_id: string;
  /** A description for people, or null. */
  description: string | null;
  /** When a sync or upsert last declared the permission. */
  last_synced_at: Timestamp;
  /** When it was retired (null: not retired). */
  retired_at: Timestamp | null;
}
/** A row of the `app_catalog` table. */
export interface AppCatalogTable {
  /** The AppKey tokens can be scoped to through `aud` (primary key). */
  app_key: string;
  /** The name people see. */
  display_name: string | null;
  /** When the row was created. */
  created_at: Timestamp;
}
/** A row of the `password_credentials` table. */
export interface PasswordCredentialsTable {
  /** Primary key. */
  id: string;
  /** The user (`users.id`). */
  user_id: string;
  /** The hash algorithm tag (`argon2id`, `pbkdf2-sha256`, `bcrypt`, `framework-identity-v3`); unique per user. */
  algorithm: string;
  /** The password hash in the algorithm's native text format (a PHC string for argon2id and pbkdf2). */
  hash: string;
  /** When the row was created. */
  created_at: Timestamp;
  /** When the row last changed. */
  updated_at: Timestamp;
}
/** A row of the `recovery_codes` table. */
export interface RecoveryCodesTable {
  /** Primary key. */
  id: string;
  /** The user (`users.id`). */
  user_id: string;
  /** SHA-256 of the code (hex). */
  code_hash: string;
  /** When the row was created. */
  created_at: Timestamp;
}
/** A row of the `totp_enrollments` table. */
export interface TotpEnrollmentsTable {
  /** Primary key. */
  id: string;
  /** The user (`users.id`). */
  user_id: string;
  /** The TOTP shared secret, encrypted (the store never sees the plaintext). */
  secret_ciphertext: Uint8Array;
  /** When a first valid code confirmed the enrollment; null while pending. */
  confirmed_at: Timestamp | null;
  /** The last accepted 30 s time step (unix seconds / 30), or null; only moves forward. */
  last_accepted_step: number | null;
  /** When the row was created. */
  created_at: Timestamp;
}
/** A row of the `passkey_credentials` table. */
export interface PasskeyCredentialsTable {
  /** Primary key. */
  id: string;
  /** The user (`users.id`). */
  user_id: string;
  /** The authenticator's credential id (raw bytes); unique. */
  credential_id: Uint8Array;
  /** The credential's COSE public key. */
  public_key: Uint8Array;
  /** The authenticator's signature counter; only moves forward. */
  sign_count: number;
  /** Whether the credential supports user verification (first-factor eligibility). */
  user_verification_capable: boolean;
  /** WebAuthn transport hints of the credential (for example `usb`, `internal`). */
  transports: string[];
  /** The name. */
  name: string | null;
  /** When it was last used, or null. */
  last_used_at: Timestamp | null;
  /** When the row was created. */
  created_at: Timestamp;
}
/** A row of the `passkey_ceremonies` table. */
export interface PasskeyCeremoniesTable {
  /** Primary key. */
  id: string;
  /** For example `registration` or `authentication`. */
  kind: string;
  /** SHA-256 hex of the challenge (the challenge itself is never stored). */
  challenge_hash: string;
  /** The realm (`realms.id`), or null. */
  realm_id: string | null;
  /** The user (`users.id`), or null. */
  user_id: string | null;
  /** Ceremony-specific non-secret state (a JSON object). */
  data: JsonColumn;
  /** When it expires. */
  expires_at: Timestamp;
}
/** A row of the `known_devices` table. */
export interface KnownDevicesTable {
  /** The user (`users.id`). */
  user_id: string;
  /** SHA-256 hex of the device fingerprint (the fingerprint itself is never stored). */
  fingerprint_hash: string;
  /** A description for people, or null. */
  description: string | null;
  /** When the device was first seen. */
  first_seen_at: Timestamp;
  /** When it was last seen. */
  last_seen_at: Timestamp;
}
/** A row of the `federated_identities` table. */
export interface FederatedIdentitiesTable {
  /** Primary key. */
  id: string;
  /** The user (`users.id`). */
  user_id: string;
  /** The external identity provider's id. */
  provider_id: string;
  /** The subject at the provider (for example the OIDC `sub`); unique per provider. */
  external_subject: string;
  /** When the row was created. */
  created_at: Timestamp;
}
/** A row of the `sessions` table. */
export interface SessionsTable {
  /** Primary key. */
  id: string;
  /** The realm (`realms.id`). */
  realm_id: string;
  /** The user (`users.id`). */
  user_id: string;
  /** The MFA level the session reached (for example `Password` or `PhishingResistant`). */
  mfa: string;
  /** The client address, or null. */
  ip_address: string | null;
  /** The client's device (from its User-Agent), or null. */
  device_description: string | null;
  /** The impersonation (`impersonations.id`) the session was started for, or null. */
  impersonation_id: string | null;
  /** When the row was created. */
  created_at: Timestamp;
  /** When it was last seen. */
  last_seen_at: Timestamp;
  /** Idle expiry: moves forward on touch, never past `absolute_expires_at`. */
  idle_expires_at: Timestamp;
  /** When the session ends whatever its activity. */
  absolute_expires_at: Timestamp;
  /** When it was revoked (null: not revoked). */
  revoked_at: Timestamp | null;
  /** The DPoP key thumbprint its refresh tokens are bound to, or null. */
  dpop_jkt: string | null;
}
/** A row of the `refresh_tokens` table. */
export interface RefreshTokensTable {
  /** SHA-256 of the token (hex). */
  token_hash: string;
  /** The rotation family (one login's chain of tokens); reuse revokes the whole family. */
  family_id: string;
  /** The session (`sessions.id`). */
  session_id: string;
  /** The user (`users.id`). */
  user_id: string;
  /** The realm (`realms.id`). */
  realm_id: string;
  /** The organization (`organizations.id`), or null. */
  org_id: string | null;
  /** The app the tokens are for (`aud`), or null for svc itself (the issuer). */
  audience: string | null;
  /** `token_hash` of the token this one replaced; null for the first of a family. */
  parent_hash: string | null;
  /** When the row was created. */
  created_at: Timestamp;
  /** When it expires. */
  expires_at: Timestamp;
  /** When the token was rotated (used once); null while unused. */
  used_at: Timestamp | null;
  /** When it was revoked (null: not revoked). */
  revoked_at: Timestamp | null;
  /** The successor sealed for the refresh grace window (`core/tokens/grace.ts`), or null. */
  grace_successor: string | null;
}
/** A row of the `signing_keys` table. */
export interface SigningKeysTable {
  /** The realm (`realms.id`). */
  realm_id: string;
  /** Key id, unique per realm (the JWT `kid`). */
  kid: string;
  /** Whether this key signs new tokens; at most one per realm. */
  is_primary: boolean;
  /** JWS algorithm, `RS256` by default. */
  algorithm: string;
  /** The private key, PKCS#8 DER. */
  private_key: Uint8Array;
  /** When the row was created. */
  created_at: Timestamp;
  /** When it was retired (null: not retired). */
  retired_at: Timestamp | null;
}
/** A row of the `subject_keys` table. */
export interface SubjectKeysTable {
  /** The subject (user id) the key belongs to. */
  subject_id: string;
  /** Raw AES-256 key (32 bytes); deleting the row crypto-shreds what it encrypted. */
  key: Uint8Array;
  /** When the row was created. */
  created_at: Timestamp;
}
/** A row of the `server_secrets` table. */
export interface ServerSecretsTable {
  /** The name. */
  name: string;
  /** The secret's raw bytes (stored as is: keys used as such, such as HMAC keys, cannot be hashed). */
  secret: Uint8Array;
  /** When the row was created. */
  created_at: Timestamp;
}
/** A row of the `service_accounts` table. */
export interface ServiceAccountsTable {
  /** Primary key. */
  id: string;
  /** The realm (`realms.id`). */
  realm_id: string;
  /** The account's key, unique per realm (what it is looked up by). */
  key: string;
  /** The name people see. */
  display_name: string;
  /** Hash of the current secret (the secret itself is never stored). */
  secret_hash: string;
  /** Hash of the secret before the last rotation, accepted until `previous_secret_expires_at`; or null. */
  previous_secret_hash: string | null;
  /** When the previous secret stops being accepted, or null. */
  previous_secret_expires_at: Timestamp | null;
  /** Whether the account is disabled. */
  disabled: boolean;
  /** When the row was created. */
  created_at: Timestamp;
}
/** A row of the `api_keys` table. */
export interface ApiKeysTable {
  /** Primary key. */
  id: string;
  /** The realm (`realms.id`). */
  realm_id: string;
  /** Whether the key belongs to a user or a service account. */
  owner_kind: "User" | "ServiceAccount";
  /** The owner: a user (`users.id`) or service account (`service_accounts.id`), per `owner_kind`. */
  owner_id: string;
  /** The name. */
  name: string;
  /** SHA-256 of the token (hex). */
  token_hash: string;
  /** When the row was created. */
  created_at: Timestamp;
  /** When it expires, or null. */
  expires_at: Timestamp | null;
  /** When it was revoked (null: not revoked). */
  revoked_at: Timestamp | null;
  /** When it was last used, or null. */
  last_used_at: Timestamp | null;
}
/** A row of the `email_otp_enrollments` table. */
export interface EmailOtpEnrollmentsTable {
  /** The user (`users.id`). */
  user_id: string;
  /** When email OTP was enrolled for the user. */
  enrolled_at: Timestamp;
}
/** A row of the `email_otp_challenges` table. */
export interface EmailOtpChallengesTable {
  /** Caller-chosen primary key; storing the same id again replaces the challenge. */
  challenge_id: string;
  /** SHA-256 of the code (hex). */
  code_hash: string;
  /** When it expires. */
  expires_at: Timestamp;
  /** Wrong codes the challenge still accepts before it is exhausted. */
  remaining_attempts: number;
}
/** A row of the `consumed_tokens` table. */
export interface ConsumedTokensTable {
  /** The consumed token id (JWT `jti`) of a single-use token. */
  jti: string;
  /** When it expires. */
  expires_at: Timestamp;
}
/** A row of the `dpop_proofs` table. */
export interface DpopProofsTable {
  /** SHA-256 of the proof's key thumbprint and `jti`. */
  proof_key: string;
  /** When the proof's acceptance window closes. */
  expires_at: Timestamp;
}
/** A row of the `consumed_saml_assertions` table. */
export interface ConsumedSamlAssertionsTable {
  /** `{connectionId}:{assertionId}` of a used SAML assertion (replay protection). */
  assertion_id: string;
  /** When it expires. */
  expires_at: Timestamp;
}
/** A row of the `authorization_codes` table. */
export interface AuthorizationCodesTable {
  /** SHA-256 of the code (hex). */
  code_hash: string;
  /** The client id. */
  client_id: string;
  /** The redirect URI the code was issued for. */
  redirect_uri: string;
  /** The realm (`realms.id`). */
  realm_id: string;
  /** The user (`users.id`). */
  user_id: string;
  /** The session (`sessions.id`). */
  session_id: string;
  /** The organization (`organizations.id`), or null. */
  org_id: string | null;
  /** The granted scopes. */
  scopes: string[];
  /** When the user authenticated (the OIDC `auth_time`). */
  auth_time: Timestamp;
  /** When it expires. */
  expires_at: Timestamp;
  /** Whether the code was already exchanged; kept so that a replay is told apart from an unknown code. */
  consumed: boolean;
  /** The PKCE code challenge, or null. */
  code_challenge: string | null;
  /** The PKCE code challenge method, or null. */
  code_challenge_method: string | null;
  /** The OIDC nonce of the authorization request, or null. */
  nonce: string | null;
  /** The DPoP key thumbprint the code is bound to (`dpop_jkt`), or null. */
  dpop_jkt: string | null;
}
/** A row of the `token_grants` table. */
export interface TokenGrantsTable {
  /** SHA-256 of the code (hex). */
  code_hash: string;
  /** The client id. */
  client_id: string;
  /** The realm (`realms.id`). */
  realm_id: string;
  /** The user (`users.id`). */
  user_id: string;
  /** The session (`sessions.id`). */
  session_id: string;
  /** The granted scopes. */
  scopes: string[];
  /** When the tokens were issued. */
  issued_at: Timestamp;
  /** The refresh-token family issued with the grant (`refresh_tokens.family_id`); null when none. */
  refresh_family_id: string | null;
}
/** A row of the `break_glass_state` table. */
export interface BreakGlassStateTable {
  /** The realm (`realms.id`). */
  realm_id: string;
  /** When a break-glass drill was last recorded, or null. */
  last_drill_at: Timestamp | null;
  /** When a break-glass login last happened, or null. */
  last_use_at: Timestamp | null;
  /** Set by a break-glass login, cleared by a rotation of the account's password. */
  rotation_required: Generated<boolean>;
  /** When the break-glass account's password was last rotated, or null. */
  last_rotated_at: Generated<Timestamp | null>;
  /** When `breakglass.rotation_required` was last emitted (reminders at most hourly), or null. */
  rotation_reminded_at: Generated<Timestamp | null>;
}
/** A row of the `impersonation_consent` table. */
export interface ImpersonationConsentTable {
  /** The realm id (realm-wide setting) or organization id (organization setting). */
  scope_id: string;
  /** The realm (`realms.id`). */
  realm_id: string;
  /** The organization (`organizations.id`), or null. */
  org_id: string | null;
  /** Whether impersonating a user in this scope needs the user's consent. */
  consent_required: boolean;
  /** When the row last changed. */
  updated_at: Timestamp;
}
/** A row of the `impersonations` table. */
export interface ImpersonationsTable {
  /** Primary key. */
  id: string;
  /** The realm (`realms.id`). */
  realm_id: string;
  /** Who acted. */
  actor_id: string;
  /** The impersonated user (`users.id`). */
  target_id: string;
  /** The organization (`organizations.id`), or null. */
  org_id: string | null;
  /** Why the actor impersonates (given when starting). */
  reason: string;
  /** `PendingConsent` (waiting for the target's approval), `Active` or `Ended`. */
  status: "PendingConsent" | "Active" | "Ended";
  /** Whether the target's consent was required to start. */
  consent_required: boolean;
  /** When the row was created. */
  created_at: Timestamp;
  /** When it became `Active` (at creation without consent, at approval with consent); null before. */
  started_at: Timestamp | null;
  /** When it expires. */
  expires_at: Timestamp;
  /** When it was ended, or null. */
  ended_at: Timestamp | null;
  /** The window asked for, in seconds (under consent, the session's window starts at approval). */
  duration_seconds: Generated<number>;
  /** When the actor's access token was issued (once), or null. */
  token_issued_at: Generated<Timestamp | null>;
}
/** A row of the `clients` table. */
export interface ClientsTable {
  /** Primary key. */
  id: string;
  /** The realm (`realms.id`). */
  realm_id: string;
  /** The client id. */
  client_id: string;
  /** For example `confidential` or `public`. */
  client_type: string;
  /** The registered redirect URIs. */
  redirect_uris: string[];
  /** The registered post-logout redirect URIs. */
  post_logout_redirect_uris: string[];
  /** The scopes the client may request. */
  allowed_scopes: string[];
  /** Whether users must consent before the client gets tokens. */
  require_consent: boolean;
  /** Whether the client is suspended. */
  suspended: boolean;
  /** Hash of the client secret (never plaintext); null for public clients. */
  secret_hash: string | null;
  /** The algorithm tag of `secret_hash`, or null when there is no secret. */
  secret_algorithm: string | null;
  /** True when an import generated the secret, which then has to be handed out or reset. */
  secret_reset_required: boolean;
  /** `private_key_jwt`, or null for the default client authentication. */
  token_endpoint_auth_method: string | null;
  /** The client's public keys (a JWK Set) for `private_key_jwt`. */
  jwks: JsonColumn | null;
  /** Where the client publishes its public keys. */
  jwks_uri: string | null;
  /** Whether the client must use pushed authorization requests (RFC 9126). */
  require_pushed_authorization_requests: Generated<boolean>;
  /** Whether its access tokens must be DPoP-bound (default false). */
  dpop_bound_access_tokens: Generated<boolean>;
  /** Whether a refresh grant answers a new ID token (default true). */
  id_token_on_refresh: Generated<boolean>;
  /** Whether the client registered itself (RFC 7591 dynamic client registration; default false). */
  dynamically_registered: Generated<boolean>;
  /** When the row was created. */
  created_at: Timestamp;
  /** Where the provider POSTs logout tokens (OIDC Back-Channel Logout 1.0), or null. */
  backchannel_logout_uri: string | null;
  /** Whether the client requires `sid` in logout tokens. */
  backchannel_logout_session_required: Generated<boolean>;
  /** Seconds a rotated refresh token still answers its successor (0: off). */
  refresh_token_grace_seconds: Generated<number>;
  /** The name users see, or null (the client id is shown). */
  client_name: string | null;
}
/** A row of the `login_history` table: a user's sign-ins as the risk gate reads them. */
export interface LoginHistoryTable {
  /** The user (`users.id`). */
  user_id: string;
  /** The realm of the latest sign-in. */
  realm_id: string;
  /** When the latest sign-in happened. */
  last_at: Timestamp;
  /** The client address of the latest sign-in, or null (unknown or erased). */
  last_ip: string | null;
  /** The times of the latest sign-ins (ms since the epoch), newest first, at most 500. */
  recent_ms: number[];
}
/** A row of the `security_events` table. */
export interface SecurityEventsTable {
  /** Primary key. */
  id: string;
  /** The realm (`realms.id`), or null. */
  realm_id: string | null;
  /** The user (`users.id`), or null. */
  user_id: string | null;
  /** The organization context the event happened in, or null. */
  org_id: Generated<string | null>;
  /** Stable event kind, for example `login.succeeded`. */
  kind: string;
  /** When it happened. */
  occurred_at: Timestamp;
  /** Event data (JSON); null when absent or redacted. */
  data_json: JsonColumn | null;
  /** The client address, or null. */
  ip_address: string | null;
  /** The client's device (from its User-Agent), or null. */
  device_description: string | null;
}
/** A row of the `admin_audit_entries` table. */
export interface AdminAuditEntriesTable {
  /** The realm (`realms.id`). */
  realm_id: string;
  /** 1, 2, 3, … per realm, without gaps. */
  seq: number;
  /** When it happened. */
  occurred_at: Timestamp;
  /** What was done, for example `role.create`. */
  action: string;
  /** Who acted. */
  actor_id: string;
  /** What kind of actor `actor_id` names. */
  actor_kind: "User" | "ServiceAccount" | "ApiKey" | "System" | "BreakGlass";
  /** The impersonated user or the API key's owner the actor acted for; null otherwise. */
  on_behalf_of: string | null;
  /** What the action concerns (for example a user or assignment id), or null. */
  target: string | null;
  /** The organization (`organizations.id`), or null. */
  org_id: string | null;
  /** Snapshot before the mutation; null when absent or redacted. */
  before_json: JsonColumn | null;
  /** Snapshot after the mutation; null when absent or redacted. */
  after_json: JsonColumn | null;
  /** SHA-256 hex of the canonical JSON of `before_json` (of `null` when absent); kept on redaction. */
  before_digest: string;
  /** SHA-256 hex of the canonical JSON of `after_json` (of `null` when absent); kept on redaction. */
  after_digest: string;
  /** `entry_hash` of the previous entry of the realm (all zeros for the first). */
  prev_hash: string;
  /** SHA-256 hex over the entry's content and `prev_hash` (the hash chain link). */
  entry_hash: string;
}
/** A row of the `webhook_endpoints` table. */
export interface WebhookEndpointsTable {
  /** Primary key. */
  id: string;
  /** The realm (`realms.id`). */
  realm_id: string;
  /** The organization (`organizations.id`), or null. */
  org_id: string | null;
  /** Where deliveries are POSTed. */
  url: string;
  /** A description for people, or null. */
  description: string | null;
  /** The signing secret as issued (`whsec_…`); not hashed, as HMAC signing needs it. */
  secret: string;
  /** The secret before the last rotation, or null. */
  previous_secret: string | null;
  /** When the previous secret stops being used, or null. */
  previous_secret_expires_at: Timestamp | null;
  /** Event-kind patterns the endpoint subscribes to (`*` wildcards, for example `login.*`). */
  event_patterns: string[];
  /** Whether deliveries are made; false once disabled. */
  enabled: boolean;
  /** Failed attempts in a row; reset by a success, disables the endpoint at the threshold. */
  consecutive_failures: number;
  /** When the endpoint was disabled, or null. */
  disabled_at: Timestamp | null;
  /** When the row was created. */
  created_at: Timestamp;
  /** When the row last changed. */
  updated_at: Timestamp;
}
/** A row of the `webhook_deliveries` table. */
export interface WebhookDeliveriesTable {
  /** Primary key. */
  id: string;
  /** The endpoint (`webhook_endpoints.id`). */
  endpoint_id: string;
  /** The event kind delivered, for example `login.succeeded`. */
  event_kind: string;
  /** The raw body, signed as is. */
  payload: string;
  /** Where delivery stands: `pending`, `retrying`, `succeeded` or `dead_letter`. */
  status: "pending" | "retrying" | "succeeded" | "dead_letter";
  /** Attempts started (claims). */
  attempts: number;
  /** When the delivery is next due (a claim's lease end, or the next retry). */
  next_attempt_at: Timestamp;
  /** Why the last attempt failed, or null. */
  last_error: string | null;
  /** The HTTP status of the last attempt, or null. */
  last_status_code: number | null;
  /** When the row was created. */
  created_at: Timestamp;
  /** When it succeeded or was dead-lettered; null while pending. */
  completed_at: Timestamp | null;
}
/** A row of the `mail_outbox` table. */
export interface MailOutboxTable {
  /** Primary key. */
  id: string;
  /** Insertion order (bigserial); assigned by the database. */
  seq: Generated<number>;
  /** What the message is for (`email_otp`, `password_reset`…). */
  kind: string;
  /** The recipient address. */
  recipient: string;
  /** The sender (`From`) as given, such as `svc <no-reply@example.com>`. */
  sender: string;
  /** The subject line. */
  subject: string;
  /** The plain-text body (carries the message's code or link). */
  text_body: string;
  /** The HTML body (carries the message's code or link). */
  html_body: string;
  /** When the row was created. */
  created_at: Timestamp;
  /** When the message was sent; null while pending. */
  sent_at: Timestamp | null;
  /** Delivery state (issue 14): pending, retrying, sent, dead_letter. */
  delivery_status: Generated<"pending" | "retrying" | "sent" | "dead_letter">;
  /** Delivery attempts so far (each claim counts one). */
  attempts: Generated<number>;
  /** When the message is next due (a claim's lease end, or the next retry); null: due now. */
  next_attempt_at: Timestamp | null;
  /** Why the last delivery attempt failed (a one-line transport error), or null. */
  last_error: string | null;
  /** The realm the message belongs to (issue 24); null only for older mail no single realm's user received. */
  realm_id: string | null;
  /** The user the message is for, or null (a sign-up link; older mail). */
  user_id: string | null;
}

/** A row of the `abuse_counters` table. */
export interface AbuseCountersTable {
  /** The counter's key (never a plaintext identifier). */
  key: string;
  /** `''` for a plain windowed counter; a SHA-256 hex for one member of a distinct-identifier set. */
  member: ColumnType<string, string | undefined, string>;
  /** Hits in the current window. */
  count: number;
  /** When the current window started. */
  window_started_at: Timestamp;
  /** When it expires. */
  expires_at: Timestamp;
}

/** Every table of the svc schema. */
export interface Database {
  /** The `realms` table. */
  realms: RealmsTable;
  /** The `organizations` table. */
  organizations: OrganizationsTable;
  /** The `organization_domains` table. */
  organization_domains: OrganizationDomainsTable;
  /** The `users` table. */
  users: UsersTable;
  /** The `org_memberships` table. */
  org_memberships: OrgMembershipsTable;
  /** The `teams` table. */
  teams: TeamsTable;
  /** The `team_members` table. */
  team_members: TeamMembersTable;
  /** The `groups` table. */
  groups: GroupsTable;
  /** The `group_members` table. */
  group_members: GroupMembersTable;
  /** The `roles` table. */
  roles: RolesTable;
  /** The `policies` table. */
  policies: PoliciesTable;
  /** The `grants` table. */
  grants: GrantsTable;
  /** The `role_assignments` table. */
  role_assignments: RoleAssignmentsTable;
  /** The `permission_catalog` table. */
  permission_catalog: PermissionCatalogTable;
  /** The `app_catalog` table. */
  app_catalog: AppCatalogTable;
  /** The `password_credentials` table. */
  password_credentials: PasswordCredentialsTable;
  /** The `recovery_codes` table. */
  recovery_codes: RecoveryCodesTable;
  /** The `totp_enrollments` table. */
  totp_enrollments: TotpEnrollmentsTable;
  /** The `passkey_credentials` table. */
  passkey_credentials: PasskeyCredentialsTable;
  /** The `passkey_ceremonies` table. */
  passkey_ceremonies: PasskeyCeremoniesTable;
  /** The `known_devices` table. */
  known_devices: KnownDevicesTable;
  /** The `federated_identities` table. */
  federated_identities: FederatedIdentitiesTable;
  /** The `sessions` table. */
  sessions: SessionsTable;
  /** The `refresh_tokens` table. */
  refresh_tokens: RefreshTokensTable;
  /** The `signing_keys` table. */
  signing_keys: SigningKeysTable;
  /** The `subject_keys` table. */
  subject_keys: SubjectKeysTable;
  /** The `server_secrets` table. */
  server_secrets: ServerSecretsTable;
  /** The `service_accounts` table. */
  service_accounts: ServiceAccountsTable;
  /** The `api_keys` table. */
  api_keys: ApiKeysTable;
  /** The `email_otp_challenges` table. */
  email_otp_challenges: EmailOtpChallengesTable;
  /** The `email_otp_enrollments` table. */
  email_otp_enrollments: EmailOtpEnrollmentsTable;
  /** The `consumed_tokens` table. */
  consumed_tokens: ConsumedTokensTable;
  /** The `consumed_saml_assertions` table. */
  consumed_saml_assertions: ConsumedSamlAssertionsTable;
  /** The `dpop_proofs` table. */
  dpop_proofs: DpopProofsTable;
  /** The `authorization_codes` table. */
  authorization_codes: AuthorizationCodesTable;
  /** The `token_grants` table. */
  token_grants: TokenGrantsTable;
  /** The `break_glass_state` table. */
  break_glass_state: BreakGlassStateTable;
  /** The `impersonations` table. */
  impersonations: ImpersonationsTable;
  /** The `impersonation_consent` table. */
  impersonation_consent: ImpersonationConsentTable;
  /** The `clients` table. */
  clients: ClientsTable;
  /** The `security_events` table. */
  security_events: SecurityEventsTable;
  /** The `login_history` table. */
  login_history: LoginHistoryTable;
  /** The `admin_audit_entries` table. */
  admin_audit_entries: AdminAuditEntriesTable;
  /** The `webhook_endpoints` table. */
  webhook_endpoints: WebhookEndpointsTable;
  /** The `webhook_deliveries` table. */
  webhook_deliveries: WebhookDeliveriesTable;
  /** The `abuse_counters` table. */
  abuse_counters: AbuseCountersTable;
  /** The `mail_outbox` table. */
  mail_outbox: MailOutboxTable;
  /** The `authz_shadow_comparisons` table. */
  authz_shadow_comparisons: AuthzShadowComparisonsTable;
}

/** `authz_shadow_comparisons` (issue 15). */
export interface AuthzShadowComparisonsTable {
  /** Primary key. */
  id: string;
  /** The realm (`realms.id`). */
  realm_id: string;
  /** The user (`users.id`). */
  user_id: string;
  /** The organization (`organizations.id`), or null. */
  org_id: string | null;
  /** The permission checked. */
  permission: string;
  /** Whether the host's legacy system allowed. */
  legacy_allowed: boolean;
  /** svc's decision (`Allowed`, `Denied`, `DeniedByDefault`). */
  svc_decision: string;
  /** Whether both allowed or both refused. */
  agreed: boolean;
  /** When the comparison was recorded. */
  recorded_at: Timestamp;
}

/** Something queries run on: the database or a transaction of it. */
export type Executor = Kysely<Database> | Transaction<Database>;
