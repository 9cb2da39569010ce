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

export interface RealmsTable {
  id: string;
  name: string;
  display_name: string;
  is_default: boolean;
  created_at: Timestamp;
}
export interface OrganizationsTable {
  id: string;
  realm_id: string;
  name: string;
  display_name: string;
  status: string;
  default_identity_provider_id: string | null;
  created_at: Timestamp;
  /** Bumped by every update (ETag / If-Match of the admin API). */
  version: Generated<number>;
}
export interface OrganizationDomainsTable {
  id: string;
  org_id: string;
  kind: string;
  value: string;
  verified: boolean;
  created_at: Timestamp;
  /** The DNS TXT proof token of the admin API (public by design: it is published in DNS). */
  verification_token: Generated<string | null>;
}
export interface UsersTable {
  id: string;
  realm_id: string;
  email: string;
  email_verified: boolean;
  display_name: string | null;
  status: "Active" | "Suspended";
  attributes: JsonColumn;
  is_break_glass: boolean;
  anonymized_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Rotated on every password change; reset links carry it (issue 19 item 6). */
  credential_stamp: Generated<string>;
  /** Bumped by every update (the admin API's ETag). */
  version: Generated<number>;
}
export interface OrgMembershipsTable {
  org_id: string;
  user_id: string;
  created_at: Timestamp;
}
export interface TeamsTable {
  id: string;
  realm_id: string;
  org_id: string;
  name: string;
  created_at: Timestamp;
}
export interface TeamMembersTable {
  team_id: string;
  user_id: string;
  created_at: Timestamp;
}
export interface GroupsTable {
  id: string;
  realm_id: string;
  org_id: string | null;
  key: string;
  display_name: string;
  created_at: Timestamp;
}
export interface GroupMembersTable {
  group_id: string;
  user_id: string;
  created_at: Timestamp;
}
export interface RolesTable {
  id: string;
  realm_id: string;
  org_id: string | null;
  key: string;
  display_name: string;
  /** Bumped by every update (the ETag of the admin API). */
  version: Generated<number>;
  created_at: Timestamp;
}
export interface PoliciesTable {
  id: string;
  realm_id: string;
  org_id: string | null;
  name: string;
  principal_kind: "User" | "Group";
  principal_id: string;
  created_at: Timestamp;
}
export interface GrantsTable {
  id: string;
  role_id: string | null;
  policy_id: string | null;
  pattern: string;
  effect: "Allow" | "Deny";
  org_id: string | null;
  team_ids: string[];
  condition: JsonColumn | null;
  created_at: Timestamp;
}
export interface RoleAssignmentsTable {
  id: string;
  realm_id: string;
  role_id: string;
  principal_kind: "User" | "Group" | "ServiceAccount";
  principal_id: string;
  org_id: string | null;
  created_at: Timestamp;
}
export interface PermissionCatalogTable {
  permission_id: string;
  description: string | null;
  last_synced_at: Timestamp;
  retired_at: Timestamp | null;
}
export interface AppCatalogTable {
  app_key: string;
  display_name: string | null;
  created_at: Timestamp;
}
export interface PasswordCredentialsTable {
  id: string;
  user_id: string;
  algorithm: string;
  hash: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}
