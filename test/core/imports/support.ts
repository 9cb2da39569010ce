/** Shared set-up of the importer tests: a fresh PGlite storage, a realm and the engine's deps. */
import { ManualClock } from "../../../core/clock.ts";
import { type ImportEngineDeps, secretsOf } from "../../../core/imports/engine.ts";
import { InThreadPasswordHasher } from "../../../core/passwords/hasher.ts";
import { PasswordService } from "../../../core/passwords/service.ts";
import { seededRandom } from "../../../core/random.ts";
import type { SvcDatabase } from "../../../storage/open.ts";
import { createSqlStorage, type Storage } from "../../../storage/storage.ts";
import { sql } from "kysely";
import { freshEmbedded } from "../../support/db.ts";

/** A storage with one realm and engine deps with cheap argon2id. */
export interface ImportBed {
  readonly database: SvcDatabase;
  readonly storage: Storage;
  readonly realmId: string;
  readonly deps: ImportEngineDeps;
  /** Row counts of the tables imports write. */
  rowCounts(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

/** Cheap argon2id for tests. */
export const CHEAP_ARGON2 = { memoryKiB: 8192, iterations: 1, parallelism: 1 };

/** Opens a bed on `database` (default a fresh PGlite). */
export async function importBed(database?: SvcDatabase, batchSize = 3): Promise<ImportBed> {
  const db = database ?? await freshEmbedded();
  const random = seededRandom(11);
  const storage = createSqlStorage(db, {
    clock: new ManualClock(Date.parse("2026-01-01T00:00:00Z")),
    random,
  });
  const realm = await storage.realms.create({
    name: `import-${crypto.randomUUID().slice(0, 8)}`,
    displayName: "I",
  });
  const passwords = new PasswordService({
    hasher: new InThreadPasswordHasher(),
    params: CHEAP_ARGON2,
    random,
  });
  return {
    database: db,
    storage,
    realmId: realm.id,
    deps: { storage, random, ...secretsOf(passwords), batchSize },
    async rowCounts() {
      const counts: Record<string, number> = {};
      for (
        const table of [
          "users",
          "password_credentials",
          "roles",
          "role_assignments",
          "groups",
          "group_members",
          "clients",
          "admin_audit_entries",
        ]
      ) {
        const r = await sql<{ n: string }>`SELECT count(*)::text AS n FROM ${sql.table(table)}`.execute(
          db.db,
        );
        counts[table] = Number(r.rows[0].n);
      }
      return counts;
    },
    close: () => db.close(),
  };
}
