/**
 * svc: an identity and authorization server. This module is the public API for hosts
 * that embed svc, for receivers and for tools: the configuration loader, the Hono app,
 * the storage layer (embedded PGlite or a Postgres server), the pure authorization
 * engine that also runs in browsers, subject snapshots and the event sink.
 *
 * @example Check a permission with the pure engine
 * ```ts
 * import { compileSubject, evaluate } from "@svc/svc";
 *
 * const subject = compileSubject({
 *   id: "u1",
 *   orgId: "o1",
 *   teamIds: [],
 *   attributes: {},
 *   grants: [{ pattern: "docs:org:*", effect: "Allow", source: "role:editor" }],
 * });
 * evaluate(subject, { permission: "docs:org:read", resourceOrgId: "o1" }).decision; // "Allowed"
 * ```
 *
 * @module
 */

// ---------------------------------------------------------------------------
// Errors, time and randomness

/** The base error class (stable `code`, HTTP `status`) and its common subclasses. */
export {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  StorageError,
  SvcError,
  UnauthenticatedError,
  ValidationError,
} from "./core/errors.ts";
/** A source of the current time; `systemClock` for servers, `ManualClock` for tests. */
export { type Clock, ManualClock, systemClock } from "./core/clock.ts";
/** A source of random bytes; `cryptoRandom` for servers, `seededRandom` for tests. */
export { cryptoRandom, type RandomSource, randomToken, randomUuid, seededRandom } from "./core/random.ts";
/** SHA-256 as hex, and a comparison of secrets in constant time. */
export { constantTimeEqual, sha256Hex } from "./core/digest.ts";

// ---------------------------------------------------------------------------
// Configuration

/**
 * Validates the configuration from `SVC_*` environment variables and an optional JSON file.
 *
 * @example
 * ```ts
 * import { loadConfig } from "@svc/svc";
 *
 * const { config, defaultsUsed } = loadConfig({ env: { SVC_PORT: "8080" } });
 * ```
 */
export { ConfigError, loadConfig, type LoadedConfig, type SvcConfig } from "./core/config/mod.ts";
/** The public URL svc's routes are reached at: `SVC_BASE_URL` with `SVC_PATH_BASE` appended once. */
export { publicRoot, publicUrl, type PublicUrlSettings } from "./core/net/public-url.ts";

// ---------------------------------------------------------------------------
// The authorization engine (pure; runs unchanged in browsers)

/** Permission grammar, condition documents, the evaluator, visibility and the vector runner. */
export * from "./core/authz/mod.ts";

/** Subject snapshots: built from storage, cached (TTL + LRU), evicted through the cache bus. */
export { buildSnapshot, type BuiltSnapshot, type SkippedGrant } from "./core/snapshots/build.ts";
/** The snapshot provider of one instance. */
export {
  INVALID_GRANTS_EVENT,
  SubjectSnapshots,
  type SubjectSnapshotsOptions,
} from "./core/snapshots/service.ts";
/** Cache buses: in process, or Postgres LISTEN/NOTIFY shared by every instance. */
export {
  type CacheBus,
  type CacheInvalidation,
  InProcessCacheBus,
  NotificationCacheBus,
} from "./core/snapshots/bus.ts";
/** The bounded TTL + LRU cache behind snapshots. */
export { TtlLruCache, type TtlLruOptions } from "./core/snapshots/cache.ts";
/** The background loop of a queue worker (used by the OIDC provider's back-channel logout outbox). */
export { PollingLoop, type PollingLoopOptions } from "./core/polling-loop.ts";

/** Declared permissions and roles, checked before boot. */
export {
  type DeclaredGrant,
  type DeclaredPermission,
  type DeclaredRole,
  DefinitionError,
  type DefinitionPlan,
  planDefinitions,
} from "./core/definitions/declarations.ts";
/** Publishes declared permissions into the catalog and reconciles declared roles. */
export {
  type DefinitionStores,
  type DefinitionSyncReport,
  syncDefinitions,
} from "./core/definitions/sync.ts";
/** svc's own `svc:` permissions. */
export {
  AUTHZ_INSPECT_GLOBAL,
  AUTHZ_INSPECT_ORG,
  type PermissionDefinition,
  SVC_PERMISSIONS,
} from "./core/definitions/svc-permissions.ts";
/** The `svc:` permissions of the OIDC client admin API (a plugin's routes about clients fence with them). */
export { OIDC_CLIENTS_MANAGE_GLOBAL, OIDC_CLIENTS_READ_GLOBAL } from "./core/definitions/permissions/oidc.ts";

// ---------------------------------------------------------------------------
// Events

