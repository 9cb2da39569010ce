/**
 * The svc command line, runtime-agnostic: `cli/deno.ts`, `cli/bun.ts` and `cli/node.ts` build a
 * `RuntimeAdapter` and call `runCli`.
 *
 * @module
 */
import { systemClock } from "../core/clock.ts";
import {
  ConfigError,
  describeDefaults,
  ENV_SETTINGS,
  envSettingShape,
  loadConfig,
  type LoadedConfig,
  RESERVED_ENV,
  settingDefault,
  type SettingRow,
  shapeBounds,
  type SvcConfig,
  withListenPort,
} from "../core/config/mod.ts";
import { StorageError } from "../core/errors.ts";
import { cryptoRandom } from "../core/random.ts";
import { DefinitionError, type DefinitionPlan, planDefinitions } from "../core/definitions/declarations.ts";
import { EventHub } from "../core/events/sink.ts";
import { EventPublisher } from "../core/events/publisher.ts";
import { WebhookDispatcher } from "../core/webhooks/dispatcher.ts";
import { MailDeliveryWorker } from "../core/mail/delivery.ts";
import { createOutboxTransport } from "../core/mail/outbox.ts";
import { mailRelayFromConfig } from "./mail-relay.ts";
import { AUDIT_USAGE, auditCommand } from "./audit.ts";
import { BREAK_GLASS_USAGE, breakGlassCommand, breakGlassLockedLine } from "./break-glass.ts";
import {
  IMPORT_USAGE,
  IMPORT_USAGE_LINE,
  importCommand,
  type ImportFiles,
  importViaServer,
  parseImportArgs,
} from "./import.ts";
import { BreakGlassMonitor, DAY_MS } from "../core/break-glass/monitor.ts";
import { breakGlassReadinessCheck } from "../http/admin/break-glass.ts";
import { type CacheBus, InProcessCacheBus, NotificationCacheBus } from "../core/snapshots/bus.ts";
import { endedSessionRetainMs, EndedSessions } from "../core/sessions/ended.ts";
import { SubjectSnapshots } from "../core/snapshots/service.ts";
import { createSvcMetrics } from "../core/metrics/svc-metrics.ts";
import { readinessDetailsForAdmins } from "../http/admin/readiness-details.ts";
import type { RequestLogEntry } from "../http/request-log.ts";
import { type LogLines, logLines } from "./log-lines.ts";
import { createApp } from "../http/app.ts";
import { resolveClientAddress, TrustedProxies } from "../http/client-ip.ts";
import { svcRoutes } from "../http/svc-routes.ts";
import { createAuthStack } from "../http/auth/stack.ts";
import { createLoginStack } from "../http/auth/login-stack.ts";
import { argon2idParamsFromConfig } from "../core/passwords/argon2-params.ts";
import { passwordCostCeilingsFromConfig } from "../core/passwords/cost.ts";
import { createPasswordHasher } from "../core/passwords/create.ts";
import type { PasswordHasher } from "../core/passwords/hasher.ts";
import type { JwsSigner } from "../core/keys/jws.ts";
import { PasswordService } from "../core/passwords/service.ts";
import { loadRiskProviders } from "../core/risk/providers.ts";
import { type CaptchaProvider, captchaProviderFromConfig } from "../core/abuse/captcha.ts";
import { createOutboundFetch, type OutboundConnector } from "../core/net/outbound.ts";
import { outboundPolicyFromConfig } from "../core/net/outbound-rules.ts";
import { createSqlCounterStore } from "../storage/sql/abuse-counters.ts";
import { MaintenanceSweeper } from "../core/maintenance/sweeper.ts";
import { createPasskeyRoutes } from "../http/routes/passkeys.ts";
import { type EmbeddedStoreFilesSource, openDatabase, type SvcDatabase } from "../storage/open.ts";
import { schemaScript } from "../storage/schema.ts";
import { BootStepError, type PreparedStorage, prepareStorage } from "./prepare-storage.ts";
import { PluginError, type SvcPlugin } from "../plugins/plugin.ts";
import {
  claimMerger,
  type InstalledPlugin,
  loadPluginConfig,
  pluginAdmin,
  pluginEnvNames,
  pluginEventCatalog,
  pluginHelpRows,
  pluginSql,
  selectPlugins,
  signInDiscoverer,
  tokenGrantRegistry,
} from "../plugins/host.ts";
import { BUILTIN_PLUGINS, loadBuiltinPlugins } from "../plugins/builtin-catalog.ts";
import { cookieSettings } from "../http/auth/cookies.ts";
import { vectorsCommand } from "./vectors.ts";
import { MAIL_USAGE, mailCommand, mailLockedLine, mailOverHttp, parseMailArgs } from "./mail.ts";
import { firstRunLines } from "./first-run.ts";
import { InstancePresence } from "./instance-presence.ts";
import { createSqlInstanceStore } from "../storage/sql/instances.ts";
import { ADMIN_USAGE, adminCommand } from "./admin.ts";
import { adminToken, LOGIN_USAGE, loginCommand, logoutCommand, runningServerUrl } from "./server-session.ts";
import { type DataDirLock, DataDirLockedError, lockDataDir, type LockFiles } from "./data-dir-lock.ts";
import { publicUrl } from "../core/net/public-url.ts";

