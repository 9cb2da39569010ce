/**
 * Database pool figures (`database.pool`, the metrics endpoint's `svc_db_pool_*`): on a real
 * Postgres pool of two connections three held transactions show two in use and one waiting; on the
 * embedded store a held transaction makes the next query wait on the single connection; every
 * figure falls back once the work ends, and the recorder sums wait time on its clock.
 */
import assert from "node:assert/strict";
import { type DatabaseConnection, type Dialect, type Driver, sql } from "kysely";
import { openDatabase, type SvcDatabase } from "../../storage/open.ts";
import { PoolStatsRecorder } from "../../storage/pool-stats.ts";
import { TEST_DATABASE_URL } from "../support/db.ts";

/** Yields to the event loop until `condition` holds (at most about 10 s). */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.ok(condition(), `timed out waiting for ${what}`);
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Holds `count` transactions open, each until `release` opens; returns when they have all begun. */
function holdTransactions(database: SvcDatabase, count: number, release: Promise<void>) {
  let begun = 0;
  const done = Array.from({ length: count }, () =>
    database.db.transaction().execute(async (trx) => {
      await sql`SELECT 1`.execute(trx);
      begun++;
      await release;
    }));
  return { done: Promise.all(done), begun: () => begun };
}

Deno.test("pool stats: a Postgres pool of two, three held transactions: two in use, one waiting", async () => {
  const database = await openDatabase({ kind: "postgres", url: TEST_DATABASE_URL, maxConnections: 2 });
  try {
    assert.deepEqual(
      [database.pool.maxConnections, database.pool.inUse, database.pool.waiting],
      [2, 0, 0],
    );
    const release = gate();
    const held = await holdTransactions(database, 3, release.promise);
    await until(() => held.begun() === 2 && database.pool.waiting === 1, "two running, one waiting");
    assert.equal(database.pool.inUse, 2);
    release.open();
    await held.done;
    assert.deepEqual([database.pool.inUse, database.pool.waiting, held.begun()], [0, 0, 3]);
    assert.equal(database.pool.acquisitions, 3);
    assert.ok(database.pool.waitSeconds > 0, "the third transaction waited");
  } finally {
    await database.close();
  }
});

Deno.test("pool stats: embedded, a held transaction makes the next query wait on the one connection", async () => {
  const database = await openDatabase({ kind: "embedded" });
  try {
    assert.equal(database.pool.maxConnections, 1);
    const release = gate();
    const held = await holdTransactions(database, 1, release.promise);
    await until(() => held.begun() === 1, "the transaction holds the connection");
    const query = sql<{ one: number }>`SELECT 1 AS one`.execute(database.db);
    await until(() => database.pool.waiting === 1, "the query waits");
    assert.equal(database.pool.inUse, 1);
    release.open();
    await held.done;
    assert.equal((await query).rows[0].one, 1);
    assert.deepEqual([database.pool.inUse, database.pool.waiting], [0, 0]);
  } finally {
    await database.close();
  }
});

Deno.test("pool stats: the recorder counts acquisitions, releases (failed ones too) and wait time", async () => {
  let now = 1000;
  const recorder = new PoolStatsRecorder(4, () => now);
  const pending: ((c: DatabaseConnection) => void)[] = [];
  let releases = 0;
  const inner: Driver = {
    init: () => Promise.resolve(),
    acquireConnection: () => new Promise((resolve) => pending.push(resolve)),
    beginTransaction: () => Promise.resolve(),
    commitTransaction: () => Promise.resolve(),
    rollbackTransaction: () => Promise.resolve(),
    releaseConnection: () => (++releases === 2 ? Promise.reject(new Error("lost")) : Promise.resolve()),
    destroy: () => Promise.resolve(),
  };
  const dialect = { createDriver: () => inner } as unknown as Dialect;
  const driver = recorder.wrap(dialect).createDriver();
  assert.equal(driver.savepoint, undefined, "no savepoints where the inner driver has none");
  const connection = {} as DatabaseConnection;
  const first = driver.acquireConnection();
  const second = driver.acquireConnection();
  assert.deepEqual([recorder.waiting, recorder.inUse], [2, 0]);
  now += 250;
  pending[0](connection);
  await first;
  now += 250;
  pending[1](connection);
  await second;
  assert.deepEqual([recorder.waiting, recorder.inUse, recorder.acquisitions], [0, 2, 2]);
  assert.equal(recorder.waitSeconds, 0.75);
  await driver.releaseConnection(connection);
  await assert.rejects(driver.releaseConnection(connection), /lost/);
  assert.equal(recorder.inUse, 0, "a failed release still gives the slot back");
});