/** The in-process event sink that plugins and hosts subscribe to. */
export {
  EventHub,
  type EventSink,
  type EventSubscriber,
  nullEventSink,
  type SvcEvent,
} from "./core/events/sink.ts";
/** The catalog of event kinds (spec 6): the families, the named kinds, and which reach the security ledger. */
export {
  EVENT_CATALOG,
  EVENT_FAMILIES,
  EVENT_KINDS,
  type EventCatalogEntry,
  type EventFamily,
  eventFamilyOf,
  type EventKind,
  type FamilyEventKind,
  isEventKind,
  isEventPattern,
  isSecurityLedgerKind,
  type NamedEventKind,
} from "./core/events/catalog.ts";
/** Event payloads: the declared fields of each kind's `data`, their builders and the check of an event against them. */
export {
  type DeclaredEventKind,
  type EventField,
  eventField,
  type EventFieldFlags,
  type EventFieldType,
  type EventPayload,
  eventPayloadProblem,
  payloadProblem,
} from "./core/events/payload.ts";
/** Every kind svc itself emits, with when and its payload. */
export { CORE_EVENT_KINDS, type CoreEventKind } from "./core/events/kinds.ts";
/** Durable publishing: the webhook outbox and the security ledger in the caller's transaction, then the sink. */
export {
  type EmitInTransaction,
  type EventOrigin,
  EventPublisher,
  type EventPublisherOptions,
  webhookBody,
  type WebhookEventBody,
} from "./core/events/publisher.ts";

// ---------------------------------------------------------------------------
// Webhooks and the audit ledgers

/**
 * Verifies a signed svc webhook in a receiver (spec 2.8). `X-Svc-Signature` is
 * `t=<unix seconds>,v1=<hex>[,v1=<hex>]`: HMAC-SHA256, keyed with the endpoint secret (the
 * whole `whsec_…` string), over `"<t>.<raw body>"`; during a secret rotation both secrets sign.
 * Pass the raw body (before JSON parsing); timestamps older or newer than the tolerance
 * (default 300 seconds) are refused. Deduplicate on `X-Svc-Delivery`, which retries repeat.
 *
 * @example A receiver on Deno
 * ```ts
 * import { verifyWebhookSignature } from "@svc/svc";
 *
 * Deno.serve(async (req) => {
 *   const body = await req.text();
 *   const result = await verifyWebhookSignature({
 *     body,
 *     header: req.headers.get("X-Svc-Signature"),
 *     secret: Deno.env.get("SVC_WEBHOOK_SECRET")!, // whsec_…
 *   });
 *   if (!result.ok) return new Response(result.reason, { status: 400 });
 *   const deliveryId = req.headers.get("X-Svc-Delivery"); // process each id once
 *   const event = JSON.parse(body); // { id, kind, occurredAt, realmId, orgId, userId, data }
 *   return new Response(null, { status: 204 });
 * });
 * ```
 */
export {
  DEFAULT_SIGNATURE_TOLERANCE_SECONDS,
  DELIVERY_HEADER,
  EVENT_HEADER,
  SIGNATURE_HEADER,
  signWebhookPayload,
  verifyWebhookSignature,
  type VerifyWebhookSignatureInput,
  WEBHOOK_SECRET_PREFIX,
  type WebhookSignatureFailure,
  type WebhookSignatureResult,
} from "./core/webhooks/signature.ts";
/** The outbox dispatcher: claims due deliveries, signs, sends with a timeout, retries, dead-letters, disables. */
export {
  DISPATCHER_ACTOR_ID,
  type DispatchOutcome,
  WebhookDispatcher,
  type WebhookDispatcherOptions,
} from "./core/webhooks/dispatcher.ts";
/**
 * svc's one outbound guard (SSRF) for every server-side fetch: the address rules, the policy from
 * the configuration, and the guarded fetch with its stable error codes.
 */
export {
  checkOutboundUrl,
  isRefusedAddress,
  type OutboundPolicy,
  outboundPolicyFromConfig,
  type OutboundRefusal,
  PUBLIC_DESTINATIONS_ONLY,
} from "./core/net/outbound-rules.ts";
/** The guarded fetch: DNS-checked, pinned where the runtime allows, redirects re-checked, timed, capped. */
export {
  createOutboundFetch,
  DEFAULT_OUTBOUND_MAX_BYTES,
  DEFAULT_OUTBOUND_TIMEOUT_MS,
  MAX_REDIRECTS,
  type OutboundConnector,
  OutboundError,
  type OutboundErrorCode,
  type OutboundFetch,
  type OutboundGuardOptions,
  type OutboundRequestInit,
  type OutboundResolver,
  type RuntimeFetch,
} from "./core/net/outbound.ts";
/** The SSRF guard of webhook receivers and its allow-list (the outbound rules under their webhook names). */
export {
  checkReceiverUrl,
  isPrivateAddress,
  PUBLIC_RECEIVERS_ONLY,
  type ReceiverPolicy,
  type ReceiverRefusal,
} from "./core/webhooks/receivers.ts";
/** Admin mutations that append to the realm's audit chain in their own transaction. */
export {
  type AdminMutationContext,
  type AdminMutationResult,
  type AuditActor,
  type AuditRecord,
  runAdminMutation,
} from "./core/audit/mutation.ts";
/** Erasure of a user and ledger retention (spec 6). */
export { applyRetention, eraseUser, type ErasureReport, type RetentionReport } from "./core/audit/erasure.ts";
/** The admin audit chain's types and hashing (canonical JSON, payload digests, entry hashes). */
export {
  type AdminAuditEntry,
  type AuditActorKind,
  type AuditChainBreak,
  type AuditChainReport,
  GENESIS_HASH,
} from "./core/storage/admin-audit.ts";
export { auditEntryHash, canonicalJson, payloadDigest } from "./storage/sql/admin-audit.ts";

