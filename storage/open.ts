/**
 * Opens the svc database on one of its two drivers: PGlite (embedded, data kept
 * in a folder, the default) or postgres.js (a Postgres server). Both speak the
 * same Postgres dialect to the same schema, through kysely.
 */
import { PGlite } from "@electric-sql/pglite";
import { Kysely, sql } from "kysely";
import { PostgresJSDialect } from "kysely-postgres-js";
import postgres from "postgres";
import type { Database } from "./database.ts";
import { PgliteDialect } from "./pglite-dialect.ts";
import { schemaStatements } from "./schema.ts";

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
  /** Creates every table and index if missing; safe to call concurrently from many instances. */
  ensureSchema(): Promise<void>;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  /** Closes every connection (and, embedded, flushes to disk). */
  close(): Promise<void>;
}

const SCHEMA_LOCK_KEY = 7_361_001;
const SAFE_IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** Opens a database. The schema is not created until `ensureSchema()`. */
export async function openDatabase(options: DatabaseOptions): Promise<SvcDatabase> {
  return options.kind === "embedded" ? await openEmbedded(options.dataDir) : openPostgres(options);
}

async function openEmbedded(dataDir: string | undefined): Promise<SvcDatabase> {
  const pg = await PGlite.create(dataDir ?? undefined, {
    // int8 as a JS number, as configured for postgres.js below.
    parsers: { 20: (value: string) => Number(value) },
  });
  const db = new Kysely<Database>({ dialect: new PgliteDialect(pg) });
  return {
    db,
    kind: "embedded",
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

function openPostgres(options: Extract<DatabaseOptions, { kind: "postgres" }>): SvcDatabase {
  if (options.schema !== undefined && !SAFE_IDENTIFIER.test(options.schema)) {
    throw new TypeError(`invalid schema name: ${options.schema}`);
  }
  const connection: Record<string, string> = { application_name: "svc" };
  if (options.schema) connection.search_path = options.schema;
  const client = postgres(options.url, {
    max: options.maxConnections ?? 10,
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
  const db = new Kysely<Database>({ dialect: new PostgresJSDialect({ postgres: client }) });
  return {
    db,
    kind: "postgres",
    notifications: {
      async listen(channel, onMessage) {
        const subscription = await client.listen(channel, onMessage);
        return async () => await subscription.unlisten();
      },
      async notify(channel, payload) {
        await client.notify(channel, payload);
      },
    },
    ensureSchema: () => createSchema(db, options.schema),
    ping: async () => {
      await sql`SELECT 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}

async function createSchema(db: Kysely<Database>, schema: string | undefined): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // Many instances may boot at once against one server; serialize their DDL.
    await sql`SELECT pg_advisory_xact_lock(${SCHEMA_LOCK_KEY})`.execute(trx);
    if (schema) await sql.raw(`CREATE SCHEMA IF NOT EXISTS ${schema}`).execute(trx);
    for (const statement of schemaStatements()) await sql.raw(statement).execute(trx);
  });
}
