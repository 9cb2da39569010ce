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
  loadConfig,
  type LoadedConfig,
  RESERVED_ENV,
  settingDefault,
  type SvcConfig,
  withListenPort,
} from "../core/config/mod.ts";
import { StorageError } from "../core/errors.ts";
import { cryptoRandom } from "../core/random.ts";
import { DefinitionError, type DefinitionPlan, planDefinitions } from "../core/definitions/declarations.ts";
import { syncDefinitions } from "../core/definitions/sync.ts";
import { EventHub } from "../core/events/sink.ts";
import { EventPublisher } from "../core/events/publisher.ts";
import { WebhookDispatcher } from "../core/webhooks/dispatcher.ts";
import { auditRoutes } from "../http/routes/audit.ts";
import { webhookRoutes } from "../http/routes/webhooks.ts";
import { createSqlStorage } from "../storage/storage.ts";
import { AUDIT_USAGE, auditCommand } from "./audit.ts";
import { type CacheBus, InProcessCacheBus, NotificationCacheBus } from "../core/snapshots/bus.ts";
import { SubjectSnapshots } from "../core/snapshots/service.ts";
import { createApp } from "../http/app.ts";
import { resolveClientAddress, TrustedProxies } from "../http/client-ip.ts";
import { authzRoutes } from "../http/routes/authz.ts";
import { KeyRing } from "../core/keys/ring.ts";
import { createAuthStack } from "../http/auth/stack.ts";
import { createLoginStack } from "../http/auth/login-stack.ts";
import { bootstrapAdmin } from "../core/accounts/bootstrap.ts";
import { argon2idParamsFromConfig } from "../core/passwords/argon2-params.ts";
import { createPasswordHasher } from "../core/passwords/create.ts";
import type { PasswordHasher } from "../core/passwords/hasher.ts";
import { PasswordService } from "../core/passwords/service.ts";
import { loadRiskProviders } from "../core/risk/providers.ts";
import { type CaptchaProvider, captchaProviderFromConfig } from "../core/abuse/captcha.ts";
import { createSqlCounterStore } from "../storage/sql/abuse-counters.ts";
import { MaintenanceSweeper } from "../core/maintenance/sweeper.ts";
import { createPasskeyRoutes } from "../http/routes/passkeys.ts";
import { openDatabase, type SvcDatabase } from "../storage/open.ts";
import { schemaScript } from "../storage/schema.ts";
import { checkPlugins, PluginError, type SvcPlugin } from "../plugins/plugin.ts";
import { vectorsCommand } from "./vectors.ts";

/** What the CLI needs from the runtime it runs on. */
export interface RuntimeAdapter {
  name: "deno" | "bun" | "node";
  /** The process environment. */
  env(): Record<string, string | undefined>;
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
   * one per core); absent: Web Workers (`createPasswordHasher`). Node passes its worker_threads pool.
   */
  createPasswordHasher?(workers: number | undefined): PasswordHasher;
  /**
   * The addresses a host name resolves to, for the webhook SSRF guard (a public name that
   * resolves to a private address is refused); absent: literal addresses only are checked.
   */
  resolveHost?(hostname: string): Promise<readonly string[]>;
  /** Writes a line to stdout. */
  print(line: string): void;
  /** Writes a line to stderr. */
  printError(line: string): void;
}

const USAGE = [
  "usage: svc <command>",
  "",
  "commands:",
  "  start            serve svc (configuration: SVC_* environment variables, see below)",
  "  schema           print the SQL that creates svc's tables",
  "  vectors [FILE…]  run golden authorization vectors (default: the repository's)",
  AUDIT_USAGE,
  "  help             print this help",
];

/** What a host adds when it runs svc's CLI itself. */
export interface CliOptions {
  /** Plugins installed by `start`: routes, published permissions and event subscribers. */
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
    case "vectors":
      return await vectorsCommand(rest, { readTextFile: runtime.readTextFile, print: runtime.print });
    case undefined:
    case "help":
    case "--help":
    case "-h":
      help(runtime.print);
      return 0;
    default:
      runtime.printError(`svc: unknown command ${JSON.stringify(command)}; run "svc help" for the commands`);
      return 2;
  }
}