// ---------------------------------------------------------------------------
// Signing keys, tokens, sessions and credentials

/** Per-realm RS256 signing keys: generation, rotation with an overlap window, JWKS publication. */
export { generateSigningKey, SIGNING_ALGORITHM } from "./core/keys/generate.ts";
export { type LoadedSigningKey, loadSigningKey, type PublicSigningJwk } from "./core/keys/load.ts";
export { type JwsHeader, type JwsSigner, signCompactJwt } from "./core/keys/jws.ts";
export { type JwksDocument, KeyRing, KeyRingError, type KeyRingOptions } from "./core/keys/ring.ts";
/**
 * Every svc JWT type (spec 2.2), minted and verified through one typed API that always
 * enforces `typ`.
 *
 * @example
 * ```ts
 * import {
 *   createSqlStorage,
 *   cryptoRandom as random,
 *   KeyRing,
 *   openDatabase,
 *   systemClock as clock,
 *   TokenService,
 * } from "@svc/svc";
 *
 * const database = await openDatabase({ kind: "embedded" }); // PGlite, in memory
 * await database.ensureSchema();
 * const storage = createSqlStorage(database, { clock, random });
 * const realm = await storage.realms.create({ name: "default", displayName: "Default", isDefault: true });
 * const user = await storage.users.create({ realmId: realm.id, email: "ada@example.com" });
 * const keys = new KeyRing({ store: storage.signingKeys, clock, random, overlapMs: 86_400_000 });
 * await keys.ensurePrimary(realm.id);
 *
 * const issuer = "https://id.example.com";
 * const tokens = new TokenService({ keys, clock, random, issuer, consumed: storage.consumedTokens });
 * const stamp = (await storage.users.credentialStamp(user.id))!;
 * const { token } = await tokens.mint("pwreset+svc", { realm: realm.id, sub: user.id, stamp });
 * const claims = await tokens.consume("pwreset+svc", token); // once; a second time: invalid_token
 * console.log(claims.sub === user.id); // true
 * await database.close();
 * ```
 */
export {
  type MintOptions,
  TokenService,
  type TokenServiceOptions,
  type VerifyOptions,
} from "./core/tokens/service.ts";
export {
  type AccessTokenClaims,
  type ActorClaim,
  type BaseClaims,
  DEFAULT_TTL_SECONDS,
  type EmailVerificationClaims,
  type ImpersonationConsentClaims,
  type InvitationClaims,
  isSingleUse,
  type MfaTokenClaims,
  type PasswordResetClaims,
  type SingleUseTokenType,
  TOKEN_TYPES,
  type TokenClaimsByType,
  type TokenMintInput,
  type TokenType,
  TokenTypes,
} from "./core/tokens/types.ts";
/** Every rejected token is the one 401 `invalid_token`; refresh failures are 401 `invalid_refresh_token`. */
export {
  InvalidRefreshTokenError,
  InvalidTokenError,
  type InvalidTokenReason,
  RefreshGuardError,
} from "./core/tokens/errors.ts";
/** DPoP (RFC 9449) proofs: pure validation, stateless server nonces. */
export {
  accessTokenHash,
  DEFAULT_MAX_AGE_SECONDS as DPOP_DEFAULT_MAX_AGE_SECONDS,
  DPOP_ALGORITHMS,
  DpopNonceError,
  type DpopProofCheck,
  DpopProofError,
  type DpopProofReason,
  normalizeHtu,
  type VerifiedDpopProof,
  verifyDpopProof,
} from "./core/dpop/proof.ts";
export { DpopNonces } from "./core/dpop/nonce.ts";
/** DPoP at the HTTP edge: single-use proofs in storage, nonces, `WWW-Authenticate: DPoP` challenges. */
export {
  DpopAuthError,
  dpopChallenge,
  type DpopEdge,
  type DpopRequestCheck,
  DpopVerifier,
  type DpopVerifierOptions,
  issuingProofJkt,
  requestHtu,
  resourceProofError,
} from "./http/auth/dpop.ts";
export type { DpopStore } from "./core/storage/dpop.ts";
/** The verified-token cache (keyed by signature, bounded, until `exp`). */
export { VerifiedTokenCache } from "./core/tokens/cache.ts";
/** A service account's access token (RFC 9068 `at+jwt`), as client_credentials and token exchange issue it. */
export {
  mintServiceAccountToken,
  SERVICE_ACCOUNT_TOKEN_TYPE,
  type ServiceAccountToken,
  type ServiceAccountTokenInput,
} from "./core/tokens/service-account-token.ts";
/** Opaque `srt_` refresh tokens: only their SHA-256 is stored. */
export { hashRefreshToken, newRefreshToken, REFRESH_TOKEN_PREFIX } from "./core/tokens/refresh.ts";
/** Sessions: sign-in, refresh rotation with reuse detection, organization switch, logout. */
export {
  type AccessTokenResponse,
  type CreatedSession,
  type IssuedTokens,
  type OpenedSession,
  REFRESH_REUSE_EVENT,
  SessionService,
  type SessionServiceOptions,
  type SignInInput,
  type TokenResponse,
} from "./core/sessions/service.ts";
/** Recently ended sessions, whose access tokens every instance refuses (fed through the cache bus). */
export {
  type EndedSession,
  EndedSessions,
  type SessionEndAnnouncer,
  type SessionEndListener,
} from "./core/sessions/ended.ts";
/** Ending every session of an OIDC client in the caller's transaction (a client's deletion). */
export { endClientSessions } from "./core/sessions/client-sessions.ts";
/** Suspending a user: status, sessions, refresh tokens and API keys in one audited transaction. */
export { suspendUser, type SuspensionReport, USER_SUSPENDED_EVENT } from "./core/accounts/suspension.ts";
/** Per-subject AES-256-GCM encryption; deleting the subject's key shreds its data. */
export { SubjectCrypto, SubjectDataUnavailableError } from "./core/crypto/subject-keys.ts";
/** API keys (`sak_…`, looked up by SHA-256 hex) and service accounts (`sas_…` secrets, rotation overlap). */
export { API_KEY_PREFIX, authenticateApiKey, createApiKey } from "./core/credentials/api-keys.ts";
/**
 * `private_key_jwt` client keys (RFC 7523): the accepted assertion algorithms, the assertion type,
 * and the checks of a client's registered JWK Set (public keys only) and `jwksUri` (https, or an
 * allowed private host).
 */
