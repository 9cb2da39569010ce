/**
 * Test databases: a fresh in-memory PGlite, or an isolated schema on the Postgres
 * server named by SVC_TEST_DATABASE_URL (default: the local test server). In CI the
 * Postgres suites never skip: a server that does not answer fails the run.
 */
import { sql } from "kysely";
import { openDatabase, type SvcDatabase } from "../../storage/open.ts";

/** The Postgres server tests use. */
export const TEST_DATABASE_URL = Deno.env.get("SVC_TEST_DATABASE_URL") ??
  "postgres://postgres@127.0.0.1:5432/test";

let counter = 0;

/** A fresh, empty, in-memory embedded database with the schema created. */
export async function freshEmbedded(): Promise<SvcDatabase> {
  const database = await openDatabase({ kind: "embedded" });
  await database.ensureSchema();
  return database;
}

/**
 * A fresh schema on the test Postgres server with the svc tables created. The
 * schema is dropped when the returned database is closed.
 */
export async function freshPostgres(options: { maxConnections?: number } = {}): Promise<SvcDatabase> {
  const schema = `svc_test_${Date.now().toString(36)}_${(counter++).toString(36)}_${
    Math.floor(Math.random() * 1e6).toString(36)
  }`;
  const database = await openDatabase({
    kind: "postgres",
    url: TEST_DATABASE_URL,
    schema,
    maxConnections: options.maxConnections ?? 10,
  });
  await database.ensureSchema();
  const close = database.close.bind(database);
  return {
    ...database,
    db: database.db,
    close: async () => {
      await sql.raw(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).execute(database.db);
      await close();
    },
  };
}

/** Both drivers, for suites that run against each. */
export const drivers: { name: string; open: () => Promise<SvcDatabase> }[] = [
  { name: "pglite", open: freshEmbedded },
  { name: "postgres", open: () => freshPostgres() },
];