/** What the CLI needs from the runtime it runs on. */
export interface RuntimeAdapter {
  /** The runtime's name, reported in `svc help` and logs. */
  name: "deno" | "bun" | "node";
  /** The process environment. */
  env(): Record<string, string | undefined>;
  /** The text of a file (the config file, the risk providers' files). */
  readTextFile(path: string): Promise<string>;
  /**
   * Starts serving; resolves once listening, with the real port (port 0 picks one). Adapters pass
   * each request's peer address as `client` (the login pipeline's IP).
   */
  serve(
    fetch: (req: Request, client?: { address?: string }) => Response | Promise<Response>,
    opts: { hostname: string; port: number },
  ): Promise<{ port: number; close(): Promise<void> }>;
  /** Runs `handler` on SIGINT or SIGTERM. */
  onShutdown(handler: () => Promise<void>): void;
  /**
   * The password hasher of this runtime (`workers`: `SVC_PASSWORD_HASH_WORKERS`, undefined for
   * one per core, at most 4; `idleMs`: when an idle worker stops; `options.native`:
   * `SVC_ARGON2_NATIVE`, argon2id on a native implementation where one loads); absent: Web
   * Workers (`createPasswordHasher`). Node passes its worker_threads pool.
   */
  createPasswordHasher?(
    workers: number | undefined,
    idleMs?: number,
    options?: { readonly native?: boolean },
  ): PasswordHasher;
  /**
   * A faster RS256 signer than WebCrypto's where this runtime has one (Deno: OpenSSL's libcrypto
   * through FFI; Node: `node:crypto`'s sign without jose around it), null where none loads;
   * absent: jose signs with WebCrypto. Asked only when
   * `SVC_RSA_NATIVE_SIGNER` is not false. `report` prints a line to the server's log (a signer
   * that loads its library on the first signature says then what it loaded).
   */
  createJwsSigner?(report: (line: string) => void): JwsSigner | null;
  /**
   * The addresses a host name resolves to, for the outbound guard (a public name that resolves
   * to a private address is refused); absent: no name resolves, and only literal public
   * addresses can be fetched.
   */
  resolveHost?(hostname: string): Promise<readonly string[]>;
  /**
   * Sends a request to the address the outbound guard checked (keeping the URL's host for the
   * `Host` header and TLS), so a DNS answer that changes after the check cannot redirect it; null
   * when this runtime cannot pin that request (the guard then fetches right after its check).
   */
  connectPinned?: OutboundConnector;
  /**
   * The TXT records of a DNS name (each record as its character strings), for organization
   * domain verification; absent: only the audited admin override verifies domains.
   */
  resolveTxt?(name: string): Promise<string[][]>;
  /**
   * File operations for the exclusive lock of the embedded store's data folder (`<dataDir>/svc.lock`);
   * absent: the folder is not locked (hosts that embed svc and guarantee one process themselves).
   */
  lockFiles?: LockFiles;
  /**
   * PGlite's files when the host carries them (the compiled binary, which has no `node_modules`);
   * absent: PGlite loads them from its package.
   */
  embeddedStoreFiles?: EmbeddedStoreFilesSource;
  /** Streams and directory listings for `svc import`; absent: whole files through `readTextFile`. */
  importFiles?: ImportFiles;
  /** Redraws one progress line on stderr when it is a terminal (an empty line clears it); absent: none. */
  progress?(line: string): void;
  /** Writes a file only its owner may read (mode 0600), for `svc login`; absent: no token is stored. */
  writeSecretFile?(path: string, text: string): Promise<void>;
  /** Asks one line on the terminal (a secret is not echoed); null when stdin ended; absent: nothing is asked. */
  readLine?(question: string, options?: { secret?: boolean }): Promise<string | null>;
  /** Writes a line to stdout. */
  print(line: string): void;
  /** Writes a line to stderr. */
  printError(line: string): void;
}

/** The command list `svc help` prints (also the CLI reference page, docs/reference/cli.md). */
export const USAGE: readonly string[] = [
  "usage: svc <command>",
  "",
  "commands:",
  "  start            serve svc (configuration: SVC_* environment variables, see below)",
  "  schema           print the SQL that creates svc's tables",
  "  vectors [FILE…]  run golden authorization vectors (default: the repository's)",
  AUDIT_USAGE,
  ...ADMIN_USAGE,
  ...BREAK_GLASS_USAGE,
  ...IMPORT_USAGE,
  ...MAIL_USAGE,
  ...LOGIN_USAGE,
  "  help             print this help",
];

/** What a host adds when it runs svc's CLI itself. */
export interface CliOptions {
  /**
   * Plugins installed by `start` (always, beside the built-ins `SVC_PLUGINS` enables): routes,
   * permissions, event subscribers, config sections, tables, hooks, claims and event kinds.
   */
  plugins?: readonly SvcPlugin[];
}