export {
  CLIENT_ASSERTION_ALGORITHMS,
  clientJwksProblem,
  clientJwksUriProblem,
  JWT_BEARER_ASSERTION_TYPE,
  MAX_CLIENT_KEYS,
} from "./core/credentials/client-keys.ts";
export {
  authenticateServiceAccount,
  createServiceAccount,
  rotateServiceAccountSecret,
  SERVICE_ACCOUNT_SECRET_PREFIX,
} from "./core/credentials/service-accounts.ts";

// ---------------------------------------------------------------------------
// HTTP

/**
 * Builds the svc Hono app; serve `app.fetch` on any runtime.
 *
 * @example
 * ```ts
 * import { createApp, cryptoRandom, loadConfig, systemClock } from "@svc/svc";
 *
 * const { config } = loadConfig({ env: Deno.env.toObject() });
 * const app = createApp({ config, readinessChecks: [], clock: systemClock, random: cryptoRandom });
 * const server = Deno.serve({ port: 0 }, app.fetch); // port 0: any free port
 * await server.shutdown();
 * ```
 */
export {
  type AppDeps,
  createApp,
  type ReadinessCheck,
  type RouteInstaller,
  type SvcApp,
} from "./http/app.ts";
/** Request body limits: a route that takes files declares `bodyLimit(config.server.maxUploadBytes)`. */
export { bodyLimit, PayloadTooLargeError } from "./http/body-limit.ts";
// Migration (issue 15): importers and shadow mode
export {
  httpShadowRecorder,
  shadowAuthz,
  type ShadowAuthzOptions,
  type ShadowComparison,
  type ShadowSink,
} from "./http/shadow-middleware.ts";
export {
  type ShadowAuthzReport,
  type ShadowCheck,
  type ShadowOutcome,
  ShadowRecorder,
  shadowReport,
  type ShadowResource,
} from "./core/imports/shadow.ts";
export {
  type ImportEngineDeps,
  type ImportGuard,
  ImportRealmNotFoundError,
  runImport,
  secretsOf,
} from "./core/imports/engine.ts";
export type {
  ImportedClient,
  ImportedCredential,
  ImportedGroup,
  ImportedRole,
  ImportedUser,
  ImportIssue,
  ImportItem,
  ImportOptions,
  ImportReport,
} from "./core/imports/model.ts";
export { auth0Items } from "./core/imports/auth0.ts";
export { keycloakItems } from "./core/imports/keycloak.ts";
export { aspnetItems, aspnetTablesFromCsv, aspnetTablesFromJson } from "./core/imports/aspnet.ts";
export { clientConfigItems } from "./core/imports/client-config.ts";
/**
 * `noStore`: the route middleware for answers that carry a secret; `setAnswerHeader`: a header of
 * the answer set from a middleware after `next()`, in place (no copy of the response).
 */
