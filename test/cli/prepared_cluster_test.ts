/**
 * The embedded store's prepared cluster: offered only to a data folder without a cluster, absent
 * when not prepared, and, loaded into a fresh folder, a working store that already has svc's
 * schema and opens again from that folder without it.
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { preparedClusterSource } from "../../cli/prepared-cluster.ts";
import { openDatabase, prepareEmbeddedCluster } from "../../storage/open.ts";

const files = {
  exists: (path: string) => Deno.stat(path).then(() => true, () => false),
  read: (url: URL) => Deno.readFile(url),
};

Deno.test("prepared cluster: offered to a folder without a cluster, never over one, absent when not prepared", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-cluster-" });
  try {
    const file = new URL(`file://${dir}/cluster.tar.gz`);
    const source = preparedClusterSource(files, file);
    assert.deepEqual(await source(`${dir}/data`), {}, "not prepared: nothing offered");
    await Deno.writeFile(file, new Uint8Array([1, 2, 3]));
    const offered = await source(`${dir}/data`);
    assert.equal(offered.preparedCluster?.size, 3);
    assert.equal((await source(undefined)).preparedCluster?.size, 3, "an in-memory store takes it too");
    await Deno.mkdir(`${dir}/data`);
    await Deno.writeTextFile(`${dir}/data/PG_VERSION`, "17\n");
    assert.deepEqual(await source(`${dir}/data`), {}, "a folder with a cluster is left alone");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("prepared cluster: a fresh folder loads it with svc's schema in place, and reopens without it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-cluster-" });
  try {
    const file = new URL(`file://${dir}/cluster.tar.gz`);
    const cluster = await prepareEmbeddedCluster();
    await Deno.writeFile(file, new Uint8Array(await cluster.arrayBuffer()));
    const source = preparedClusterSource(files, file);
    const dataDir = `${dir}/data`;
    const tables = async (database: Awaited<ReturnType<typeof openDatabase>>) =>
      (await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'users'`
        .execute(database.db)).rows[0].n;

    const first = await openDatabase({ kind: "embedded", dataDir }, source);
    assert.equal(await tables(first), 1, "svc's tables came with the cluster, before ensureSchema");
    await first.ensureSchema();
    await sql`CREATE TABLE kept (x int)`.execute(first.db);
    await sql`INSERT INTO kept VALUES (42)`.execute(first.db);
    await first.close();

    const second = await openDatabase({ kind: "embedded", dataDir }, source);
    try {
      assert.equal(await tables(second), 1);
      const kept = await sql<{ x: number }>`SELECT x FROM kept`.execute(second.db);
      assert.deepEqual(kept.rows, [{ x: 42 }], "what the first open wrote is in the folder");
    } finally {
      await second.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