/** Runs one command; resolves to the process exit code. */
export async function runCli(
  args: string[],
  runtime: RuntimeAdapter,
  options: CliOptions = {},
): Promise<number> {
  const [command, ...rest] = args;
  switch (command) {
    case "start":
      return await start(runtime, options.plugins ?? []);
    case "schema":
      runtime.print(schemaScript().trimEnd());
      return 0;
    case "audit":
      return await audit(rest, runtime);
    case "break-glass":
      return await breakGlass(rest, runtime);
    case "admin":
      return await adminCli(rest, runtime);
    case "login":
    case "logout":
      return await sessionCli(command, rest, runtime);
    case "import":
      return await importCli(rest, runtime);
    case "mail":
      return await mail(rest, runtime);
    case "vectors":
      return await vectorsCommand(rest, { readTextFile: runtime.readTextFile, print: runtime.print });
    case undefined:
    case "help":
    case "--help":
    case "-h":
      help(runtime.print, [...await loadBuiltinPlugins(), ...(options.plugins ?? [])]);
      return 0;
    default:
      runtime.printError(
        `svc: unknown command ${
          JSON.stringify(command)
        }; run "svc help" (npx svc help in the project folder) for the commands`,
      );
      return 2;
  }
}

/**
 * Every setting with its type, bounds, default and meaning: svc's own (type and bounds read from
 * the config schema), the reserved ones, then the plugins' (read from their schemas). `svc help`
 * prints these rows and docs/reference/settings.md is generated from them.
 */
export function settingRows(plugins: readonly SvcPlugin[]): SettingRow[] {
  return [
    ...ENV_SETTINGS.map((s): SettingRow => {
      const shape = envSettingShape(s);
      return {
        name: s.name,
        type: shape.type,
        bounds: shapeBounds(shape),
        shape,
        defaultText: settingDefault(s),
        doc: s.doc,
      };
    }),
    ...Object.entries(RESERVED_ENV).map(([name, doc]): SettingRow => ({
      name,
      type: "string",
      bounds: "",
      defaultText: "unset",
      doc,
    })),
    ...pluginHelpRows(plugins),
  ];
}

function help(print: (line: string) => void, plugins: readonly SvcPlugin[]): void {
  for (const line of USAGE) print(line);
  print("");
  print(
    "settings (environment variables override the file named by SVC_CONFIG_FILE, which overrides the defaults):",
  );
  for (const row of settingRows(plugins)) {
    const bounds = row.bounds === "" ? "" : `, ${row.bounds}`;
    print(`  ${row.name} (${row.type}${bounds}; default: ${row.defaultText})`);
    print(`      ${row.doc}`);
  }
}

/** `svc start`: serves until SIGINT or SIGTERM. */
async function start(host: RuntimeAdapter, hostPlugins: readonly SvcPlugin[]): Promise<number> {
  let loaded: LoadedConfig;
  let plugins: SvcPlugin[];
  const pluginConfigs = new Map<string, unknown>();
  try {
    // Only the built-in plugins SVC_PLUGINS enables are loaded (plugins/builtin-catalog.ts).
    const pluginEnv = [...BUILTIN_PLUGINS.flatMap((entry) => entry.env), ...pluginEnvNames(hostPlugins)];
    loaded = loadConfig({ ...await configSources(host), pluginEnv });
    const { enabled } = loaded.config.plugins;
    const builtins = await loadBuiltinPlugins(
      enabled.filter((name) => !hostPlugins.some((plugin) => plugin.name === name)),
    );
    plugins = selectPlugins(enabled, builtins, hostPlugins, BUILTIN_PLUGINS.map((entry) => entry.name));
    for (const plugin of plugins) {
      pluginConfigs.set(plugin.name, loadPluginConfig(plugin, loaded.config, host.env()));
    }
    pluginEventCatalog(plugins);
  } catch (err) {
    if (!(err instanceof ConfigError) && !(err instanceof PluginError)) throw err;
    host.printError(err.message);
    return 1;
  }
  const { config } = loaded;
  // From here on, every line of the server goes out in the configured format.
  const log = logLines(config.log.format, host, systemClock);
  const runtime: RuntimeAdapter = {
    ...host,
    print: (line) => log.info(line),
    printError: (line) => log.error(line),
  };
  let plan: DefinitionPlan;
  try {
    plan = planDefinitions(config.authz, plugins.flatMap((plugin) => plugin.permissions ?? []));
  } catch (err) {
    if (!(err instanceof DefinitionError) && !(err instanceof PluginError)) throw err;
    runtime.printError(err.message);
    return 1;
  }
  return await withStorageLock(
    runtime,
    config,
    (lock) => serve(runtime, loaded, plan, plugins, pluginConfigs, log, lock),
  );
}