export { noStore, setAnswerHeader } from "./http/security-headers.ts";
/** The prefix of the OIDC client secrets svc generates (`soc_`). */
export { OIDC_CLIENT_SECRET_PREFIX } from "./http/admin/oidc-clients.ts";
/** The authenticated caller and how requests are resolved to one. */
export {
  type Authenticator,
  type Principal,
  type PrincipalKind,
  requirePrincipal,
} from "./http/auth/principal.ts";
/** Bearer, API key, service-account and cookie authentication. */
export { InvalidCredentialsError, tokenAuthenticator } from "./http/auth/token-authenticator.ts";
/** The cookie transport (`svc_at`, `svc_rt`, `svc_csrf`) and the double-submit CSRF check. */
export {
  ACCESS_COOKIE,
  cookieSettings,
  CSRF_COOKIE,
  CSRF_HEADER,
  REFRESH_COOKIE,
  REFRESH_PATH,
  setSessionCookies,
} from "./http/auth/cookies.ts";
export { CsrfError, requireCsrf } from "./http/auth/csrf.ts";
/** The key ring, token service, sessions, authenticator, routes and readiness check, from the config. */
export { type AuthStack, type AuthStackOptions, createAuthStack } from "./http/auth/stack.ts";
/** `/auth/refresh`, `/auth/switch-organization`, `/auth/logout`, `/auth/logout-all`. */
export { authRoutes } from "./http/routes/auth.ts";
/** `GET /profile/me`, `GET /profile/sessions`, `DELETE /profile/sessions/{id}`. */
export { profileRoutes } from "./http/routes/profile.ts";
/** `GET /.well-known/jwks.json` and `GET /realms/{realmId}/.well-known/jwks.json`. */
export { jwksRoutes } from "./http/routes/jwks.ts";
/** `POST /svc-admin/authz/inspect` and `GET /profile/permissions`. */
export { authzRoutes } from "./http/routes/authz.ts";
/** The webhook admin API under `config.webhooks.mountPath`. */
export { webhookRoutes, type WebhookRoutesDeps } from "./http/routes/webhooks.ts";
/** Audit chain reading and verification, retention, erasure, and `GET /profile/security-events`. */
export { auditRoutes, type AuditRoutesDeps } from "./http/routes/audit.ts";
/** The passkey endpoints under `/auth/passkey` (spec 4.2), and their service built from the config. */
export {
  createPasskeyRoutes,
  type PasskeyRouteDeps,
  passkeyRoutes,
  type PasskeyStackOptions,
  type PasskeyView,
} from "./http/routes/passkeys.ts";
/**
 * Passkeys: registration, login and second-factor ceremonies (random id, 5-minute TTL, one
 * attempt, only the challenge's SHA-256 stored), first-factor eligibility and the sign-count rule.
 */
export {
  CeremonyKinds,
  isFirstFactorEligible,
  PASSKEY_MFA_LEVEL,
  PasskeyLoginError,
  PasskeyNotEligibleError,
  PasskeyRegistrationError,
  PasskeyService,
  type PasskeyServiceOptions,
  readAuthenticatorData,
  type RelyingParty,
  signCountOutcome,
} from "./core/passkeys/mod.ts";

// ---------------------------------------------------------------------------
// Storage

/** Opens the database: embedded PGlite (a data folder) or a Postgres server. */
export { type DatabaseOptions, openDatabase, type SvcDatabase } from "./storage/open.ts";
/** The DDL svc runs at boot, for hosts that manage the schema themselves. */
export { schemaScript, schemaStatements } from "./storage/schema.ts";
/** The rows a subject snapshot is built from, and their SQL source. */
export type { SubjectGrantRow, SubjectGrantSource, SubjectRows } from "./core/storage/subject-grants.ts";
/** The SQL subject-grant source. */
export { createSqlSubjectGrantSource } from "./storage/sql/subject-grants.ts";
/**
 * Every store of svc over one database, with cross-aggregate transactions.
 *
 * @example
 * ```ts
 * import { createSqlStorage, cryptoRandom, openDatabase, systemClock } from "@svc/svc";
 *
 * const database = await openDatabase({ kind: "embedded" }); // in memory
 * await database.ensureSchema(); // creates svc's tables (idempotent)
 * const storage = createSqlStorage(database, { clock: systemClock, random: cryptoRandom });
 * const expiresAt = new Date(Date.now() + 60_000);
 * const first = await storage.consumedTokens.consume("a-jti", expiresAt); // true
 * const again = await storage.consumedTokens.consume("a-jti", expiresAt); // false: single use
 * console.log(first, again); // true false
 * await database.close();
 * ```
 */
export { createSqlStorage, type Storage, type StorageDeps, type Stores } from "./storage/storage.ts";
/** The records plugins read through the stores. */
export type { ClientFields, ClientRecord, ClientStore } from "./core/storage/clients.ts";
export type { ServiceAccountRecord, ServiceAccountSecretCheck } from "./core/storage/service-accounts.ts";
export type { SessionRecord } from "./core/storage/sessions.ts";
export type { User } from "./core/storage/users.ts";
/**
 * The one normalization of email addresses (NFKC, trimmed, lowercased, IDNA ASCII domain without a
 * trailing dot) that every entry point and the user store apply, and the request-body schemas built on it.
 */
export {
  EMAIL_MAX_LENGTH,
  EmailAddressSchema,
  type EmailAddressSchemaType,
  EmailLookupSchema,
  type EmailLookupSchemaType,
  isEmailAddress,
  normalizeEmail,
} from "./core/accounts/email.ts";

// ---------------------------------------------------------------------------
// Passwords

