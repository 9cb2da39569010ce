/**
 * The Auth0 importer over a generated bulk export (NDJSON, one user per line, bcrypt
 * `passwordHash` as Auth0's password-hash export writes it), streamed through the import engine,
 * beside a plain batch insert of the same rows (users and bcrypt credentials, multi-row `INSERT`s
 * of 1,000 rows, no natural-key matching) measured in the same run:
 *
 *     deno run -A --v8-flags=--expose-gc bench/import_bench.ts [--postgres] [--users 100000]
 *
 * - users per second of the streamed import (goal: at least half the batch insert's rate);
 * - peak memory of the streamed import at 10,000 and at the full count (goal: flat in the number
 *   of users): the JS heap in use (sampled every 20 ms and after each batch, after a GC before
 *   the run) and, with `--postgres`, the process RSS (with PGlite the database itself lives in
 *   the process, so RSS grows with the data whatever the importer does).
 *
 * The export is generated lazily in chunks, never held whole. Every run uses a fresh realm.
 *
 * @module
 */
import { sql } from "kysely";
import { ManualClock } from "../core/clock.ts";
import { auth0Items } from "../core/imports/auth0.ts";
import { runImport, secretsOf } from "../core/imports/engine.ts";
import { InThreadPasswordHasher } from "../core/passwords/hasher.ts";
import { PasswordService } from "../core/passwords/service.ts";
import { cryptoRandom } from "../core/random.ts";
import { createSqlStorage } from "../storage/storage.ts";
import { freshEmbedded, freshPostgres } from "../test/support/db.ts";

function arg(name: string, fallback: number): number {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Number(Deno.args[i + 1]) : fallback;
}
const POSTGRES = Deno.args.includes("--postgres");
const USERS = arg("users", 100_000);
const SMALL = Math.min(10_000, USERS);

// Sixteen real bcrypt hashes (cost 4) reused across users: an import stores hashes, never verifies them.
const HASHES = [
  "$2b$04$.umPE/6kJRO5OijOTz3jZ.2i.MFCC9fOp99JjWjYp9calWRLIJAvm",
  "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW",
];

function line(i: number, prefix: string): string {
  return JSON.stringify({
    _id: { $oid: i.toString(16).padStart(24, "0") },
    email: `${prefix}${i}@bench.test`,
    email_verified: i % 3 !== 0,
    passwordHash: HASHES[i % HASHES.length],
    tenant: "bench",
    connection: "Username-Password-Authentication",
    _tmp_is_unique: true,
  });
}

/** The export, generated lazily in chunks of 200 lines. */
function* exportChunks(count: number, prefix: string): Generator<string> {
  for (let start = 0; start < count; start += 200) {
    const lines: string[] = [];
    for (let i = start; i < Math.min(count, start + 200); i++) lines.push(line(i, prefix));
    yield lines.join("\n") + "\n";
  }
}

const database = POSTGRES ? await freshPostgres({ maxConnections: 4 }) : await freshEmbedded();
const random = cryptoRandom;
const storage = createSqlStorage(database, {
  clock: new ManualClock(Date.parse("2026-01-01T00:00:00Z")),
  random,
});
const passwords = new PasswordService({
  hasher: new InThreadPasswordHasher(),
  params: { memoryKiB: 8192, iterations: 1, parallelism: 1 },
});
const gc = (globalThis as { gc?: () => void }).gc;

interface Run {
  readonly ms: number;
  readonly peakHeapMiB: number;
  readonly peakRssMiB: number;
}

async function measured(work: (sample: () => void) => Promise<void>, interval = true): Promise<Run> {
  gc?.();
  const base = Deno.memoryUsage();
  let peakHeap = base.heapUsed;
  let peakRss = base.rss;
  const sample = () => {
    const m = Deno.memoryUsage();
    if (m.heapUsed > peakHeap) peakHeap = m.heapUsed;
    if (m.rss > peakRss) peakRss = m.rss;
  };
  const timer = interval ? setInterval(sample, 20) : undefined;
  const t0 = performance.now();
  try {
    await work(sample);
  } finally {
    clearInterval(timer);
  }
  const ms = performance.now() - t0;
  sample();
  return {
    ms,
    peakHeapMiB: (peakHeap - base.heapUsed) / 2 ** 20,
    peakRssMiB: (peakRss - base.rss) / 2 ** 20,
  };
}