/** `svc start` with a valid configuration, on storage this process owns: serves until SIGINT or SIGTERM. */
async function serve(
  runtime: RuntimeAdapter,
  loaded: LoadedConfig,
  plan: DefinitionPlan,
  plugins: readonly SvcPlugin[],
  pluginConfigs: ReadonlyMap<string, unknown>,
  log: LogLines,
  lock: DataDirLock | null = null,
): Promise<number> {
  const { config } = loaded;
  // Password hashing warms up (workers, WASM, the dummy hash) while storage opens and syncs: the
  // two do not depend on each other, and on a restart they are most of the time to ready.
  const passwords = new PasswordService({
    hasher:
      runtime.createPasswordHasher?.(config.password.hashWorkers, config.password.workerIdleSeconds * 1000, {
        native: config.password.nativeArgon2,
      }) ??
        createPasswordHasher({
          workers: config.password.hashWorkers,
          idleMs: config.password.workerIdleSeconds * 1000,
        }),
    params: argon2idParamsFromConfig(config.password),
    ceilings: passwordCostCeilingsFromConfig(config.password),
  });
  const passwordsReady = passwords.prepare();
  passwordsReady.catch(() => {}); // awaited below, where a failure is reported
  let database: SvcDatabase;
  try {
    database = await openDatabase(config.storage, runtime.embeddedStoreFiles);
    await database.ensureSchema();
  } catch (err) {
    runtime.printError(`storage: cannot open ${describeStorage(config)}: ${firstLine(err)}`);
    await passwords.close();
    return 1;
  }
  const sql = pluginSql(database.db);
  const jwsSigner = config.tokens.nativeRsaSigner
    ? runtime.createJwsSigner?.((line) => runtime.print(line)) ?? undefined
    : undefined;
  // The schema, plugin tables, definitions, signing keys and bootstrap administrator: safe when
  // several instances boot at once on one empty database.
  const { adminEmail, adminPassword } = config.bootstrap;
  let prepared: PreparedStorage;
  try {
    prepared = await prepareStorage(database, {
      plan,
      plugins,
      signingKeyOverlapMs: config.tokens.signingKeyOverlapSeconds * 1000,
      bootstrap: adminEmail !== undefined && adminPassword !== undefined
        ? { email: adminEmail, password: adminPassword }
        : null,
      passwords: async () => {
        await passwordsReady;
        return passwords;
      },
      jwsSigner,
      clock: systemClock,
      random: cryptoRandom,
    });
  } catch (err) {
    runtime.printError(err instanceof BootStepError ? err.message : firstLine(err));
    await database.close();
    await passwords.close();
    return 1;
  }
  const { storage, keyRing } = prepared;
  const { added, retired } = prepared.definitions.catalog;
  let rolesChanged = prepared.definitions.rolesCreated.length + prepared.definitions.rolesUpdated.length > 0;
  runtime.print(
    `definitions: ${plan.permissions.length} permissions published (${added.length} new, ${retired.length} retired), ${plan.roles.length} declared roles`,
  );
  if (prepared.bootstrap !== null) {
    const report = prepared.bootstrap;
    if (report.assignmentCreated || report.grantAdded) rolesChanged = true;
    runtime.print(
      `bootstrap: administrator ${adminEmail} ${report.userCreated ? "created" : "present"}${
        report.passwordSet ? ", password set" : ""
      }`,
    );
  }

  const events = new EventHub({
    onSubscriberError: (error) => runtime.printError(`events: a subscriber failed: ${firstLine(error)}`),
  });
  for (const plugin of plugins) if (plugin.onEvent) events.subscribe(plugin.onEvent);
  const bus: CacheBus = database.kind === "postgres"
    ? new NotificationCacheBus(database.notifications)
    : new InProcessCacheBus();
  // Events reach the in-process hub after commit, and the webhook outbox durably.
  const publisher = new EventPublisher({
    storage,
    sink: events,
    random: cryptoRandom,
    onError: (error, event) => runtime.printError(`events: ${event.kind} not recorded: ${firstLine(error)}`),
    onQueued: () => dispatcher.wake(),
  });
  // The one outbound guard every server-side fetch goes through (webhooks, JWKS, federation,
  // CAPTCHA): the runtime's DNS, its pinning connector where it has one, and its fetch.
  const outbound = createOutboundFetch({
    policy: outboundPolicyFromConfig(config),
    resolveHost: runtime.resolveHost
      ? (hostname) => runtime.resolveHost!(hostname)
      : () => Promise.reject(new Error("this runtime resolves no names")),
    connect: runtime.connectPinned?.bind(runtime),
    // A name's checked addresses serve 5 s of fetches (pinned: the connection goes to them).
    resolveCache: { clock: systemClock, ttlMs: 5000 },
    fetch: (input, init) => fetch(input, init),
    timeoutMs: config.outbound.timeoutMs,
    maxResponseBytes: config.outbound.maxResponseKib * 1024,
  });
  const dispatcher = new WebhookDispatcher({
    storage,
    outbound,
    clock: systemClock,
    publisher,
    retryDelaysMs: config.webhooks.retryScheduleSeconds.map((s) => s * 1000),
    disableAfter: config.webhooks.disableAfterConsecutiveFailures,
    onError: runtime.printError,
  });
  // Password login: hashing off the event loop, shared abuse counters and offline risk files
  // (before listening, so the first request can sign in).
  let riskProviders: Awaited<ReturnType<typeof loadRiskProviders>>;
  let captcha: CaptchaProvider | null;
  try {
    captcha = captchaProviderFromConfig(config.abuse.captcha, { fetch: outbound });
    riskProviders = await loadRiskProviders(config.risk, runtime.readTextFile);
    await passwordsReady;
  } catch (err) {
    runtime.printError(`login: cannot prepare password login: ${firstLine(err)}`);
    await passwords.close();
    await database.close();
    return 1;
  }
  const snapshots = new SubjectSnapshots({
    source: storage.subjectGrants,
    bus,
    events: publisher,
    clock: systemClock,
    ttlMs: config.authz.snapshotCacheTtlSeconds * 1000,
    maxEntries: config.authz.snapshotCacheMaxEntries,
  });
  await snapshots.start();
  // Declared roles changed: instances already running drop the snapshots they cached.
  if (rolesChanged) await snapshots.invalidateAll();
  // Sessions ended on any instance stop their access tokens here; ends before this start are preloaded.
  const endedSessions = new EndedSessions({
    clock: systemClock,
    retainMs: endedSessionRetainMs(config.tokens.accessTokenTtlSeconds),
    bus,
    source: storage.sessions,
  });
  await endedSessions.start();

  // The app is built once the real port is known (SVC_PORT=0), so that the defaults derived from
  // it are right. Nothing awaits between listening and setting the handler, so no request sees the stub.
  let handler: (req: Request, client?: { address?: string }) => Response | Promise<Response> = () =>
    new Response(null, { status: 503 });
  let server: { port: number; close(): Promise<void> };
  try {
    server = await runtime.serve((req, client) => handler(req, client), {
      hostname: config.server.host,
      port: config.server.port,
    });
  } catch (err) {
    runtime.printError(
      `server: cannot listen on ${config.server.host}:${config.server.port}: ${
        firstLine(err)
      }; set SVC_HOST and SVC_PORT to a free address`,
    );
    await snapshots.stop();
    await passwords.close();
    await database.close();
    return 1;
  }
  const bound = withListenPort(loaded, server.port);
  const auth = createAuthStack({
    config: bound.config,
    storage,
    clock: systemClock,
    random: cryptoRandom,
    events: publisher,
    keys: keyRing,
    endedSessions,
  });
  const counters = createSqlCounterStore(database.db, { clock: systemClock });
  const passkeys = createPasskeyRoutes({
    config: bound.config,
    storage,
    clock: systemClock,
    random: cryptoRandom,
    events: publisher,
    auth,
    counters,
  });
  // Mail: flows queue messages in the outbox; the worker relays them (SMTP, or the log in development).
  let mailChoice: ReturnType<typeof mailRelayFromConfig>;
  try {
    mailChoice = mailRelayFromConfig(bound.config, runtime.print);
  } catch (err) {
    runtime.printError(`mail: ${firstLine(err)}`);
    await server.close();
    await snapshots.stop();
    await endedSessions.stop();
    await passwords.close();
    await database.close();
    return 1;
  }
  const mailWorker = mailChoice.relay === null ? null : new MailDeliveryWorker({
    store: storage.mailOutbox,
    relay: mailChoice.relay,
    clock: systemClock,
    retryDelaysMs: bound.config.mailDelivery.retryScheduleSeconds.map((s) => s * 1000),
    leaseMs: Math.max(120_000, 4 * bound.config.smtp.timeoutSeconds * 1000),
    pollIntervalMs: bound.config.mailDelivery.pollIntervalMs,
    onError: runtime.printError,
  });
  const mail = createOutboxTransport(storage.mailOutbox, { onQueued: () => mailWorker?.wake() });
  const sweeper = new MaintenanceSweeper({
    storage,
    counters,
    clock: systemClock,
    intervalMs: bound.config.maintenance.intervalSeconds * 1000,
    onError: (task, error) => runtime.printError(`maintenance: ${task} failed: ${firstLine(error)}`),
  });
  const login = createLoginStack({
    config: bound.config,
    storage,
    clock: systemClock,
    random: cryptoRandom,
    auth,
    events: publisher,
    snapshots,
    passwords,
    counters,
    geo: riskProviders.geo,
    reputation: riskProviders.reputation,
    captcha,
    mail,
    onError: runtime.printError,
  });
  const metrics = createSvcMetrics({
    webhookQueue: () => storage.webhooks.queueStats(),
    snapshots,
    databasePool: database.pool,
    now: () => systemClock.now(),
  });
  events.subscribe(metrics.onEvent);
  const contributeClaims = claimMerger(plugins, runtime.printError);
  const grants = tokenGrantRegistry();
  const pluginPermissions = plugins.flatMap((plugin) => (plugin.permissions ?? []).map((p) => p.id));
  const installed: InstalledPlugin[] = plugins.map((plugin) => ({
    plugin,
    context: {
      name: plugin.name,
      config: pluginConfigs.get(plugin.name),
      svcConfig: bound.config,
      clock: systemClock,
      random: cryptoRandom,
      storage,
      sql,
      keys: keyRing,
      tokens: auth.tokens,
      sessions: auth.sessions,
      login: login.pipeline,
      authenticator: auth.authenticator,
      cookies: cookieSettings(bound.config),
      events: publisher,
      admin: pluginAdmin({
        storage,
        snapshots,
        publisher,
        pluginPermissions,
        pluginName: plugin.name,
        clock: systemClock,
        sessions: endedSessions,
      }),
      outbound,
      verifySecret: async (stored, plaintext) => {
        try {
          return (await passwords.verify(stored, plaintext)).valid;
        } catch {
          return false;
        }
      },
      contributeClaims,
      tokenGrants: grants.list,
      logError: runtime.printError,
    },
  }));
  grants.install(installed, runtime.printError);
  const started: InstalledPlugin[] = [];
  try {
    for (const entry of installed) {
      await entry.plugin.start?.(entry.context);
      started.push(entry);
    }
  } catch (err) {
    runtime.printError(`plugin ${installed[started.length].plugin.name}: start failed: ${firstLine(err)}`);
    for (const entry of started.reverse()) {
      await attempt(runtime, `plugin ${entry.plugin.name}`, async () => {
        await entry.plugin.stop?.();
      });
    }
    await server.close();
    await snapshots.stop();
    await endedSessions.stop();
    await login.close();
    await database.close();
    return 1;
  }
  if (plugins.length > 0) runtime.print(`plugins: ${plugins.map((plugin) => plugin.name).join(", ")}`);
  const app = createApp({
    config: bound.config,
    metrics: { recorder: metrics, now: () => performance.now() },
    ...(bound.config.log.requests && {
      logRequest: (entry: RequestLogEntry) => log.info("request", { ...entry }),
    }),
    readinessChecks: [
      { name: "database", check: () => pingDatabase(database) },
      auth.readinessCheck,
      breakGlassReadinessCheck(
        new BreakGlassMonitor({
          storage,
          clock: systemClock,
          events: publisher,
          drillWindowMs: bound.config.breakGlass.drillWindowDays * DAY_MS,
        }),
        bound.config.breakGlass.drillRequiredForReadiness,
      ),
      ...installed.filter((entry) => entry.plugin.readiness !== undefined).map((entry) => ({
        name: `plugin:${entry.plugin.name}`,
        check: () => entry.plugin.readiness!(entry.context),
      })),
    ],
    authenticator: auth.authenticator,
    readinessDetails: readinessDetailsForAdmins(snapshots),
    clock: systemClock,
    random: cryptoRandom,
    logError: runtime.printError,
    routes: [
      ...svcRoutes({
        storage,
        snapshots,
        publisher,
        auth,
        login,
        passkeys,
        wake: () => dispatcher.wake(),
        resolveTxt: runtime.resolveTxt?.bind(runtime),
        signInDiscovery: signInDiscoverer(installed, runtime.printError),
        pluginPermissions,
      }),
      ...installed.flatMap((
        { plugin, context },
      ) => [...plugin.routes ?? [], ...plugin.mount?.(context) ?? []]),
    ],
  });
  const proxies = new TrustedProxies(bound.config.server.trustedProxies);
  handler = (req, client) =>
    app.fetch(req, {
      clientAddress: resolveClientAddress(client?.address, req.headers.get("X-Forwarded-For"), proxies),
      // Every runtime's server frames a body by its declared length (see ClientBindings).
      framedBodies: true,
    });
  dispatcher.start();
  sweeper.start();
  mailWorker?.start();

  const { host, port, pathBase, baseUrl } = bound.config.server;
  // The CLI (svc mail, svc import, svc login) finds this server through the data folder's lock.
  await lock?.announce(localUrlOf(host, port, pathBase)).catch((err) =>
    runtime.printError(`storage: cannot record the server URL in the lock file: ${firstLine(err)}`)
  );
  // Postgres is shared: record this instance's issuer and warn when a live one serves another.
  let presence: InstancePresence | null = null;
  if (database.kind === "postgres") {
    presence = new InstancePresence({
      store: createSqlInstanceStore(storage.pluginSql),
      clock: systemClock,
      random: cryptoRandom,
      issuer: baseUrl,
      hostname: runtime.lockFiles?.hostname ?? "unknown",
      pid: runtime.lockFiles?.pid ?? 0,
      onError: runtime.printError,
    });
    try {
      const warning = await presence.start();
      if (warning !== null) runtime.printError(warning);
    } catch (err) {
      runtime.printError(`instances: cannot register this instance: ${firstLine(err)}`);
    }
  }
  let setupLines: readonly string[] = [];
  try {
    setupLines = await firstRunLines(
      { storage, clock: systemClock, random: cryptoRandom },
      bound.config,
      mailChoice.description,
    );
  } catch (err) {
    runtime.printError(`setup: cannot prepare the setup link: ${firstLine(err)}`);
  }

  // The issuer (the base URL) is what tokens carry as iss, and may differ from the listen address.
  runtime.print(`jwks: ${publicUrl(bound.config.server, "/.well-known/jwks.json")}`);
  runtime.print(
    `svc listening on http://${
      host.includes(":") ? `[${host}]` : host
    }:${port}${pathBase}, issuer ${baseUrl} (storage: ${describeStorage(bound.config)})`,
  );
  runtime.print(`mail: ${mailChoice.description}`);
  if (jwsSigner !== undefined) runtime.print(`signing: RS256 with ${jwsSigner.name} (SVC_RSA_NATIVE_SIGNER)`);
  runtime.print(`defaults used: ${describeDefaults(bound)}`);
  for (const line of setupLines) runtime.print(line);
  // From the "listening" line on, nothing is awaited before the shutdown handler is installed: a
  // SIGTERM right after it must still stop the server gracefully.
  return await new Promise<number>((resolve) => {
    let stopping = false;
    runtime.onShutdown(async () => {
      if (stopping) return;
      stopping = true;
      const closed = [
        await attempt(runtime, "server", () => server.close()),
        ...await Promise.all(
          [...installed].reverse().map((entry) =>
            attempt(runtime, `plugin ${entry.plugin.name}`, async () => {
              await entry.plugin.stop?.();
            })
          ),
        ),
        await attempt(runtime, "webhook dispatcher", () => dispatcher.stop()),
        await attempt(runtime, "maintenance", () => sweeper.stop()),
        await attempt(runtime, "mail delivery", () => mailWorker?.stop() ?? Promise.resolve()),
        await attempt(runtime, "snapshot cache bus", () => snapshots.stop()),
        await attempt(runtime, "ended sessions", () => endedSessions.stop()),
        await attempt(runtime, "password login", () => login.close()),
        await attempt(runtime, "instances", () => presence?.stop() ?? Promise.resolve()),
        await attempt(runtime, "events in flight", () => publisher.settled()),
        await attempt(runtime, "storage", () => database.close()),
      ];
      runtime.print("svc stopped");
      resolve(closed.every(Boolean) ? 0 : 1);
    });
  });
}