/**
 * Password hashing (spec 2.3, 5.1, 5.2): `PasswordService` mints argon2id hashes with the
 * configured parameters, verifies stored hashes under their tag (`argon2id`, and the
 * verify-only `pbkdf2-sha256`, `bcrypt`, `framework-identity-v3`), tells when to rehash, and
 * runs the dummy verification for unknown users.
 *
 * @example
 * ```ts
 * import {
 *   argon2idParamsFromConfig,
 *   createPasswordHasher,
 *   createSqlStorage,
 *   cryptoRandom as random,
 *   loadConfig,
 *   openDatabase,
 *   passwordCostCeilingsFromConfig,
 *   PasswordService,
 *   systemClock as clock,
 * } from "@svc/svc";
 *
 * const database = await openDatabase({ kind: "embedded" }); // PGlite, in memory
 * await database.ensureSchema();
 * const storage = createSqlStorage(database, { clock, random });
 * const realm = await storage.realms.create({ name: "default", displayName: "Default", isDefault: true });
 * const { id: userId } = await storage.users.create({ realmId: realm.id, email: "ada@example.com" });
 * const store = storage.passwordCredentials;
 * const password = "correct horse battery staple";
 *
 * const { config } = loadConfig({ env: { SVC_ARGON2_MEMORY_KIB: "8192", SVC_ARGON2_ITERATIONS: "1" } });
 * const hasher = createPasswordHasher({ workers: config.password.hashWorkers }); // off the event loop
 * const passwords = new PasswordService({
 *   hasher,
 *   params: argon2idParamsFromConfig(config.password),
 *   ceilings: passwordCostCeilingsFromConfig(config.password), // the most work a stored hash may ask for
 * });
 * await store.replace(userId, await passwords.hash(password)); // the user's one password
 *
 * const credential = await store.get(userId);
 * if (credential) {
 *   const { valid, needsRehash } = await passwords.verify(credential, password);
 *   if (valid && needsRehash) await store.rehash(userId, credential, await passwords.hash(password));
 *   console.log(valid); // true
 * }
 * await hasher.close();
 * await database.close();
 * ```
 */
export {
  type DummyVerificationInfo,
  PasswordService,
  type PasswordServiceOptions,
  type PasswordVerification,
  type TaggedPasswordHash,
} from "./core/passwords/service.ts";
/** Where password work runs: a worker pool (one worker per core by default) or the in-thread fallback. */
export { createPasswordHasher, type PasswordHasherOptions } from "./core/passwords/create.ts";
/** The hasher interface and its in-thread implementation. */
export { InThreadPasswordHasher, type PasswordHasher } from "./core/passwords/hasher.ts";
/** The worker pool and the worker interface a runtime adapter implements. */
export {
  type PasswordWorker,
  type PasswordWorkerFactory,
  webWorkerFactory,
  WorkerPoolPasswordHasher,
  type WorkerPoolStats,
} from "./core/passwords/pool.ts";
/** argon2id parameters: the spec default and the configured ones. */
export {
  type Argon2idParams,
  argon2idParamsFromConfig,
  DEFAULT_ARGON2ID_PARAMS,
} from "./core/passwords/argon2-params.ts";
/**
 * Cost ceilings of stored hashes (`SVC_PASSWORD_MAX_*`): a hash asking for more work is refused at
 * import and never verified at login.
 */
export {
  costCeilingExceeded,
  DEFAULT_PASSWORD_COST_CEILINGS,
  type PasswordCostCeilingConfig,
  type PasswordCostCeilings,
  passwordCostCeilingsFromConfig,
} from "./core/passwords/cost.ts";
/** The algorithm-tag registry, the rehash decision and the unknown-tag error (`unknown_password_algorithm`). */
export {
  CURRENT_PASSWORD_ALGORITHM,
  PASSWORD_ALGORITHMS,
  type PasswordAlgorithm,
  UnknownPasswordAlgorithmError,
  verifyPasswordHash,
} from "./core/passwords/registry.ts";
/** Whether a stored hash is under an older tag or weaker argon2id parameters than `params`. */
export { needsRehash } from "./core/passwords/rehash.ts";

// ---------------------------------------------------------------------------
// Second factors and mail

/** TOTP (RFC 6238): the code core, base32, `otpauth://` URIs and the enrollment service. */
export * from "./core/totp/mod.ts";
/** Email OTP challenges and recovery codes. */
export * from "./core/mfa/mod.ts";
/** The mail transport interface, the outbox transport and the message builders. */
export * from "./core/mail/mod.ts";

// ---------------------------------------------------------------------------
// Login gates

/**
 * The abuse gate (spec 5.2 step 1): four windowed layers over a counter store, outcomes
 * `Allowed`, `Blocked` and `CaptchaRequired`.
 *
 * @example
 * ```ts
 * import { AbuseGate, loadConfig, MemoryCounterStore, nullEventSink, systemClock } from "@svc/svc";
 *
 * const { config } = loadConfig({ env: {} });
 * const clock = systemClock;
 * const gate = AbuseGate.fromConfig(config.abuse, {
 *   store: new MemoryCounterStore({ clock }),
 *   clock,
 *   sink: nullEventSink,
 *   captcha: null,
 * });
 * const decision = await gate.check({ ip: "203.0.113.7", identifier: "ada@example.com" });
 * ```
 */
