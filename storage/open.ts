/**
 * Opens the svc database on one of its two drivers: PGlite (embedded, data kept
 * in a folder, the default) or postgres.js (a Postgres server). Both speak the
 * same Postgres dialect to the same schema, through kysely.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { Kysely, sql, type Transaction } from "kysely";
import type { Database } from "./database.ts";
import { PgliteDialect } from "./pglite-dialect.ts";
import { type DatabasePoolStats, PoolStatsRecorder } from "./pool-stats.ts";
import { traceQueries } from "./tracing.ts";
import { schemaFingerprint, schemaStatements } from "./schema.ts";
import { LockClass, lockForTransaction } from "./sql/advisory-locks.ts";

/**
 * Each driver is loaded when a database of its kind opens, not with this module: a server on
 * Postgres never loads PGlite (about 6 MiB resident), an embedded one never loads postgres.js and
 * the Node compatibility modules it pulls in (about 9 MiB). See docs/operations/memory.md.
 */
const loadPglite = () => import("@electric-sql/pglite");
const loadPostgres = () => Promise.all([import("postgres"), import("kysely-postgres-js")]);

/** Where the data lives. */
export type DatabaseOptions =
  | {
    kind: "embedded";
    /** A folder for PGlite's files, created on first start; `undefined` keeps data in memory. */
    dataDir?: string;
  }
  | {
    kind: "postgres";
    /** A `postgres://` connection URL. */
    url: string;
    /** Pool size (default 10). */
    maxConnections?: number;
    /** A schema to create and use instead of `public` (tests use one per suite). */
    schema?: string;
  };

/** A cross-instance notification channel (Postgres LISTEN/NOTIFY). */
export interface Notifications {
  /** Subscribes to a channel; resolves once listening, to a function that unsubscribes. */
  listen(channel: string, onMessage: (payload: string) => void): Promise<() => Promise<void>>;
  /** Sends a payload to every listener of the channel, on every instance sharing the database. */
  notify(channel: string, payload: string): Promise<void>;
}

/** An open svc database. */
export interface SvcDatabase {
  /** The kysely handle every store uses. */
  readonly db: Kysely<Database>;
  /** Which driver is underneath. */
  readonly kind: "embedded" | "postgres";
  /** LISTEN/NOTIFY on either driver. */
  readonly notifications: Notifications;
  /**
   * The connection pool as it stands (the metrics endpoint's `svc_db_pool_*`): on a Postgres
   * server, postgres.js's `max` connections; embedded, PGlite's single connection, whose `waiting`
   * is the queue of queries and transactions behind the running one.
   */
  readonly pool: DatabasePoolStats;
  /** Creates every table and index if missing; safe to call concurrently from many instances. */
  ensureSchema(): Promise<void>;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  /** Closes every connection (and, embedded, flushes to disk). */
  close(): Promise<void>;
}

/** How long `close()` lets running queries finish on a Postgres server before cutting them. */
const CLOSE_TIMEOUT_SECONDS = 5;
const SAFE_IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;
/**
 * Memory settings of the embedded Postgres: one process serving one svc instance needs far less
 * than Postgres's defaults (128 MB of shared buffers), and the buffers are resident in the WASM
 * heap (Postgres initializes them whole at startup, and a WebAssembly memory never shrinks).
 * 4 MB (512 pages) keeps 14 MiB less resident than the 16 MB svc used before (PGlite's memory at
 * idle: 29 -> 15 MiB); a page that is not in them is read through PGlite's file system from the
 * OS page cache, which still holds the data files (random updates on a 54 MB table: +23%). Durability is unchanged: only the
 * cache's size moves, not when WAL is flushed. PGlite serves one connection, so Postgres's 100
 * connections would only size process and lock tables (about 2 MB of shared memory) for backends
 * that never exist. See docs/operations/memory.md.
 */