/** `svc audit …`: loads the configuration like `start`, then runs the audit command. */
async function audit(args: string[], runtime: RuntimeAdapter): Promise<number> {
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig(await configSources(runtime));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    runtime.printError(err.message);
    return 1;
  }
  return await withStorageLock(runtime, loaded.config, async () => {
    try {
      return await auditCommand(args, loaded.config, runtime);
    } catch (err) {
      runtime.printError(`audit: ${firstLine(err)}`);
      return 1;
    }
  });
}

/**
 * `svc break-glass …`: loads the configuration like `start`, then creates or rotates the realm's
 * break-glass account. On the embedded store a running server's lock refuses it with one line.
 */
async function breakGlass(args: string[], runtime: RuntimeAdapter): Promise<number> {
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig(await configSources(runtime));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    runtime.printError(err.message);
    return 1;
  }
  const locked = (err: DataDirLockedError) => breakGlassLockedLine(args[0] ?? "", err.dataDir);
  return await withStorageLock(runtime, loaded.config, async () => {
    try {
      return await breakGlassCommand(args, loaded.config, runtime);
    } catch (err) {
      runtime.printError(`break-glass: ${firstLine(err)}`);
      return 1;
    }
  }, locked);
}

/** `svc login` / `svc logout`: the stored administrator token of the running server. */
async function sessionCli(
  command: "login" | "logout",
  args: string[],
  runtime: RuntimeAdapter,
): Promise<number> {
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig(await configSources(runtime));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    runtime.printError(err.message);
    return 1;
  }
  return command === "login"
    ? await loginCommand(args, loaded.config, runtime, () => systemClock.now())
    : await logoutCommand(args, loaded.config, runtime);
}