export {
  type AbuseDecision,
  AbuseGate,
  type AbuseGateOptions,
  type AbuseOutcome,
  type AttemptReservation,
  type LoginAttempt,
} from "./core/abuse/gate.ts";
/** Windowed counters and reservations: the interface and the in-memory store (Postgres: `createSqlCounterStore`). */
export {
  type CounterReservation,
  type CounterStore,
  MemoryCounterStore,
} from "./core/abuse/counter-store.ts";
/** CAPTCHA providers: Turnstile, hCaptcha, reCAPTCHA and a test provider. */
export {
  type CaptchaProvider,
  captchaProviderFromConfig,
  hcaptchaProvider,
  recaptchaProvider,
  TestCaptchaProvider,
  turnstileProvider,
} from "./core/abuse/captcha.ts";
/** The risk gate (spec 5.2 step 4): signals, score bands and external score composition. */
export { type RiskDecision, RiskGate, type RiskGateOptions, type RiskOutcome } from "./core/risk/gate.ts";
/** Offline risk providers read from operator-supplied files. */
export {
  CsvGeoLocator,
  type GeoLocator,
  type IpReputation,
  ListIpReputation,
  MemoryLoginHistory,
} from "./core/risk/providers.ts";
/** Known devices: first-seen detection with the new-device event and alert. */
export { KnownDevices, type KnownDevicesOptions } from "./core/devices/known-devices.ts";

// ---------------------------------------------------------------------------
// Password login and account flows

/**
 * The password login pipeline (spec 5.2): abuse gate, user lookup with the dummy verification,
 * password check and rehash, risk gate, MFA step-up through an `mfa+svc` hand-off token.
 *
 * @example
 * ```ts
 * import {
 *   createAuthStack,
 *   createLoginStack,
 *   createSqlStorage,
 *   createSqlSubjectGrantSource,
 *   cryptoRandom as random,
 *   EventPublisher,
 *   InProcessCacheBus,
 *   loadConfig,
 *   nullEventSink,
 *   openDatabase,
 *   SubjectSnapshots,
 *   systemClock as clock,
 * } from "@svc/svc";
 *
 * const database = await openDatabase({ kind: "embedded" }); // PGlite, in memory
 * await database.ensureSchema();
 * const storage = createSqlStorage(database, { clock, random });
 * const realm = await storage.realms.create({ name: "default", displayName: "Default", isDefault: true });
 * const { config } = loadConfig({ env: { SVC_ARGON2_MEMORY_KIB: "8192", SVC_PASSWORD_HASH_WORKERS: "0" } });
 * const events = new EventPublisher({ storage, sink: nullEventSink, random });
 * const auth = createAuthStack({ config, storage, clock, random, events });
 * await auth.ensureKeys();
 * const snapshots = new SubjectSnapshots({
 *   source: createSqlSubjectGrantSource(database.db),
 *   bus: new InProcessCacheBus(),
 *   events,
 *   clock,
 *   ttlMs: 60_000,
 *   maxEntries: 1000,
 * });
 * const { pipeline, passwords } = createLoginStack({ config, storage, clock, random, auth, events, snapshots });
 * const user = await storage.users.create({ realmId: realm.id, email: "ada@example.com" });
 * await storage.passwordCredentials.replace(user.id, await passwords.hash("correct horse battery staple"));
 *
 * const outcome = await pipeline.login({
 *   email: "ada@example.com",
 *   password: "correct horse battery staple",
 *   ip: "203.0.113.7",
 * });
 * if (outcome.kind === "signIn") {
 *   const { session, tokens } = await auth.sessions.signIn(outcome.signIn);
 *   await pipeline.completeSignIn(outcome, session.id); // the device and the login history
 *   console.log(tokens.tokenType); // "Bearer"
 * }
 * await database.close();
 * ```
 */
export {
  LOGIN_EVENTS,
  LoginPipeline,
  type LoginPipelineDeps,
  type LoginRequest,
  MFA_LEVEL_MULTI_FACTOR,
  MFA_LEVEL_PASSWORD,
  type MfaFactor,
  type MfaVerifyRequest,
  type PendingFactor,
  type PendingMfa,
  type ReadyLogin,
  type RiskBlockAlert,
  type SecurityEventWriter,
} from "./core/login/pipeline.ts";
/** The login refusals, each with its stable code. */
export {
  CaptchaRequiredError,
  InvalidMfaCodeError,
  LoginBlockedError,
  LoginFailedError,
  UnknownAudienceError,
} from "./core/login/errors.ts";
/** Forgot and reset password, email verification, invitations (spec 5.5). */
export {
  ACCOUNT_EVENTS,
  type AccountFlowDeps,
  AccountFlows,
  MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH,
} from "./core/accounts/flows.ts";
/** The bootstrap administrator: the `svc-admin` role (`svc:*:*`) in the default realm, idempotently. */
export {
  bootstrapAdmin,
  type BootstrapReport,
  SVC_ADMIN_PATTERN,
  SVC_ADMIN_ROLE_KEY,
} from "./core/accounts/bootstrap.ts";
/** Everything password login needs, from the config, with its routes (login, MFA, account flows, factors). */
export { createLoginStack, type LoginStack, type LoginStackOptions } from "./http/auth/login-stack.ts";
/** The client address hosts pass to `app.fetch(request, { clientAddress })`. */
export { type ClientBindings, clientIp } from "./http/client-ip.ts";