const EMBEDDED_POSTGRESQL_CONF = ["shared_buffers = 4MB", "wal_buffers = 512kB", "max_connections = 8"];

/**
 * What a host supplies to the embedded store beyond PGlite's package: PGlite's own files (its
 * Postgres build, initdb and the initial file system) when it carries them itself, such as a
 * compiled binary with no `node_modules`; and a prepared cluster (a gzip tarball of an initialized
 * empty cluster with svc's schema, see `storage/embedded/prepare-cluster.ts`), loaded into a data
 * folder that has no cluster yet instead of running initdb there. Every field is optional.
 */
export interface EmbeddedStoreFiles {
  /** PGlite's Postgres build. */
  readonly pgliteWasm?: WebAssembly.Module;
  /** PGlite's initdb build. */
  readonly initdbWasm?: WebAssembly.Module;
  /** PGlite's initial file system. */
  readonly fsBundle?: Blob;
  /** A prepared cluster to load into a data folder that has none yet. */
  readonly preparedCluster?: Blob;
}

/**
 * Where a host's {@link EmbeddedStoreFiles} come from, asked when the embedded store opens with
 * its data folder (`undefined`: in memory). The host leaves `preparedCluster` out when the folder
 * already holds a cluster (PGlite refuses to load over one).
 */
export type EmbeddedStoreFilesSource = (dataDir: string | undefined) => Promise<EmbeddedStoreFiles>;

/**
 * Opens a database. The schema is not created until `ensureSchema()`. `embeddedFiles` supplies
 * files to the embedded store when the host has them (ignored on a Postgres server).
 */
export async function openDatabase(
  options: DatabaseOptions,
  embeddedFiles?: EmbeddedStoreFilesSource,
): Promise<SvcDatabase> {
  return options.kind === "embedded"
    ? await openEmbedded(options.dataDir, await embeddedFiles?.(options.dataDir))
    : await openPostgres(options);
}