export interface RecoveryCodesTable {
  id: string;
  user_id: string;
  code_hash: string;
  created_at: Timestamp;
}
export interface TotpEnrollmentsTable {
  id: string;
  user_id: string;
  secret_ciphertext: Uint8Array;
  confirmed_at: Timestamp | null;
  last_accepted_step: number | null;
  created_at: Timestamp;
}
export interface PasskeyCredentialsTable {
  id: string;
  user_id: string;
  credential_id: Uint8Array;
  public_key: Uint8Array;
  sign_count: number;
  user_verification_capable: boolean;
  transports: string[];
  name: string | null;
  last_used_at: Timestamp | null;
  created_at: Timestamp;
}
export interface PasskeyCeremoniesTable {
  id: string;
  kind: string;
  challenge_hash: string;
  realm_id: string | null;
  user_id: string | null;
  data: JsonColumn;
  expires_at: Timestamp;
}
export interface KnownDevicesTable {
  user_id: string;
  fingerprint_hash: string;
  description: string | null;
  first_seen_at: Timestamp;
  last_seen_at: Timestamp;
}
export interface FederatedIdentitiesTable {
  id: string;
  user_id: string;
  provider_id: string;
  external_subject: string;
  created_at: Timestamp;
}
export interface SessionsTable {
  id: string;
  realm_id: string;
  user_id: string;
  mfa: string;
  ip_address: string | null;
  device_description: string | null;
  impersonation_id: string | null;
  created_at: Timestamp;
  last_seen_at: Timestamp;
  idle_expires_at: Timestamp;
  absolute_expires_at: Timestamp;
  revoked_at: Timestamp | null;
}
export interface RefreshTokensTable {
  token_hash: string;
  family_id: string;
  session_id: string;
  user_id: string;
  realm_id: string;
  org_id: string | null;
  audience: string | null;
  parent_hash: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  revoked_at: Timestamp | null;
}
export interface SigningKeysTable {
  realm_id: string;
  kid: string;
  is_primary: boolean;
  algorithm: string;
  private_key: Uint8Array;
  created_at: Timestamp;
  retired_at: Timestamp | null;
}
export interface SubjectKeysTable {
  subject_id: string;
  key: Uint8Array;
  created_at: Timestamp;
}
export interface ServerSecretsTable {
  name: string;
  secret: Uint8Array;
  created_at: Timestamp;
}
export interface ServiceAccountsTable {
  id: string;
  realm_id: string;
  key: string;
  display_name: string;
  secret_hash: string;
  previous_secret_hash: string | null;
  previous_secret_expires_at: Timestamp | null;
  disabled: boolean;
  created_at: Timestamp;
}
export interface ApiKeysTable {
  id: string;
  realm_id: string;
  owner_kind: "User" | "ServiceAccount";
  owner_id: string;
  name: string;
  token_hash: string;
  created_at: Timestamp;
  expires_at: Timestamp | null;
  revoked_at: Timestamp | null;
  last_used_at: Timestamp | null;
}
export interface EmailOtpEnrollmentsTable {
  user_id: string;
  enrolled_at: Timestamp;
}
export interface EmailOtpChallengesTable {
  challenge_id: string;
  code_hash: string;
  expires_at: Timestamp;
  remaining_attempts: number;
}
export interface ConsumedTokensTable {
  jti: string;
  expires_at: Timestamp;
}
export interface ConsumedSamlAssertionsTable {
  assertion_id: string;
  expires_at: Timestamp;
}
export interface AuthorizationCodesTable {
  code_hash: string;
  client_id: string;
  redirect_uri: string;
  realm_id: string;
  user_id: string;
  session_id: string;
  org_id: string | null;
  scopes: string[];
  auth_time: Timestamp;
  expires_at: Timestamp;
  consumed: boolean;
  code_challenge: string | null;
  code_challenge_method: string | null;
  nonce: string | null;
}
export interface TokenGrantsTable {
  code_hash: string;
  client_id: string;
  realm_id: string;
  user_id: string;
  session_id: string;
  scopes: string[];
  issued_at: Timestamp;
  refresh_family_id: string | null;
}
export interface BreakGlassStateTable {
  realm_id: string;
  last_drill_at: Timestamp | null;
  last_use_at: Timestamp | null;
  rotation_required: Generated<boolean>;
  last_rotated_at: Generated<Timestamp | null>;
  rotation_reminded_at: Generated<Timestamp | null>;
}
export interface ImpersonationConsentTable {
  scope_id: string;
  realm_id: string;
  org_id: string | null;
  consent_required: boolean;
  updated_at: Timestamp;
}
export interface ImpersonationsTable {
  id: string;
  realm_id: string;
  actor_id: string;
  target_id: string;
  org_id: string | null;
  reason: string;
  status: "PendingConsent" | "Active" | "Ended";
  consent_required: boolean;
  created_at: Timestamp;
  started_at: Timestamp | null;
  expires_at: Timestamp;
  ended_at: Timestamp | null;
  duration_seconds: Generated<number>;
  token_issued_at: Generated<Timestamp | null>;
}
export interface ClientsTable {
  id: string;
  realm_id: string;
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
  created_at: Timestamp;
}
export interface SecurityEventsTable {
  id: string;
  realm_id: string | null;
  user_id: string | null;
  kind: string;
  occurred_at: Timestamp;
  data_json: JsonColumn | null;
  ip_address: string | null;
  device_description: string | null;
}
export interface AdminAuditEntriesTable {
  realm_id: string;
  seq: number;
  occurred_at: Timestamp;
  action: string;
  actor_id: string;
  actor_kind: "User" | "ServiceAccount" | "ApiKey" | "System" | "BreakGlass";
  on_behalf_of: string | null;
  target: string | null;
  org_id: string | null;
  before_json: JsonColumn | null;
  after_json: JsonColumn | null;
  before_digest: string;
  after_digest: string;
  prev_hash: string;
  entry_hash: string;
}
export interface WebhookEndpointsTable {
  id: string;
  realm_id: string;
  org_id: string | null;
  url: string;
  description: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Timestamp | null;
  event_patterns: string[];
  enabled: boolean;
  consecutive_failures: number;
  disabled_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}