// ---------------------------------------------------------------------------
// Plugins and the CLI

/**
 * The plugin contract (v2): routes, permissions, event subscriber, config section, own tables,
 * readiness check, start/stop hooks, claim contributors and event kinds; every part optional.
 *
 * @example
 * ```ts
 * const reports = definePlugin({
 *   name: "reports",
 *   permissions: [{ id: "reports:org:read", description: "Read reports" }],
 *   routes: [(app) => app.get("/reports/ping", (c) => c.json({ pong: true }))],
 * });
 * ```
 */
export {
  checkPlugins,
  type ClaimRequest,
  definePlugin,
  type PluginAdmin,
  type PluginConfigSection,
  type PluginContext,
  PluginError,
  type PluginEventKind,
  type PluginSetting,
  type PluginSql,
  pluginTablePrefix,
  type PluginTokenGrant,
  type SignInDiscoveryRequest,
  type SignInStepAnswer,
  type SvcPlugin,
} from "./plugins/plugin.ts";
/** Plugins' config building blocks: seconds, the realm a plugin serves, and finding it at start. */
export { pluginRealm, realmSetting, secondsSetting } from "./plugins/settings.ts";
/**
 * The caller's scope behind a fence (`PluginContext.admin.scope`), and whether it reaches an
 * organization's resource (`covers`: anything else is shown as 404).
 */
export { covers, type FenceScope } from "./http/auth/fence.ts";
/**
 * The admin API's conventions for plugin routes: lists (`parseQuery`, `PageQuerySchema`,
 * `PAGE_QUERY_ENTRIES`, `pageOf`, `listBodyOf`, `listSchema`) and 404 for what the caller may not
 * see (`hidden`). Mutations go through `PluginContext.admin.mutate`.
 */
export {
  hidden,
  listBodyOf,
  listSchema,
  PAGE_QUERY_ENTRIES,
  pageOf,
  PageQuerySchema,
  parseQuery,
} from "./http/admin/kit.ts";
/**
 * Plugins' small shared helpers: admin routes' permission pairs (`scopedPermissions`,
 * `globalPermissions`), a UUID route parameter or 404 (`uuidParam`), the fence on a record outside
 * the caller's reach (`reaches`, `reachable`: 404) and a list's organization filter
 * (`listedOrg`), an update that changed nothing shown (`unchangedView`); for sign-in flows the browser's signed-in
 * user (`signedInUser`), the organization of a verified email domain
 * (`verifiedDomainOrganization`) and signing the browser in (`signInBrowser`).
 */
export {
  globalPermissions,
  listedOrg,
  reachable,
  reaches,
  scopedPermissions,
  signedInUser,
  signInBrowser,
  unchangedView,
  uuidParam,
  verifiedDomainOrganization,
} from "./plugins/kit.ts";
/** The hosted pages' `returnTo` rule: an http(s) URL on an allowed origin, or a path of the page's origin. */
export { allowedReturnTo } from "./console/account/return-to.ts";
/** The organization record, and the domain kind (`EmailDomain`) whose verified rows route sign-in. */
export { EMAIL_DOMAIN, type Organization, type OrganizationDomain } from "./core/storage/organizations.ts";
/** A user's link to a subject at an external identity provider. */
export type { FederatedIdentityRecord } from "./core/storage/federated-identities.ts";
/**
 * The claims no plugin may contribute; the admin helpers and the extension-grant registry hosts
 * hand to plugins.
 */
export { pluginAdmin, type PluginAdminDeps, RESERVED_CLAIMS, tokenGrantRegistry } from "./plugins/host.ts";
/**
 * Route documentation for the served OpenAPI document: a route module (a plugin's too) wraps its
 * installer with `documented(install, operations)`; `errorResponses(…)` are the error answers.
 */
export {
  documented,
  type DocumentedInstaller,
  errorResponses,
  type HttpMethod,
  IsoTimeSchema,
  type OperationAuth,
  type OperationDoc,
  type ResponseDoc,
} from "./http/openapi/operation.ts";
/** JSON request bodies validated by a valibot schema (U+0000 refused, one error shape). */
export { parseBody } from "./http/validate.ts";
/** Cached remote JWK Sets behind svc's SSRF guard, for plugins verifying other parties' JWTs. */
export { remoteJwksCache } from "./plugins/remote-jwks.ts";
/** A plugin that writes svc's events as JSON lines. */
export { type EventLogOptions, eventLogPlugin } from "./plugins/event-log.ts";
/**
 * svc's OpenTelemetry spans (scope `svc`, a no-op until the host installs an SDK): its tracer,
 * and `inSpan` to run work in a child span, as svc does around SQL statements, password hashing,
 * token signing, webhook and mail deliveries. A plugin may use them so its spans sit in svc's
 * scope.
 */
export { inSpan, type SvcSpanOptions, svcTracer } from "./core/tracing.ts";
export type * from "./api-types.ts";