async function openEmbedded(
  dataDir: string | undefined,
  files: EmbeddedStoreFiles | undefined,
): Promise<SvcDatabase> {
  const { PGlite } = await loadPglite();
  const pg = await PGlite.create(dataDir ?? undefined, {
    // int8 as a JS number, as configured for postgres.js below.
    parsers: { 20: (value: string) => Number(value) },
    postgresqlconf: EMBEDDED_POSTGRESQL_CONF,
    ...(files?.pgliteWasm && { pgliteWasmModule: files.pgliteWasm }),
    ...(files?.initdbWasm && { initdbWasmModule: files.initdbWasm }),
    ...(files?.fsBundle && { fsBundle: files.fsBundle }),
    ...(files?.preparedCluster && { loadDataDir: files.preparedCluster }),
  });
  const pool = new PoolStatsRecorder(1);
  const db = new Kysely<Database>({ dialect: pool.wrap(traceQueries(new PgliteDialect(pg))) });
  return {
    db,
    kind: "embedded",
    pool,
    notifications: {
      async listen(channel, onMessage) {
        const unsubscribe = await pg.listen(channel, onMessage);
        return async () => await unsubscribe();
      },
      async notify(channel, payload) {
        await sql`SELECT pg_notify(${channel}, ${payload})`.execute(db);
      },
    },
    ensureSchema: () => createSchema(db, undefined),
    ping: async () => {
      await sql`SELECT 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}

/** Postgres's longest identifier (and channel name), in bytes. */
const MAX_CHANNEL_BYTES = 63;

/**
 * The Postgres channel of `channel` for a database in `schema`: channels are database-wide, so
 * instances using another schema of the same database (another deployment, another test bed) must
 * neither hear this one's messages nor be heard. The default schema keeps the bare name.
 */
export function schemaChannel(channel: string, schema: string | undefined): string {
  if (!schema) return channel;
  const named = `${channel}:${schema}`;
  return new TextEncoder().encode(named).length <= MAX_CHANNEL_BYTES
    ? named
    : `${channel}:${bytesToHex(sha256(new TextEncoder().encode(schema))).slice(0, 16)}`;
}

async function openPostgres(options: Extract<DatabaseOptions, { kind: "postgres" }>): Promise<SvcDatabase> {
  if (options.schema !== undefined && !SAFE_IDENTIFIER.test(options.schema)) {
    throw new TypeError(`invalid schema name: ${options.schema}`);
  }
  const [{ default: postgres }, { PostgresJSDialect }] = await loadPostgres();
  const connection: Record<string, string> = { application_name: "svc" };
  if (options.schema) connection.search_path = options.schema;
  const max = options.maxConnections ?? 10;
  const client = postgres(options.url, {
    max,
    onnotice: () => {},
    connection,
    types: {
      bigint: {
        to: 20,
        from: [20],
        parse: (value: string) => Number(value),
        serialize: (value: number | bigint) => String(value),
      },
      // Stores write json/jsonb parameters as JSON text (JSON.stringify), as PGlite takes them;
      // postgres.js would encode that text a second time, so text passes through unchanged.
      json: {
        to: 3802,
        from: [114, 3802],
        parse: (value: string) => JSON.parse(value),
        serialize: (value: unknown) => typeof value === "string" ? value : JSON.stringify(value),
      },
    },
  });
  const pool = new PoolStatsRecorder(max);
  const db = new Kysely<Database>({
    dialect: pool.wrap(traceQueries(new PostgresJSDialect({ postgres: client }))),
  });
  return {
    db,
    kind: "postgres",
    pool,
    notifications: {
      async listen(channel, onMessage) {
        const subscription = await client.listen(schemaChannel(channel, options.schema), onMessage);
        return async () => await subscription.unlisten();
      },
      async notify(channel, payload) {
        await client.notify(schemaChannel(channel, options.schema), payload);
      },
    },
    ensureSchema: () => createSchema(db, options.schema),
    ping: async () => {
      await sql`SELECT 1`.execute(db);
    },
    // Queries still running get CLOSE_TIMEOUT_SECONDS, then their connections are cut.
    close: async () => {
      await client.end({ timeout: CLOSE_TIMEOUT_SECONDS });
      await db.destroy();
    },
  };
}

/**
 * A prepared cluster for {@link EmbeddedStoreFiles.preparedCluster}: an in-memory embedded
 * database initialized with svc's schema, dumped as a gzip tarball. Loading it into a new data
 * folder skips initdb and the schema's creation on a first start.
 */
export async function prepareEmbeddedCluster(files?: EmbeddedStoreFiles): Promise<Blob> {
  const { PGlite } = await loadPglite();
  const pg = await PGlite.create(undefined, {
    ...(files?.pgliteWasm && { pgliteWasmModule: files.pgliteWasm }),
    ...(files?.initdbWasm && { initdbWasmModule: files.initdbWasm }),
    ...(files?.fsBundle && { fsBundle: files.fsBundle }),
  });
  try {
    await createSchema(new Kysely<Database>({ dialect: new PgliteDialect(pg) }), undefined);
    return await pg.dumpDataDir("gzip");
  } finally {
    await pg.close();
  }
}

async function createSchema(db: Kysely<Database>, schema: string | undefined): Promise<void> {
  const fingerprint = schemaFingerprint();
  // A schema this very DDL created is left alone: no statement, no lock (most of a restart's
  // storage time otherwise).
  if (await appliedFingerprint(db) === fingerprint) return;
  await db.transaction().execute(async (trx) => {
    // Many instances may boot at once against one server; serialize their DDL (per schema: the
    // schema may not exist yet, so it is named).
    await lockForTransaction(trx, LockClass.schema, "", schema);
    // Another instance may have run it while this one waited: running it again would take its
    // tables' locks (ADD COLUMN IF NOT EXISTS takes an exclusive one) while that instance already
    // writes to them, which can deadlock with its next steps.
    if (await appliedFingerprint(trx) === fingerprint) return;
    if (schema) await sql.raw(`CREATE SCHEMA IF NOT EXISTS ${schema}`).execute(trx);
    for (const statement of schemaStatements()) await sql.raw(statement).execute(trx);
    await sql`INSERT INTO svc_schema_state (id, fingerprint) VALUES (1, ${fingerprint})
      ON CONFLICT (id) DO UPDATE SET fingerprint = excluded.fingerprint`.execute(trx);
  });
}

/**
 * Runs `work` in a transaction that holds the Postgres advisory lock of class `lockClass` (see
 * {@link LockClass}; transaction-scoped, in the connection's schema), so that instances booting at
 * once do a one-time step (such as creating the realms' first signing keys) one after the other:
 * the later ones find the first one's result.
 */
export async function withAdvisoryLock<T>(
  db: Kysely<Database>,
  lockClass: number,
  work: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  return await db.transaction().execute(async (trx) => {
    await lockForTransaction(trx, lockClass, "");
    return await work(trx);
  });
}

/**
 * Runs idempotent DDL of its own (a plugin's tables), named `name`, once per version of the
 * statements: under the lock svc's schema creation takes, so that instances booting at once do
 * not race (two `CREATE TABLE IF NOT EXISTS` of one table collide on the catalog), and skipped
 * when the same statements already ran (recorded in `svc_ddl_state`), so that a boot next to
 * running instances takes none of their tables' locks. A failing statement rolls the whole set back.
 */
// deno-lint-ignore no-explicit-any
export async function applyDdlOnce(
  db: Kysely<any>,
  name: string,
  statements: readonly string[],
): Promise<void> {
  if (statements.length === 0) return;
  const fingerprint = bytesToHex(sha256(new TextEncoder().encode(statements.join("\n;\n"))));
  if (await appliedDdl(db, name) === fingerprint) return;
  await db.transaction().execute(async (trx) => {
    await lockForTransaction(trx, LockClass.schema, "");
    await sql`CREATE TABLE IF NOT EXISTS svc_ddl_state (name text PRIMARY KEY, fingerprint text NOT NULL)`
      .execute(trx);
    if (await appliedDdl(trx, name) === fingerprint) return;
    for (const statement of statements) await sql.raw(statement).execute(trx);
    await sql`INSERT INTO svc_ddl_state (name, fingerprint) VALUES (${name}, ${fingerprint})
      ON CONFLICT (name) DO UPDATE SET fingerprint = excluded.fingerprint`.execute(trx);
  });
}

/** The fingerprint of the DDL named `name` that last ran in the connection's schema, or null. */
// deno-lint-ignore no-explicit-any
async function appliedDdl(db: Kysely<any>, name: string): Promise<string | null> {
  const table = await sql<{ t: string | null }>`
    SELECT to_regclass(quote_ident(current_schema()) || '.svc_ddl_state')::text AS t`.execute(db);
  if (table.rows[0]?.t == null) return null;
  const state = await sql<{ fingerprint: string }>`SELECT fingerprint FROM svc_ddl_state WHERE name = ${name}`
    .execute(db);
  return state.rows[0]?.fingerprint ?? null;
}

/** The fingerprint of the DDL that last ran in the connection's schema, or null (none yet). */
async function appliedFingerprint(db: Kysely<Database>): Promise<string | null> {
  // Looked up in the current schema only: another schema's table on the search path does not count.
  const table = await sql<{ t: string | null }>`
    SELECT to_regclass(quote_ident(current_schema()) || '.svc_schema_state')::text AS t`.execute(db);
  if (table.rows[0]?.t == null) return null;
  const state = await sql<{ fingerprint: string }>`SELECT fingerprint FROM svc_schema_state WHERE id = 1`
    .execute(db);
  return state.rows[0]?.fingerprint ?? null;
}
