/**
 * Concurrent first boots (issue 25): several instances running the storage steps of `svc start`
 * (`prepareStorage`: schema, plugin tables, definitions, signing keys, bootstrap administrator) at
 * once, each on its own connection pool, on one fresh empty Postgres schema, 20 times in a row:
 * none fails, and the result is one default realm with one primary key and one administrator.
 */
import { strict as assert } from "node:assert";
import { sql } from "kysely";
import { prepareStorage } from "../../cli/prepare-storage.ts";
import { systemClock } from "../../core/clock.ts";
import { loadConfig } from "../../core/config/load.ts";
import { planDefinitions } from "../../core/definitions/declarations.ts";
import { InThreadPasswordHasher } from "../../core/passwords/hasher.ts";
import { PasswordService } from "../../core/passwords/service.ts";
import { cryptoRandom } from "../../core/random.ts";
import { builtinPlugins } from "../../plugins/builtin.ts";
import { openDatabase } from "../../storage/open.ts";
import { TEST_DATABASE_URL } from "../support/db.ts";

const INSTANCES = 3;
const ROUNDS = 20;

Deno.test("prepareStorage (postgres): concurrent first boots on an empty schema never fail", async () => {
  const { config } = loadConfig({ env: {} });
  const plugins = builtinPlugins();
  const plan = planDefinitions(config.authz, plugins.flatMap((plugin) => plugin.permissions ?? []));
  const passwords = new PasswordService({
    hasher: new InThreadPasswordHasher(),
    params: { memoryKiB: 8192, iterations: 1, parallelism: 1 },
  });
  // Each round's schema is dropped in the background while the next round runs.
  const cleaner = await openDatabase({ kind: "postgres", url: TEST_DATABASE_URL, maxConnections: 2 });
  const drops: Promise<unknown>[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const schema = `svc_boot_${Date.now().toString(36)}_${round}_${
        Math.floor(Math.random() * 1e6).toString(36)
      }`;
      const databases = await Promise.all(
        Array.from(
          { length: INSTANCES },
          () => openDatabase({ kind: "postgres", url: TEST_DATABASE_URL, schema, maxConnections: 3 }),
        ),
      );
      try {
        const booted = await Promise.allSettled(databases.map((database) =>
          prepareStorage(database, {
            plan,
            plugins,
            signingKeyOverlapMs: 86_400_000,
            bootstrap: { email: "root@example.test", password: "bootstrap secret" },
            passwords: () => Promise.resolve(passwords),
            clock: systemClock,
            random: cryptoRandom,
          })
        ));
        const failures = booted.flatMap((result) =>
          result.status === "rejected" ? [`${result.reason}: ${JSON.stringify(result.reason.cause)}`] : []
        );
        assert.deepEqual(failures, [], `round ${round}`);
        const { storage } = (booted[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof prepareStorage>>>)
          .value;
        const realms = await storage.realms.list();
        assert.equal(realms.length, 1);
        const keys = await storage.signingKeys.list(realms[0].id);
        assert.equal(keys.filter((key) => key.isPrimary).length, 1, `round ${round}: one primary key`);
        const admin = await storage.users.findByEmail(realms[0].id, "root@example.test");
        assert.notEqual(admin, null);
      } finally {
        await Promise.all(databases.map((database) => database.close()));
        drops.push(sql.raw(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).execute(cleaner.db));
      }
    }
  } finally {
    await Promise.allSettled(drops);
    await cleaner.close();
    await passwords.close();
  }
});
