/**
 * Test databases: a fresh in-memory PGlite, or an isolated schema on the Postgres
 * server named by SVC_TEST_DATABASE_URL (default: the local test server). In CI the
 * Postgres suites never skip: a server that does not answer fails the run.
 */
import { sql } from "kysely";
import { openDatabase, prepareEmbeddedCluster, type SvcDatabase } from "../../storage/open.ts";
import { schemaFingerprint } from "../../storage/schema.ts";

/** The Postgres server tests use. */
export const TEST_DATABASE_URL = Deno.env.get("SVC_TEST_DATABASE_URL") ??
  "postgres://postgres@127.0.0.1:5432/test";

let counter = 0;

/**
 * The prepared cluster test beds load (an initialized cluster with svc's schema, as `npm ci`
 * prepares for production): initdb in WASM is most of an embedded bed's cost, so it runs once per
 * test run rather than once per bed. Each test module runs in its own isolate, so the tarball is
 * kept in the tree's `.tmp/` (git-ignored), named by the schema's fingerprint and PGlite's version:
 * a changed schema or PGlite makes a new one. Without a writable `.tmp/`, each module prepares its own.
 */
let testCluster: Promise<Blob> | undefined;

async function loadTestCluster(): Promise<Blob> {
  const root = new URL("../../", import.meta.url);
  let pgliteVersion = "unknown";
  try {
    const pkg = JSON.parse(
      await Deno.readTextFile(new URL("node_modules/@electric-sql/pglite/package.json", root)),
    );
    pgliteVersion = String(pkg.version);
  } catch {
    // No package file to read: the fingerprint alone names the file.
  }
  const dir = new URL(".tmp/test-clusters/", root);
  const file = new URL(`cluster-${schemaFingerprint().slice(0, 24)}-pglite-${pgliteVersion}.tar.gz`, dir);
  try {
    return new Blob([await Deno.readFile(file)]);
  } catch {
    // Not made yet (or unreadable): made below.
  }
  const cluster = await prepareEmbeddedCluster();
  try {
    await Deno.mkdir(dir, { recursive: true });
    // Written aside, then renamed: a module reading it concurrently sees all of it or nothing.
    const partial = new URL(`${file.pathname}.${Deno.pid}.${crypto.randomUUID()}.partial`, file);
    await Deno.writeFile(partial, new Uint8Array(await cluster.arrayBuffer()));
    await Deno.rename(partial, file);
  } catch {
    // Not cached: other modules make their own.
  }
  return cluster;
}

/** A fresh, empty, in-memory embedded database with the schema created. */
export async function freshEmbedded(): Promise<SvcDatabase> {
  testCluster ??= loadTestCluster().catch((err) => {
    testCluster = undefined;
    throw err;
  });
  const preparedCluster = await testCluster;
  const database = await openDatabase({ kind: "embedded" }, () => Promise.resolve({ preparedCluster }));
  // The cluster carries the schema: this checks its fingerprint (and would run the DDL on a mismatch).
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