/**
 * `svc admin create …`: loads the configuration like `start`, then creates the first
 * administrator on the storage directly. On the embedded store a running server's lock refuses it
 * with one line pointing at the setup link that server printed.
 */
async function adminCli(args: string[], runtime: RuntimeAdapter): Promise<number> {
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig(await configSources(runtime));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    runtime.printError(err.message);
    return 1;
  }
  return await withStorageLock(
    runtime,
    loaded.config,
    async () => {
      try {
        return await adminCommand(args, loaded.config, runtime);
      } catch (err) {
        runtime.printError(`admin: ${firstLine(err)}`);
        return 1;
      }
    },
    (err) =>
      `admin: a running svc holds ${err.dataDir}; open the setup link it printed, or stop it and run this again`,
  );
}

/**
 * `svc import …`: loads the configuration like `start`, then imports on the storage directly, or,
 * when a running server holds the embedded store, through that server's HTTP API.
 */
async function importCli(args: string[], runtime: RuntimeAdapter): Promise<number> {
  const parsed = parseImportArgs(args);
  if (parsed === null) {
    runtime.printError(IMPORT_USAGE_LINE);
    return 2;
  }
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig(await configSources(runtime));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    runtime.printError(err.message);
    return 1;
  }
  const guarded = async (task: () => Promise<number>) => {
    try {
      return await task();
    } catch (err) {
      runtime.printError(`import: ${firstLine(err)}`);
      return 1;
    }
  };
  return await withStorageLock(
    runtime,
    loaded.config,
    () => guarded(() => importCommand(parsed, loaded.config, runtime)),
    undefined,
    () =>
      guarded(async () => {
        const url = await runningServerUrl(runtime, loaded.config);
        const token = await adminToken(runtime, url, systemClock.now());
        return await importViaServer(parsed, loaded.config, runtime, undefined, { url, token });
      }),
  );
}

