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
  is_default: boolean;
  /** Whether people may sign themselves up on the hosted pages. */
  self_sign_up: Generated<boolean>;
  /** The realm's branding (null: the server's): product name, colour `#rrggbb`, https logo URL. */
  brand_product_name: string | null;
  brand_color: string | null;
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
  status: string;
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
  kind: string;
  value: string;
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
  email: string;
  email_verified: boolean;
  /** The name people see. */
  display_name: string | null;
  status: "Active" | "Suspended";
  attributes: JsonColumn;
  is_break_glass: boolean;
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
  key: string;
  /** The name people see. */
  display_name: string;
  /** When the row was created. */
  created_at: Timestamp;
}
/** A row of the `group_members` table. */
export interface GroupMembersTable {
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
  principal_kind: "User" | "Group";
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
  policy_id: string | null;
  pattern: string;
  effect: "Allow" | "Deny";
  /** The organization (`organizations.id`), or null. */
  org_id: string | null;
  team_ids: string[];
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
  principal_kind: "User" | "Group" | "ServiceAccount";
  principal_id: string;
  /** The organization (`organizations.id`), or null. */
  org_id: string | null;
  /** When the row was created. */
  created_at: Timestamp;
}
/** A row of the `permission_catalog` table. */
export interface PermissionCatalogTable {
  permission_id: string;
  /** A description for people, or null. */
  description: string | null;
  last_synced_at: Timestamp;
  /** When it was retired (null: not retired). */
  retired_at: Timestamp | null;
}
/** A row of the `app_catalog` table. */
export interface AppCatalogTable {
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
  algorithm: string;
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
  secret_ciphertext: Uint8Array;
  confirmed_at: Timestamp | null;
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
  credential_id: Uint8Array;
  public_key: Uint8Array;
  sign_count: number;
  user_verification_capable: boolean;
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
  kind: string;
  challenge_hash: string;
  /** The realm (`realms.id`), or null. */
  realm_id: string | null;
  /** The user (`users.id`), or null. */
  user_id: string | null;
  data: JsonColumn;
  /** When it expires. */
  expires_at: Timestamp;
}
/** A row of the `known_devices` table. */
export interface KnownDevicesTable {
  /** The user (`users.id`). */
  user_id: string;
  fingerprint_hash: string;
  /** A description for people, or null. */
  description: string | null;
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
  provider_id: string;
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
  mfa: string;
  /** The client address, or null. */
  ip_address: string | null;
  /** The client's device (from its User-Agent), or null. */
  device_description: string | null;
  impersonation_id: string | null;
  /** When the row was created. */
  created_at: Timestamp;
  /** When it was last seen. */
  last_seen_at: Timestamp;
  idle_expires_at: Timestamp;
  absolute_expires_at: Timestamp;
  /** When it was revoked (null: not revoked). */
  revoked_at: Timestamp | null;
}
/** A row of the `refresh_tokens` table. */
export interface RefreshTokensTable {
  /** SHA-256 of the token (hex). */
  token_hash: string;
  family_id: string;
  /** The session (`sessions.id`). */
  session_id: string;
  /** The user (`users.id`). */
  user_id: string;
  /** The realm (`realms.id`). */
  realm_id: string;
  /** The organization (`organizations.id`), or null. */
  org_id: string | null;
  audience: string | null;
  parent_hash: string | null;
  /** When the row was created. */
  created_at: Timestamp;
  /** When it expires. */
  expires_at: Timestamp;
  used_at: Timestamp | null;
  /** When it was revoked (null: not revoked). */
  revoked_at: Timestamp | null;
}
/** A row of the `signing_keys` table. */
export interface SigningKeysTable {
  /** The realm (`realms.id`). */
  realm_id: string;
  kid: string;
  is_primary: boolean;
  algorithm: string;
  private_key: Uint8Array;
  /** When the row was created. */
  created_at: Timestamp;
  /** When it was retired (null: not retired). */
  retired_at: Timestamp | null;
}
/** A row of the `subject_keys` table. */
export interface SubjectKeysTable {
  subject_id: string;
  key: Uint8Array;
  /** When the row was created. */
  created_at: Timestamp;
}
/** A row of the `server_secrets` table. */
export interface ServerSecretsTable {
  /** The name. */
  name: string;
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
  key: string;
  /** The name people see. */
  display_name: string;
  secret_hash: string;
  previous_secret_hash: string | null;
  previous_secret_expires_at: Timestamp | null;
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
  owner_kind: "User" | "ServiceAccount";
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
  enrolled_at: Timestamp;
}
/** A row of the `email_otp_challenges` table. */
export interface EmailOtpChallengesTable {
  challenge_id: string;
  /** SHA-256 of the code (hex). */
  code_hash: string;
  /** When it expires. */
  expires_at: Timestamp;
  remaining_attempts: number;
}
/** A row of the `consumed_tokens` table. */
export interface ConsumedTokensTable {
  jti: string;
  /** When it expires. */
  expires_at: Timestamp;
}
/** A row of the `consumed_saml_assertions` table. */
export interface ConsumedSamlAssertionsTable {
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
  redirect_uri: string;
  /** The realm (`realms.id`). */
  realm_id: string;
  /** The user (`users.id`). */
  user_id: string;
  /** The session (`sessions.id`). */
  session_id: string;
  /** The organization (`organizations.id`), or null. */
  org_id: string | null;
  scopes: string[];
  auth_time: Timestamp;
  /** When it expires. */
  expires_at: Timestamp;
  consumed: boolean;
  code_challenge: string | null;
  code_challenge_method: string | null;
  nonce: string | null;
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
  scopes: string[];
  issued_at: Timestamp;
  refresh_family_id: string | null;
}
/** A row of the `break_glass_state` table. */
export interface BreakGlassStateTable {
  /** The realm (`realms.id`). */
  realm_id: string;
  last_drill_at: Timestamp | null;
  last_use_at: Timestamp | null;
  rotation_required: Generated<boolean>;
  last_rotated_at: Generated<Timestamp | null>;
  rotation_reminded_at: Generated<Timestamp | null>;
}
/** A row of the `impersonation_consent` table. */
export interface ImpersonationConsentTable {
  scope_id: string;
  /** The realm (`realms.id`). */
  realm_id: string;
  /** The organization (`organizations.id`), or null. */
  org_id: string | null;
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
  target_id: string;
  /** The organization (`organizations.id`), or null. */
  org_id: string | null;
  reason: string;
  status: "PendingConsent" | "Active" | "Ended";
  consent_required: boolean;
  /** When the row was created. */
  created_at: Timestamp;
  started_at: Timestamp | null;
  /** When it expires. */
  expires_at: Timestamp;
  ended_at: Timestamp | null;
  duration_seconds: Generated<number>;
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
  client_type: string;
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  allowed_scopes: string[];
  require_consent: boolean;
  suspended: boolean;
  secret_hash: string | null;
  secret_algorithm: string | null;
  secret_reset_required: boolean;
  /** `private_key_jwt`, or null for the default client authentication. */
  token_endpoint_auth_method: string | null;
  /** The client's public keys (a JWK Set) for `private_key_jwt`. */
  jwks: JsonColumn | null;
  /** Where the client publishes its public keys. */
  jwks_uri: string | null;
  /** When the row was created. */
  created_at: Timestamp;
}
/** A row of the `security_events` table. */
export interface SecurityEventsTable {
  /** Primary key. */
  id: string;
  /** The realm (`realms.id`), or null. */
  realm_id: string | null;
  /** The user (`users.id`), or null. */
  user_id: string | null;
  kind: string;
  /** When it happened. */
  occurred_at: Timestamp;
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
  seq: number;
  /** When it happened. */
  occurred_at: Timestamp;
  action: string;
  /** Who acted. */
  actor_id: string;
  actor_kind: "User" | "ServiceAccount" | "ApiKey" | "System" | "BreakGlass";
  on_behalf_of: string | null;
  target: string | null;
  /** The organization (`organizations.id`), or null. */
  org_id: string | null;
  before_json: JsonColumn | null;
  after_json: JsonColumn | null;
  before_digest: string;
  after_digest: string;
  prev_hash: string;
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
  url: string;
  /** A description for people, or null. */
  description: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Timestamp | null;
  event_patterns: string[];
  enabled: boolean;
  consecutive_failures: number;
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
  endpoint_id: string;
  event_kind: string;
  payload: string;
  status: "pending" | "retrying" | "succeeded" | "dead_letter";
  attempts: number;
  next_attempt_at: Timestamp;
  last_error: string | null;
  last_status_code: number | null;
  /** When the row was created. */
  created_at: Timestamp;
  completed_at: Timestamp | null;
}
/** A row of the `mail_outbox` table. */
export interface MailOutboxTable {
  /** Primary key. */
  id: string;
  /** Insertion order (bigserial); assigned by the database. */
  seq: Generated<number>;
  kind: string;
  recipient: string;
  sender: string;
  subject: string;
  text_body: string;
  html_body: string;
  /** When the row was created. */
  created_at: Timestamp;
  sent_at: Timestamp | null;
  /** Delivery state (issue 14): pending, retrying, sent, dead_letter. */
  delivery_status: Generated<"pending" | "retrying" | "sent" | "dead_letter">;
  /** Delivery attempts so far (each claim counts one). */
  attempts: Generated<number>;
  /** When the message is next due (a claim's lease end, or the next retry); null: due now. */
  next_attempt_at: Timestamp | null;
  last_error: string | null;
}

/** A row of the `abuse_counters` table. */
export interface AbuseCountersTable {
  key: string;
  member: ColumnType<string, string | undefined, string>;
  count: number;
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
  permission: string;
  legacy_allowed: boolean;
  svc_decision: string;
  agreed: boolean;
  recorded_at: Timestamp;
}

/** Something queries run on: the database or a transaction of it. */
export type Executor = Kysely<Database> | Transaction<Database>;
