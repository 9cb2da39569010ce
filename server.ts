/**
 * `@svc/svc/server`: what a host that runs svc, and a plugin that extends it, needs: the CLI entry
 * with the runtime adapters of Deno, Node and Bun (Node's hashes passwords in a `worker_threads`
 * pool, never on the event loop), the configuration loader, the Hono app, the storage openers and
 * the plugin contract. `@svc/svc` (the package root) holds the same app, storage and plugin API
 * beside everything else svc exports; the runtime adapters are here only.
 *
 * @example A host on Deno with a plugin of its own (`deno run -A host.ts start`)
 * ```ts
 * import { definePlugin, denoRuntime, runCli } from "@svc/svc/server";
 *
 * const hello = definePlugin({
 *   name: "hello",
 *   routes: [(app) => app.get("/hello", (c) => c.text("hello"))],
 * });
 * if (import.meta.main) Deno.exit(await runCli(Deno.args, denoRuntime, { plugins: [hello] }));
 * ```
 *
 * @example Open the storage and serve the app yourself
 * ```ts
 * import {
 *   createApp,
 *   createAuthStack,
 *   createSqlStorage,
 *   cryptoRandom as random,
 *   loadConfig,
 *   openDatabase,
 *   systemClock as clock,
 * } from "@svc/svc/server";
 *
 * const { config } = loadConfig({ env: { SVC_BASE_URL: "http://localhost:8080" } });
 * // Or { kind: "postgres", url: "postgres://svc@db.internal/svc" }.
 * const database = await openDatabase({ kind: "embedded" });
 * await database.ensureSchema();
 * const storage = createSqlStorage(database, { clock, random });
 * const auth = createAuthStack({ config, storage, clock, random, events: { emit: () => {} } });
 * const app = createApp({
 *   config,
 *   readinessChecks: [],
 *   clock,
 *   random,
 *   authenticator: auth.authenticator,
 *   routes: auth.routes,
 * });
 * const server = Deno.serve({ port: 0, onListen: () => {} }, app.fetch);
 * const res = await fetch(`http://localhost:${server.addr.port}/healthz`);
 * console.log(res.status); // 200
 * await res.body?.cancel();
 * await server.shutdown();
 * await database.close();
 * ```
 *
 * @module
 */

// ---------------------------------------------------------------------------
// The CLI and the runtime adapters

export { type CliOptions, runCli, type RuntimeAdapter } from "./cli/run.ts";
export { denoRuntime } from "./cli/deno-runtime.ts";
export { openSslRs256Signer, type OpenSslSignerOptions } from "./cli/deno-openssl-rs256.ts";
export { nodeRuntime } from "./cli/node-runtime.ts";
export { bunAdapter } from "./cli/bun.ts";
export type { LockFiles } from "./cli/data-dir-lock.ts";
export type { ImportFiles } from "./cli/import.ts";
export {
  createNodePasswordHasher,
  nodePasswordWorkerFactory,
  nodeWorkerCount,
} from "./cli/node-password-workers.ts";

// ---------------------------------------------------------------------------
// Time, randomness and configuration

export { type Clock, ManualClock, systemClock } from "./core/clock.ts";
export { cryptoRandom, type RandomSource, seededRandom } from "./core/random.ts";
export {
  ConfigError,
  type ConfigSources,
  loadConfig,
  type LoadedConfig,
  type SvcConfig,
  type SvcConfigInput,
  SvcConfigSchema,
} from "./core/config/mod.ts";

// ---------------------------------------------------------------------------
// The app

export {
  type AppDeps,
  createApp,
  type ReadinessCheck,
  type RouteInstaller,
  type SvcApp,
  type SvcEnv,
} from "./http/app.ts";
export { type AuthStack, type AuthStackOptions, createAuthStack } from "./http/auth/stack.ts";
export { createLoginStack, type LoginStack, type LoginStackOptions } from "./http/auth/login-stack.ts";
export { type ClientBindings, clientIp } from "./http/client-ip.ts";
export { bodyLimit, PayloadTooLargeError } from "./http/body-limit.ts";
export { noStore } from "./http/security-headers.ts";

// ---------------------------------------------------------------------------
// Storage

export {
  type DatabaseOptions,
  type EmbeddedStoreFiles,
  type EmbeddedStoreFilesSource,
  type Notifications,
  openDatabase,
  type SvcDatabase,
} from "./storage/open.ts";
export { schemaScript, schemaStatements } from "./storage/schema.ts";
export { createSqlStorage, type Storage, type StorageDeps, type Stores } from "./storage/storage.ts";

// ---------------------------------------------------------------------------
// Password hashing off the event loop

export { createPasswordHasher, type PasswordHasherOptions } from "./core/passwords/create.ts";
export { InThreadPasswordHasher, type PasswordHasher } from "./core/passwords/hasher.ts";
export {
  type PasswordWorker,
  type PasswordWorkerFactory,
  webWorkerFactory,
  WorkerPoolPasswordHasher,
  type WorkerPoolStats,
} from "./core/passwords/pool.ts";

// ---------------------------------------------------------------------------
// Plugins

export {
  checkPlugins,
  type ClaimRequest,
  definePlugin,
  type PluginConfigSection,
  type PluginContext,
  PluginError,
  type PluginEventKind,
  type PluginSetting,
  type PluginSql,
  pluginTablePrefix,
  type SvcPlugin,
} from "./plugins/plugin.ts";
export { RESERVED_CLAIMS } from "./plugins/host.ts";
export type * from "./api-types.ts";