/**
 * `svc mail list|show`: the outbox of the configured storage. When a running server holds the
 * embedded store, the command reads that server's outbox over HTTP with `SVC_ADMIN_TOKEN`.
 */
async function mail(args: string[], runtime: RuntimeAdapter): Promise<number> {
  const parsed = parseMailArgs(args);
  if (parsed === null) {
    runtime.printError(`usage:\n${MAIL_USAGE.join("\n")}`);
    return 2;
  }
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig(await configSources(runtime));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    runtime.printError(err.message);
    return 1;
  }
  const { config } = loaded;
  return await withStorageLock(
    runtime,
    config,
    async () => {
      try {
        return await mailCommand(parsed, config, runtime);
      } catch (err) {
        runtime.printError(`mail: ${firstLine(err)}`);
        return 1;
      }
    },
    undefined,
    async (err) => {
      const url = await runningServerUrl(runtime, config);
      const token = await adminToken(runtime, url, systemClock.now());
      if (token === null) {
        runtime.printError(mailLockedLine(err.dataDir));
        return 1;
      }
      return await mailOverHttp(parsed, { baseUrl: url, pathBase: "" }, token, runtime);
    },
  );
}

/**
 * Runs `task` holding the embedded store's data folder lock (Postgres needs none). A folder
 * another live process holds stops the command with one line naming the folder and the holder
 * (or the line `lockedLine` gives), unless `onLocked` takes over (it runs instead of `task`).
 */
