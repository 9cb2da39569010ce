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

// ---------------------------------------------------------------------------
// Configuration

/**
 * Validates the configuration from `SVC_*` environment variables and an optional JSON file.
 *
 * @example
 * ```ts
 * const { config, defaultsUsed } = loadConfig({ env: { SVC_PORT: "8080" } });
 * ```
 */
export { ConfigError, loadConfig, type LoadedConfig, type SvcConfig } from "./core/config/mod.ts";

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

// ---------------------------------------------------------------------------
// HTTP

/**
 * Builds the svc Hono app; serve `app.fetch` on any runtime.
 *
 * @example
 * ```ts
 * const app = createApp({ config, readinessChecks: [], clock: systemClock, random: cryptoRandom });
 * Deno.serve(app.fetch);
 * ```
 */
export {
  type AppDeps,
  createApp,
  type ReadinessCheck,
  type RouteInstaller,
  type SvcApp,
} from "./http/app.ts";
/** The authenticated caller and how requests are resolved to one. */
export { type Authenticator, type Principal, requirePrincipal } from "./http/auth/principal.ts";
/** `POST /svc-admin/authz/inspect` and `GET /profile/permissions`. */
export { authzRoutes } from "./http/routes/authz.ts";

// ---------------------------------------------------------------------------
// Storage

/** Opens the database: embedded PGlite (a data folder) or a Postgres server. */
export { type DatabaseOptions, openDatabase, type SvcDatabase } from "./storage/open.ts";
/** The DDL svc runs at boot, for hosts that manage the schema themselves. */
export { schemaScript, schemaStatements } from "./storage/schema.ts";
/** The rows a subject snapshot is built from, and their SQL source. */
export type { SubjectGrantRow, SubjectGrantSource, SubjectRows } from "./storage/contract/subject-grants.ts";
/** The SQL subject-grant source. */
export { createSqlSubjectGrantSource } from "./storage/sql/subject-grants.ts";
/**
 * Every store of svc over one database, with cross-aggregate transactions.
 *
 * @example
 * ```ts
 * const storage = createSqlStorage(database, { clock: systemClock, random: cryptoRandom });
 * const first = await storage.consumedTokens.consume(jti, expiresAt); // true once, then false
 * ```
 */
export { createSqlStorage, type Storage, type StorageDeps, type Stores } from "./storage/storage.ts";
