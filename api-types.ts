/**
 * The types svc's public API refers to (stores, records, options, results), exported beside it by
 * the entry points that need them (`@svc/svc` and `@svc/svc/server`), so every type a signature
 * names is documented and importable.
 *
 * @module
 */

export type {
  CaptchaProvider,
  CaptchaVerification,
  CaptchaVerifyContext,
  FetchLike,
  SiteverifyOptions,
} from "./core/abuse/captcha.ts";
export type {
  CounterReservation,
  CounterStore,
  CounterValue,
  DistinctRequest,
  ReserveRequest,
} from "./core/abuse/counter-store.ts";
export type {
  AbuseDecision,
  AbuseGate,
  AbuseLayerLimit,
  AbuseLayerName,
  AbuseLayerReport,
  AbuseLimits,
  AbuseOutcome,
  AttemptReservation,
  FailMode,
  LoginAttempt,
} from "./core/abuse/gate.ts";
export type { RequestThrottle, ThrottleDecision } from "./core/abuse/request-throttle.ts";
export type { BootstrapReport } from "./core/accounts/bootstrap.ts";
export type { AccountFlows, CreatedInvitation } from "./core/accounts/flows.ts";
export type { StatusChangeOptions, SuspensionDeps } from "./core/accounts/suspension.ts";
export type { AuditActor, TransactionalEvents } from "./core/audit/mutation.ts";
export type {
  CompiledCondition,
  ConditionBags,
  ConditionDocument,
  ConditionLeaf,
  ConditionNode,
  ConditionOperator,
} from "./core/authz/condition.ts";
export type { CompiledSubject, SubjectSnapshot } from "./core/authz/evaluator.ts";
export type { CompiledGrant, Effect } from "./core/authz/grant.ts";
export type { Bucket, GrantIndex, ServiceEntry, Slot } from "./core/authz/index.ts";
export type { PatternSegment, PermissionPattern } from "./core/authz/pattern.ts";
export type { PermissionId, Scope } from "./core/authz/permission.ts";
export type {
  AbuseLayerConfig,
  AbuseLayerInput,
  CaptchaProviderName,
  DeclaredGrantConfig,
  DeclaredPermissionConfig,
  DeclaredRoleConfig,
  DeclaredRoleInput,
  FlagInput,
  StorageConfig,
  ThrottleRuleConfig,
  ThrottleRuleInput,
} from "./core/config/types.ts";
export type {
  CookiesConfig,
  CookiesConfigInput,
  ImpersonationConfig,
  ImpersonationConfigInput,
  SessionsConfig,
  SessionsConfigInput,
} from "./core/sessions/settings.ts";
export type { BootstrapConfig, BootstrapConfigInput } from "./core/accounts/settings.ts";
export type { StorageConfigInput } from "./core/storage/settings.ts";
export type { AuthzConfig, AuthzConfigInput } from "./core/authz/settings.ts";
export type { ImportsConfig, ImportsConfigInput } from "./core/imports/settings.ts";
export type { MetricsConfig, MetricsConfigInput } from "./core/metrics/settings.ts";
export type { MaintenanceConfig, MaintenanceConfigInput } from "./core/maintenance/settings.ts";
export type { BreakGlassConfig, BreakGlassConfigInput } from "./core/break-glass/settings.ts";
export type { DpopConfig, DpopConfigInput } from "./core/dpop/settings.ts";
export type { EmailOtpConfig, EmailOtpConfigInput } from "./core/mfa/settings.ts";
export type { TotpConfig, TotpConfigInput } from "./core/totp/settings.ts";
export type {
  PasskeyConfig,
  PasskeyConfigInput,
  RelyingPartyConfig,
  RelyingPartyConfigInput,
} from "./core/passkeys/settings.ts";
export type {
  AbuseConfig,
  AbuseConfigInput,
  ThrottleConfig,
  ThrottleConfigInput,
} from "./core/abuse/settings.ts";
export type {
  OutboundConfig,
  OutboundConfigInput,
  ServerConfig,
  ServerConfigInput,
} from "./core/net/settings.ts";
export type { TokensConfig, TokensConfigInput } from "./core/tokens/settings.ts";
export type {
  MailConfig,
  MailConfigInput,
  MailDeliveryConfig,
  MailDeliveryConfigInput,
  SmtpConfig,
  SmtpConfigInput,
} from "./core/mail/settings.ts";
export type { PasswordHashingConfig, PasswordHashingConfigInput } from "./core/passwords/settings.ts";
export type { WebhooksConfig, WebhooksConfigInput } from "./core/webhooks/settings.ts";
export type { RiskConfig, RiskConfigInput } from "./core/risk/settings.ts";
export type { ApiKeyAuthStores } from "./core/credentials/api-keys.ts";
export type { PermissionDefinition } from "./core/definitions/svc-permissions.ts";
export type {
  DeviceSighting,
  KnownDevices,
  NewDeviceAlert,
  NewDeviceAlertHook,
} from "./core/devices/known-devices.ts";
export type { SvcError } from "./core/errors.ts";
export type { EmitInTransaction, EventOrigin } from "./core/events/publisher.ts";
export type { EventSink, EventSubscriber, SvcEvent } from "./core/events/sink.ts";
export type { AspNetRow, AspNetTables } from "./core/imports/aspnet.ts";
export type { HashedSecret } from "./core/imports/engine.ts";
export type { ImportCounts, IssueSeverity, OrgMapping } from "./core/imports/model.ts";
export type { GeneratedSigningKey } from "./core/keys/generate.ts";
export type { LoadedSigningKey, PublicSigningJwk } from "./core/keys/load.ts";
export type { JwksDocument, KeyRing } from "./core/keys/ring.ts";
export type {
  LoginOrigin,
  LoginPipeline,
  LoginRequest,
  MfaFactor,
  MfaVerifyRequest,
  PendingFactor,
  PendingMfa,
  ReadyLogin,
  SecurityEventWriter,
} from "./core/login/pipeline.ts";
export type {
  FactorsResetInput,
  ImpersonationConsentMessageInput,
  LoginBlockedAlertInput,
  MailLocale,
  SignUpExistingInput,
} from "./core/mail/messages.ts";
export type { MailAddressee, MailKind, MailMessage, MailTransport } from "./core/mail/transport.ts";
export type { Counter, GaugeSample, Histogram, Labels, MetricsRegistry } from "./core/metrics/registry.ts";
export type { SvcMetrics } from "./core/metrics/svc-metrics.ts";
export type {
  EmailOtpIssued,
  EmailOtpIssueInput,
  EmailOtpService,
  EmailOtpSettings,
  EmailOtpVerifyResult,
} from "./core/mfa/email-otp.ts";
export type { RecoveryCodeService } from "./core/mfa/recovery-codes.ts";
export type { AssertionFacts, AuthenticatorDataSummary, SignCountOutcome } from "./core/passkeys/rules.ts";
export type {
  AuthenticationResponse,
  CeremonyStart,
  RegistrationResponse,
  VerifiedAssertion,
} from "./core/passkeys/service.ts";
export type { Argon2idParams, PasswordConfig } from "./core/passwords/argon2-params.ts";
export type { ARGON2ID_TAG } from "./core/passwords/argon2id.ts";
export type { Argon2idRawFunction } from "./core/passwords/argon2-simd.ts";
export type { PasswordJob, PasswordJobMessage, PasswordJobReply } from "./core/passwords/jobs.ts";
export type { PasswordInput } from "./core/passwords/password-bytes.ts";
export type { PasswordService, PasswordVerification, TaggedPasswordHash } from "./core/passwords/service.ts";
export type {
  DeviceRecognizer,
  ExternalRiskInput,
  ExternalRiskProvider,
  RiskCompose,
  RiskContext,
  RiskDecision,
  RiskGate,
  RiskOutcome,
  RiskSettings,
  RiskSignal,
  RiskSignalName,
} from "./core/risk/gate.ts";
export type {
  GeoLocation,
  GeoLocator,
  IpReputation,
  LoginHistory,
  LoginRecord,
} from "./core/risk/providers.ts";
export type {
  EndedSession,
  EndedSessions,
  SessionEndAnnouncer,
  SessionEndStatus,
} from "./core/sessions/ended.ts";
export type {
  AccessTokenResponse,
  CreatedSession,
  IssuedTokens,
  OpenedSession,
  SessionService,
  SignInInput,
  SwitchingCaller,
  TokenResponse,
} from "./core/sessions/service.ts";
export type { BuiltSnapshot, SkippedGrant } from "./core/snapshots/build.ts";
export type { CacheBus, CacheInvalidation } from "./core/snapshots/bus.ts";
export type { SubjectSnapshots } from "./core/snapshots/service.ts";
export type { VerifiedTokenCache } from "./core/tokens/cache.ts";
export type { MintedToken } from "./core/tokens/mint.ts";
export type { MintOptions, TokenService, VerifyOptions } from "./core/tokens/service.ts";
export type {
  AccessTokenClaims,
  ActorClaim,
  BaseClaims,
  EmailVerificationClaims,
  ImpersonationConsentClaims,
  InvitationClaims,
  MfaTokenClaims,
  PasswordResetClaims,
  SingleUseTokenType,
  TokenClaimsByType,
  TokenMintInput,
  TokenType,
  TokenTypes,
} from "./core/tokens/types.ts";
export type {
  SecretCipher,
  TotpConfirmResult,
  TotpEnrollmentStart,
  TotpService,
  TotpStatus,
  TotpVerifyResult,
} from "./core/totp/service.ts";
export type { TotpAlgorithm, TotpParameters } from "./core/totp/totp.ts";
export type { CookieSettings, CookieTokens } from "./http/auth/cookies.ts";
export type { SignInResponder } from "./http/auth/login-response.ts";
export type { Authenticator, Principal, PrincipalKind } from "./http/auth/principal.ts";
export type { TokenAuthenticatorOptions } from "./http/auth/token-authenticator.ts";
export type {
  DocumentedInstaller,
  HttpMethod,
  OperationAuth,
  OperationDoc,
  OperationList,
  QuerySchema,
  ResponseDoc,
} from "./http/openapi/operation.ts";
export type { RequestLogEntry } from "./http/request-log.ts";
export type { AuthRouteDeps } from "./http/routes/auth.ts";
export type { ProfileRouteDeps } from "./http/routes/profile.ts";
export type {
  AdminAuditEntry,
  AdminAuditStore,
  AuditActorKind,
  AuditChainBreak,
  AuditChainReport,
  AuditChainVerification,
  NewAdminAuditEntry,
} from "./core/storage/admin-audit.ts";
export type { ApiKeyFilter, ApiKeyRecord, ApiKeyStore, NewApiKey } from "./core/storage/api-keys.ts";
export type { AppCatalogEntry, AppCatalogStore, RegisterAppInput } from "./core/storage/app-catalog.ts";
export type {
  AuthorizationCode,
  AuthorizationCodeStore,
  CodeExchangeResult,
  NewAuthorizationCode,
} from "./core/storage/authorization-codes.ts";
export type { BreakGlassAccount, BreakGlassState, BreakGlassStore } from "./core/storage/break-glass.ts";
export type { ClientFields, ClientRecord, ClientStore } from "./core/storage/clients.ts";
export type { ConsumedTokenStore } from "./core/storage/consumed-tokens.ts";
export type { EmailOtpEnrollmentStore } from "./core/storage/email-otp-enrollments.ts";
export type { EmailOtpChallenge, EmailOtpStore, OtpVerifyResult } from "./core/storage/email-otp.ts";
export type { FederatedIdentityRecord, FederatedIdentityStore } from "./core/storage/federated-identities.ts";
export type { CreateGroupInput, Group, GroupMember, GroupStore, LevelFilter } from "./core/storage/groups.ts";
export type {
  Impersonation,
  ImpersonationConsentSetting,
  ImpersonationFilter,
  ImpersonationState,
  ImpersonationStatus,
  ImpersonationStore,
  NewImpersonation,
} from "./core/storage/impersonations.ts";
export type { KnownDeviceRecord, KnownDeviceStore } from "./core/storage/known-devices.ts";
export type {
  MailDeliveryStatus,
  MailOutboxStore,
  NewOutboxMessage,
  OutboxMessage,
  OutboxQuery,
} from "./core/storage/mail-outbox.ts";
export type {
  AddOrganizationDomainInput,
  CreateOrganizationInput,
  Organization,
  OrganizationDomain,
  OrganizationPage,
  OrganizationSearch,
  OrganizationStatus,
  OrganizationStore,
  OrgMembership,
  PageRequest,
  UpdateOrganizationInput,
  UpdateOrganizationOptions,
  VerifiedDomainMatch,
} from "./core/storage/organizations.ts";
export type {
  NewPasskeyCeremony,
  PasskeyCeremonyRecord,
  PasskeyCeremonyStore,
} from "./core/storage/passkey-ceremonies.ts";
export type {
  NewPasskeyCredential,
  PasskeyCredentialRecord,
  PasskeyCredentialStore,
} from "./core/storage/passkey-credentials.ts";
export type {
  PasswordCredentialRecord,
  PasswordCredentialStore,
  PasswordHash,
} from "./core/storage/password-credentials.ts";
export type {
  CatalogSyncResult,
  DeclaredPermission as CatalogPermission,
  PermissionCatalogEntry,
  PermissionCatalogStore,
} from "./core/storage/permission-catalog.ts";
export type {
  PersonalDataStore,
  StoredAuditPayloads,
  StoredFreeText,
  StoredMailText,
  StoredPayload,
} from "./core/storage/personal-data.ts";
export type { CreatePolicyInput, Policy, PolicyPrincipalKind, PolicyStore } from "./core/storage/policies.ts";
export type {
  CreateRealmInput,
  Realm,
  RealmBranding,
  RealmStore,
  UpdateRealmInput,
} from "./core/storage/realms.ts";
export type { NewRecoveryCode, RecoveryCodeStore } from "./core/storage/recovery-codes.ts";
export type {
  NewRefreshToken,
  RefreshGrantEvent,
  RefreshGrantGuard,
  RefreshGrantRotation,
  RefreshGuardFailure,
  RefreshRotation,
  RefreshTokenRecord,
  RefreshTokenStore,
  RotatedRefreshToken,
} from "./core/storage/refresh-tokens.ts";
export type {
  AssignmentListQuery,
  AssignRoleInput,
  CreateRoleInput,
  Grant as StoredGrant,
  GrantEffect,
  GrantInput,
  ListPage,
  Role,
  RoleAssignment,
  RoleListQuery,
  RolePrincipalKind,
  RoleStore,
} from "./core/storage/roles.ts";
export type { SamlAssertionStore } from "./core/storage/saml-assertions.ts";
export type {
  EventDeliveries,
  NewSecurityEvent,
  SecurityEventRecord,
  SecurityEventStore,
  SignInWrites,
  SignInWritten,
} from "./core/storage/security-events.ts";
export type { ServerSecretStore } from "./core/storage/server-secrets.ts";
export type {
  NewServiceAccount,
  ServiceAccountRecord,
  ServiceAccountStore,
} from "./core/storage/service-accounts.ts";
export type {
  NewSession,
  NewSessionRefreshToken,
  SessionRecord,
  SessionStore,
} from "./core/storage/sessions.ts";
export type { SignInHistory, SignInLookup, SignInReadStore, SignInRecord } from "./core/storage/sign-ins.ts";
export type {
  ShadowComparisonInput,
  ShadowComparisonStore,
  ShadowFilter,
  ShadowTally,
} from "./core/storage/shadow-comparisons.ts";
export type {
  NewSigningKey,
  SigningKeyRecord,
  SigningKeyRotation,
  SigningKeyStore,
} from "./core/storage/signing-keys.ts";
export type { SubjectGrantRow, SubjectGrantSource, SubjectRows } from "./core/storage/subject-grants.ts";
export type { SubjectKeyRecord, SubjectKeyStore } from "./core/storage/subject-keys.ts";
export type { CreateTeamInput, Team, TeamMember, TeamStore } from "./core/storage/teams.ts";
export type { TokenGrant, TokenGrantStore } from "./core/storage/token-grants.ts";
export type { TotpEnrollmentRecord, TotpEnrollmentStore } from "./core/storage/totp-enrollments.ts";
export type {
  CreateUserInput,
  UpdateUserInput,
  UpdateUserOptions,
  User,
  UserPage,
  UserSearch,
  UserStatus,
  UserStore,
} from "./core/storage/users.ts";
export type {
  ClaimedWebhookDelivery,
  NewWebhookEndpoint,
  WebhookDeliveryRecord,
  WebhookDeliveryStatus,
  WebhookEndpointRecord,
  WebhookFailureOutcome,
  WebhookQueueStats,
  WebhookStore,
} from "./core/storage/webhooks.ts";
export type {
  AbuseCountersTable,
  AdminAuditEntriesTable,
  ApiKeysTable,
  AppCatalogTable,
  AuthorizationCodesTable,
  AuthzShadowComparisonsTable,
  BreakGlassStateTable,
  ClientsTable,
  ConsumedSamlAssertionsTable,
  ConsumedTokensTable,
  Database,
  DpopProofsTable,
  EmailOtpChallengesTable,
  EmailOtpEnrollmentsTable,
  Executor,
  FederatedIdentitiesTable,
  GrantsTable,
  GroupMembersTable,
  GroupsTable,
  ImpersonationConsentTable,
  ImpersonationsTable,
  Json,
  JsonColumn,
  KnownDevicesTable,
  LoginHistoryTable,
  MailOutboxTable,
  OrganizationDomainsTable,
  OrganizationsTable,
  OrgMembershipsTable,
  PasskeyCeremoniesTable,
  PasskeyCredentialsTable,
  PasswordCredentialsTable,
  PermissionCatalogTable,
  PoliciesTable,
  RealmsTable,
  RecoveryCodesTable,
  RefreshTokensTable,
  RoleAssignmentsTable,
  RolesTable,
  SecurityEventsTable,
  ServerSecretsTable,
  ServiceAccountsTable,
  SessionsTable,
  SigningKeysTable,
  SubjectKeysTable,
  TeamMembersTable,
  TeamsTable,
  Timestamp,
  TokenGrantsTable,
  TotpEnrollmentsTable,
  UsersTable,
  WebhookDeliveriesTable,
  WebhookEndpointsTable,
} from "./storage/database.ts";
export type { DatabasePoolStats } from "./storage/pool-stats.ts";
export type { ConfigSources } from "./core/config/load.ts";
export type { EmbeddedStoreFiles, EmbeddedStoreFilesSource, Notifications } from "./storage/open.ts";
export type { ImportFiles } from "./cli/import.ts";
export type { LockFiles } from "./cli/data-dir-lock.ts";
export type { SvcEnv } from "./http/request-id.ts";
export type { JsonLimits } from "./core/json-limits.ts";
export type { RawSqlStore } from "./core/storage/raw-sql.ts";
export type { ListBody, OptionalNumberParam, Page } from "./http/admin/kit.ts";
export type { InstalledPlugin } from "./plugins/host.ts";
export type { NumberOrDigits } from "./plugins/settings.ts";