async function withStorageLock(
  runtime: RuntimeAdapter,
  config: SvcConfig,
  task: (lock: DataDirLock | null) => Promise<number>,
  lockedLine?: (err: DataDirLockedError) => string,
  onLocked?: (err: DataDirLockedError) => Promise<number>,
): Promise<number> {
  if (config.storage.kind !== "embedded" || runtime.lockFiles === undefined) return await task(null);
  const dataDir = config.storage.dataDir;
  let lock: DataDirLock;
  try {
    lock = await lockDataDir(runtime.lockFiles, dataDir, new Date(systemClock.now()));
  } catch (err) {
    if (err instanceof DataDirLockedError && onLocked) return await onLocked(err);
    runtime.printError(
      err instanceof DataDirLockedError
        ? (lockedLine?.(err) ?? err.message)
        : `storage: cannot lock ${dataDir}: ${firstLine(err)}`,
    );
    return 1;
  }
  if (lock.tookOver !== null) {
    const { pid, hostname } = lock.tookOver;
    runtime.print(
      `storage: took over the lock of ${dataDir} from pid ${pid} on host ${hostname}, which is gone`,
    );
  }
  try {
    return await task(lock);
  } finally {
    await lock.release();
  }
}

/** How long one shutdown step may take before svc reports it and goes on to the next. */
export const SHUTDOWN_STEP_DEADLINE_MS = 10_000;

/**
 * Runs a shutdown step; reports its failure instead of throwing. A step still running after
 * `deadlineMs` (a connection a client never closes, a query that never answers) is reported and
 * left behind, so that SIGTERM always ends the process.
 */
export async function attempt(
  runtime: Pick<RuntimeAdapter, "printError">,
  what: string,
  step: () => Promise<void>,
  deadlineMs = SHUTDOWN_STEP_DEADLINE_MS,
): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const overdue = new Promise<"overdue">((resolve) => {
    timer = setTimeout(() => resolve("overdue"), deadlineMs);
  });
  try {
    const outcome = await Promise.race([step().then(() => "closed" as const), overdue]);
    if (outcome === "overdue") {
      runtime.printError(`${what}: did not close within ${deadlineMs / 1000} s; going on`);
      return false;
    }
    return true;
  } catch (err) {
    runtime.printError(`${what}: error while closing: ${firstLine(err)}`);
    return false;
  } finally {
    clearTimeout(timer);
  }
}

async function configSources(
  runtime: RuntimeAdapter,
): Promise<{ env: Record<string, string | undefined>; fileText?: string }> {
  const env = runtime.env();
  const file = env.SVC_CONFIG_FILE;
  if (file === undefined || file === "") return { env };
  try {
    return { env, fileText: await runtime.readTextFile(file) };
  } catch (err) {
    throw new ConfigError(
      `config: SVC_CONFIG_FILE: ${file} cannot be read (${
        firstLine(err)
      }); set SVC_CONFIG_FILE to a readable JSON file or unset it`,
    );
  }
}

async function pingDatabase(database: SvcDatabase): Promise<void> {
  try {
    await database.ping();
  } catch (err) {
    // The driver's message may name hosts or users; readiness is public, so it gets a fixed text.
    throw new StorageError(`${database.kind} database did not answer`, { cause: err });
  }
}

/** The URL a client on this host reaches a server listening on `host`:`port` at (a wildcard host: loopback). */
export function localUrlOf(host: string, port: number, pathBase: string): string {
  const reachable = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  return `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${port}${pathBase}`;
}

function describeStorage(config: SvcConfig): string {
  return config.storage.kind === "embedded" ? `embedded at ${config.storage.dataDir}` : "postgres";
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split("\n")[0];
}