/** A streamed import; with `live`, a GC runs before each sample so the peak is of live memory only. */
async function streamed(count: number, tag: string, live = false): Promise<Run> {
  const realm = await storage.realms.create({ name: `bench-stream-${tag}`, displayName: "Bench" });
  return await measured(async (sample) => {
    const onProgress = live
      ? () => {
        gc?.();
        sample();
      }
      : sample;
    const report = await runImport(
      { storage, random, ...secretsOf(passwords), onProgress },
      { targetRealmId: realm.id, dryRun: false },
      auth0Items(exportChunks(count, `s${tag}-`)),
    );
    if (report.users.created !== count || report.credentials.created !== count) {
      throw new Error(
        `streamed import: ${JSON.stringify(report.users)} ${JSON.stringify(report.credentials)}`,
      );
    }
  });
}

async function batchInsert(count: number, tag: string): Promise<Run> {
  const realm = await storage.realms.create({ name: `bench-batch-${tag}`, displayName: "Bench" });
  const now = new Date("2026-01-01T00:00:00Z");
  return await measured(async (sample) => {
    for (let start = 0; start < count; start += 1000) {
      const users: Record<string, unknown>[] = [];
      const credentials: Record<string, unknown>[] = [];
      for (let i = start; i < Math.min(count, start + 1000); i++) {
        const parsed = JSON.parse(line(i, `b${tag}-`));
        const id = crypto.randomUUID();
        users.push({
          id,
          realm_id: realm.id,
          email: parsed.email,
          email_verified: parsed.email_verified,
          display_name: null,
          status: "Active",
          attributes: "{}",
          is_break_glass: false,
          anonymized_at: null,
          created_at: now,
          updated_at: now,
        });
        credentials.push({
          id: crypto.randomUUID(),
          user_id: id,
          algorithm: "bcrypt",
          hash: parsed.passwordHash,
          created_at: now,
          updated_at: now,
        });
      }
      await database.db.transaction().execute(async (trx) => {
        await trx.insertInto("users").values(users as never).execute();
        await trx.insertInto("password_credentials").values(credentials as never).execute();
      });
      sample();
    }
  });
}

try {
  // Warm-up (JIT, statement caches), not reported.
  await streamed(500, "warm");
  await batchInsert(500, "warm");
  const small = await streamed(SMALL, "small");
  const full = await streamed(USERS, "full");
  const batch = await batchInsert(USERS, "full");
  // Memory runs: live heap after a GC at every batch (slower, so not used for the rates).
  const smallLive = await streamed(SMALL, "small-live", true);
  const fullLive = await streamed(USERS, "full-live", true);
  const rate = (n: number, r: Run) => n / (r.ms / 1000);
  const streamRate = rate(USERS, full);
  const batchRate = rate(USERS, batch);
  const rows = await sql<{ n: string }>`SELECT count(*)::text AS n FROM users`.execute(database.db);
  console.log(
    `${POSTGRES ? "Postgres" : "PGlite (in process)"}: Auth0 export of ${USERS.toLocaleString("en")} users ` +
      `(bcrypt), batches of 1,000 (the engine default); ${
        rows.rows[0].n
      } user rows in the end; GC before each run: ${gc ? "yes" : "no"}`,
  );
  console.log(
    "| run | users | time | users/s | peak JS heap over start (garbage included) | peak RSS over start |",
  );
  console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
  const row = (name: string, n: number, r: Run) =>
    console.log(
      `| ${name} | ${n.toLocaleString("en")} | ${(r.ms / 1000).toFixed(1)} s | ${Math.round(rate(n, r))} | ${
        r.peakHeapMiB.toFixed(1)
      } MiB | ${r.peakRssMiB.toFixed(1)} MiB |`,
    );
  row("streamed import", SMALL, small);
  row("streamed import", USERS, full);
  row("plain batch insert (baseline)", USERS, batch);
  console.log("");
  console.log(
    "| memory run (GC before each sample) | users | peak live JS heap over start | peak RSS over start |",
  );
  console.log("| --- | ---: | ---: | ---: |");
  for (const [n, r] of [[SMALL, smallLive], [USERS, fullLive]] as const) {
    console.log(
      `| streamed import | ${n.toLocaleString("en")} | ${r.peakHeapMiB.toFixed(1)} MiB | ${
        r.peakRssMiB.toFixed(1)
      } MiB |`,
    );
  }
  console.log(
    `streamed / batch rate: ${(streamRate / batchRate).toFixed(2)} (goal ≥ 0.5); ` +
      `peak live heap ${USERS.toLocaleString("en")} / ${SMALL.toLocaleString("en")}: ${
        (fullLive.peakHeapMiB / Math.max(smallLive.peakHeapMiB, 0.1)).toFixed(2)
      } (goal: flat, about 1)`,
  );
} finally {
  await passwords.close();
  await database.close();
}