function help(print: (line: string) => void): void {
  for (const line of USAGE) print(line);
  print("");
  print(
    "settings (environment variables override the file named by SVC_CONFIG_FILE, which overrides the defaults):",
  );
  const rows = [
    ...ENV_SETTINGS.map((s) => [s.name, settingDefault(s), s.doc]),
    ...Object.entries(RESERVED_ENV).map(([name, doc]) => [name, "unset", doc]),
  ];
  for (const [name, def, doc] of rows) {
    print(`  ${name} (default: ${def})`);
    print(`      ${doc}`);
  }
}

/** `svc start`: serves until SIGINT or SIGTERM. */
async function start(runtime: RuntimeAdapter, plugins: readonly SvcPlugin[]): Promise<number> {
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig(await configSources(runtime));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    runtime.printError(err.message);
    return 1;
  }
  const { config } = loaded;
  let plan: DefinitionPlan;
  try {
    checkPlugins(plugins);
    plan = planDefinitions(config.authz, plugins.flatMap((plugin) => plugin.permissions ?? []));
  } catch (err) {
    if (!(err instanceof DefinitionError) && !(err instanceof PluginError)) throw err;
    runtime.printError(err.message);
    return 1;
  }

  let database: SvcDatabase;
  try {
    database = await openDatabase(config.storage);
    await database.ensureSchema();
  } catch (err) {
    runtime.printError(`storage: cannot open ${describeStorage(config)}: ${firstLine(err)}`);
    return 1;
  }

  const deps = { clock: systemClock, random: cryptoRandom };
  const storage = createSqlStorage(database, deps);
  let rolesChanged = false;
  try {
    const report = await syncDefinitions(plan, {
      catalog: storage.permissionCatalog,
      realms: storage.realms,
      roles: storage.roles,
    });
    const { added, retired } = report.catalog;
    rolesChanged = report.rolesCreated.length + report.rolesUpdated.length > 0;
    runtime.print(
      `definitions: ${plan.permissions.length} permissions published (${added.length} new, ${retired.length} retired), ${plan.roles.length} declared roles`,
    );
  } catch (err) {
    runtime.printError(`definitions: sync failed: ${firstLine(err)}`);
    await database.close();
    return 1;
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
    clock: systemClock,
    random: cryptoRandom,
    onError: (error, event) => runtime.printError(`events: ${event.kind} not recorded: ${firstLine(error)}`),
    onQueued: () => dispatcher.wake(),
  });
  const dispatcher = new WebhookDispatcher({
    storage,
    fetch: (input, init) => fetch(input, init),
    clock: systemClock,
    random: cryptoRandom,
    publisher,
    retryDelaysMs: config.webhooks.retryScheduleSeconds.map((s) => s * 1000),
    disableAfter: config.webhooks.disableAfterConsecutiveFailures,
    receiverPolicy: { allowPrivate: config.webhooks.allowPrivateReceivers },
    resolveHost: runtime.resolveHost ? (hostname) => runtime.resolveHost!(hostname) : undefined,
    onError: runtime.printError,
  });
  // A primary signing key for every realm (the default realm at least), before serving.
  const keyRing = new KeyRing({
    store: storage.signingKeys,
    clock: systemClock,
    random: cryptoRandom,
    overlapMs: config.tokens.signingKeyOverlapSeconds * 1000,
  });
  try {
    for (const realm of await storage.realms.list()) await keyRing.ensurePrimary(realm.id);
  } catch (err) {
    runtime.printError(`signing keys: cannot create or load the realms' primary keys: ${firstLine(err)}`);
    await database.close();
    return 1;
  }
  // Password login: hashing off the event loop, shared abuse counters, offline risk files, and
  // the bootstrap administrator (before listening, so the first request can sign in).
  const passwords = new PasswordService({
    hasher: runtime.createPasswordHasher?.(config.password.hashWorkers) ??
      createPasswordHasher({ workers: config.password.hashWorkers }),
    params: argon2idParamsFromConfig(config.password),
  });
  let riskProviders: Awaited<ReturnType<typeof loadRiskProviders>>;
  let captcha: CaptchaProvider | null;
  try {
    captcha = captchaProviderFromConfig(config.abuse.captcha);
    riskProviders = await loadRiskProviders(config.risk, runtime.readTextFile);
    await passwords.prepare();
    const { adminEmail, adminPassword } = config.bootstrap;
    if (adminEmail !== undefined && adminPassword !== undefined) {
      const realm = await storage.realms.getDefault();
      if (realm === null) throw new Error("the default realm does not exist");
      const report = await bootstrapAdmin({ storage, passwords }, {
        realmId: realm.id,
        email: adminEmail,
        password: adminPassword,
      });
      if (report.assignmentCreated || report.grantAdded) rolesChanged = true;
      runtime.print(
        `bootstrap: administrator ${adminEmail} ${report.userCreated ? "created" : "present"}${
          report.passwordSet ? ", password set" : ""
        }`,
      );
    }
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
  });
  const passkeys = createPasskeyRoutes({
    config: bound.config,
    storage,
    clock: systemClock,
    random: cryptoRandom,
    events: publisher,
    auth,
  });
  const counters = createSqlCounterStore(database.db, { clock: systemClock });
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
    onError: runtime.printError,
  });
  const app = createApp({
    config: bound.config,
    readinessChecks: [{ name: "database", check: () => pingDatabase(database) }, auth.readinessCheck],
    authenticator: auth.authenticator,
    clock: systemClock,
    random: cryptoRandom,
    logError: runtime.printError,
    routes: [
      ...auth.routes,
      authzRoutes(snapshots),
      webhookRoutes({ storage, snapshots, publisher, wake: () => dispatcher.wake() }),
      auditRoutes({ storage, snapshots, publisher }),
      ...login.routes,
      passkeys.routes,
      ...plugins.flatMap((plugin) => plugin.routes ?? []),
    ],
  });
  const proxies = new TrustedProxies(bound.config.server.trustedProxies);
  handler = (req, client) =>
    app.fetch(req, {
      clientAddress: resolveClientAddress(client?.address, req.headers.get("X-Forwarded-For"), proxies),
    });
  dispatcher.start();
  sweeper.start();

  const { host, port, pathBase } = bound.config.server;
  runtime.print(
    `svc listening on http://${host.includes(":") ? `[${host}]` : host}:${port}${pathBase} (storage: ${
      describeStorage(bound.config)
    })`,
  );
  runtime.print(`defaults used: ${describeDefaults(bound)}`);

  return await new Promise<number>((resolve) => {
    let stopping = false;
    runtime.onShutdown(async () => {
      if (stopping) return;
      stopping = true;
      const closed = [
        await attempt(runtime, "server", () => server.close()),
        await attempt(runtime, "webhook dispatcher", () => dispatcher.stop()),
        await attempt(runtime, "maintenance", () => sweeper.stop()),
        await attempt(runtime, "snapshot cache bus", () => snapshots.stop()),
        await attempt(runtime, "password login", () => login.close()),
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
  try {
    return await auditCommand(args, loaded.config, runtime);
  } catch (err) {
    runtime.printError(`audit: ${firstLine(err)}`);
    return 1;
  }
}

/** Runs a shutdown step; reports its failure instead of throwing. */
async function attempt(runtime: RuntimeAdapter, what: string, step: () => Promise<void>): Promise<boolean> {
  try {
    await step();
    return true;
  } catch (err) {
    runtime.printError(`${what}: error while closing: ${firstLine(err)}`);
    return false;
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

function describeStorage(config: SvcConfig): string {
  return config.storage.kind === "embedded" ? `embedded at ${config.storage.dataDir}` : "postgres";
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split("\n")[0];
}
