import { strict as assert } from "node:assert";
import { sql } from "kysely";
import { runCli, type RuntimeAdapter } from "../../cli/run.ts";
import { ManualClock } from "../../core/clock.ts";
import { cryptoRandom } from "../../core/random.ts";
import { openDatabase } from "../../storage/open.ts";
import { createSqlStorage } from "../../storage/storage.ts";
import { seeder } from "../support/seed.ts";

function runtime(env: Record<string, string>) {
  const out: string[] = [];
  const err: string[] = [];
  const adapter: RuntimeAdapter = {
    name: "deno",
    env: () => env,
    readTextFile: (path) => Deno.readTextFile(path),
    serve: () => Promise.reject(new Error("not in this test")),
    onShutdown: () => {},
    print: (line) => out.push(line),
    printError: (line) => err.push(line),
  };
  return { adapter, out, err };
}

Deno.test("svc audit verify REALM: valid, then broken at the edited row", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "svc-audit-cli-" });
  try {
    const database = await openDatabase({ kind: "embedded", dataDir });
    await database.ensureSchema();
    const storage = createSqlStorage(database, {
      clock: new ManualClock(Date.UTC(2026, 0, 1)),
      random: cryptoRandom,
    });
    const realm = await seeder(database.db).realm("acme");
    for (let i = 0; i < 3; i++) {
      await storage.adminAudit.append(realm, { action: "role.create", actorId: "admin", actorKind: "User" });
    }
    const head = (await storage.adminAudit.head(realm))!;
    await database.close();

    const ok = runtime({ SVC_DATA_DIR: dataDir });
    assert.equal(await runCli(["audit", "verify", "acme"], ok.adapter), 0);
    assert.deepEqual(ok.out, [
      `realm ${realm}: chain valid, 3 entries checked`,
      `head: seq 3, hash ${head.entryHash}`,
    ]);

    const again = await openDatabase({ kind: "embedded", dataDir });
    await sql`UPDATE admin_audit_entries SET action = 'role.delete' WHERE seq = 2`.execute(again.db);
    await again.close();
    const broken = runtime({ SVC_DATA_DIR: dataDir });
    assert.equal(await runCli(["audit", "verify", realm], broken.adapter), 1);
    assert.match(broken.out[0], /chain BROKEN at seq 2 \(entry_hash_mismatch\), 1 entries checked before it/);

    const usage = runtime({ SVC_DATA_DIR: dataDir });
    assert.equal(await runCli(["audit", "nope"], usage.adapter), 2);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