export interface WebhookDeliveriesTable {
  id: string;
  endpoint_id: string;
  event_kind: string;
  payload: string;
  status: "pending" | "retrying" | "succeeded" | "dead_letter";
  attempts: number;
  next_attempt_at: Timestamp;
  last_error: string | null;
  last_status_code: number | null;
  created_at: Timestamp;
  completed_at: Timestamp | null;
}
export interface MailOutboxTable {
  id: string;
  /** Insertion order (bigserial); assigned by the database. */
  seq: Generated<number>;
  kind: string;
  recipient: string;
  sender: string;
  subject: string;
  text_body: string;
  html_body: string;
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

export interface AbuseCountersTable {
  key: string;
  member: ColumnType<string, string | undefined, string>;
  count: number;
  window_started_at: Timestamp;
  expires_at: Timestamp;
}

/** Every table of the svc schema. */
export interface Database {
  realms: RealmsTable;
  organizations: OrganizationsTable;
  organization_domains: OrganizationDomainsTable;
  users: UsersTable;
  org_memberships: OrgMembershipsTable;
  teams: TeamsTable;
  team_members: TeamMembersTable;
  groups: GroupsTable;
  group_members: GroupMembersTable;
  roles: RolesTable;
  policies: PoliciesTable;
  grants: GrantsTable;
  role_assignments: RoleAssignmentsTable;
  permission_catalog: PermissionCatalogTable;
  app_catalog: AppCatalogTable;
  password_credentials: PasswordCredentialsTable;
  recovery_codes: RecoveryCodesTable;
  totp_enrollments: TotpEnrollmentsTable;
  passkey_credentials: PasskeyCredentialsTable;
  passkey_ceremonies: PasskeyCeremoniesTable;
  known_devices: KnownDevicesTable;
  federated_identities: FederatedIdentitiesTable;
  sessions: SessionsTable;
  refresh_tokens: RefreshTokensTable;
  signing_keys: SigningKeysTable;
  subject_keys: SubjectKeysTable;
  server_secrets: ServerSecretsTable;
  service_accounts: ServiceAccountsTable;
  api_keys: ApiKeysTable;
  email_otp_challenges: EmailOtpChallengesTable;
  email_otp_enrollments: EmailOtpEnrollmentsTable;
  consumed_tokens: ConsumedTokensTable;
  consumed_saml_assertions: ConsumedSamlAssertionsTable;
  authorization_codes: AuthorizationCodesTable;
  token_grants: TokenGrantsTable;
  break_glass_state: BreakGlassStateTable;
  impersonations: ImpersonationsTable;
  impersonation_consent: ImpersonationConsentTable;
  clients: ClientsTable;
  security_events: SecurityEventsTable;
  admin_audit_entries: AdminAuditEntriesTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  abuse_counters: AbuseCountersTable;
  mail_outbox: MailOutboxTable;
  authz_shadow_comparisons: AuthzShadowComparisonsTable;
}

/** `authz_shadow_comparisons` (issue 15). */
export interface AuthzShadowComparisonsTable {
  id: string;
  realm_id: string;
  user_id: string;
  org_id: string | null;
  permission: string;
  legacy_allowed: boolean;
  svc_decision: string;
  agreed: boolean;
  recorded_at: Timestamp;
}

/** Something queries run on: the database or a transaction of it. */
export type Executor = Kysely<Database> | Transaction<Database>;
