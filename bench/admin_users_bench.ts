/**
 * The admin user list over 100,000 users of one realm, through the app (`GET /svc-admin/users`
 * as the realm administrator, bearer token), each figure beside a primary-key user read
 * (`GET /svc-admin/users/{id}`) measured in the same run, rounds interleaved:
 *
 *     deno run -A bench/admin_users_bench.ts [--postgres] [--rounds 40]
 *
 * - first page: `?limit=50` (50 rows and the total);
 * - deep page: `?offset=90000&limit=50`. The store skips the 90,000 keys in the
 *   `(realm_id, created_at, id)` index without reading their rows and seeks to the page's first
 *   key. Goal: under 5× the first page;
 * - search: `?q=user42&limit=50` (a prefix of the email or display name, 1,111 matches);
 * - for comparison, the plain SQL the seek replaces (`ORDER BY created_at, id OFFSET 90000
 *   LIMIT 50`, every skipped row read) and a SQL primary-key read.
 *
 * Every list answer carries `total` (a count over the matching users), included in the figures.
 * The users are bulk-inserted with one `INSERT … SELECT generate_series` and the table vacuumed
 * and analyzed (as autovacuum would on a server). PGlite in memory by default; `--postgres`: the
 * server named by `SVC_TEST_DATABASE_URL` (default postgres://postgres@127.0.0.1:5432/test) in a
 * scratch schema dropped at the end.
 *
 * @module
 */
import { sql } from "kysely";
import { adminBed } from "../test/support/admin.ts";

function arg(name: string, fallback: number): number {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Number(Deno.args[i + 1]) : fallback;
}
const POSTGRES = Deno.args.includes("--postgres");
const ROUNDS = arg("rounds", 40);
const USERS = 100_000;
const DEEP_OFFSET = 90_000;

const admin = await adminBed({}, { postgres: POSTGRES });
const { db } = admin.bed.database;
try {
  const started = performance.now();
  await sql`
    INSERT INTO users (id, realm_id, email, email_verified, display_name, status, attributes,
      is_break_glass, anonymized_at, created_at, updated_at)
    SELECT gen_random_uuid(), ${admin.realmId}::uuid, 'user' || i || '@bench.test', true,
      'Bench User ' || i, CASE WHEN i % 10 = 0 THEN 'Suspended' ELSE 'Active' END, '{}'::jsonb, false, NULL,
      timestamptz '2026-01-01' + i * interval '1 second', timestamptz '2026-01-01' + i * interval '1 second'
    FROM generate_series(1, ${USERS}::int) AS i`.execute(db);
  await sql`VACUUM ANALYZE users`.execute(db);
  const setupMs = performance.now() - started;
  const sample = await db.selectFrom("users").select("id").where("email", "=", "user54321@bench.test")
    .executeTakeFirstOrThrow();

  const get = async (path: string) => {
    const res = await admin.request("GET", path);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return await res.json();
  };
  // Sanity: the deep page is the page the plain OFFSET query reads.
  const deep = await get(`/svc-admin/users?offset=${DEEP_OFFSET}&limit=50`);
  const total = deep.total;
  const plain = await db.selectFrom("users").select("id").where("realm_id", "=", admin.realmId)
    .orderBy("created_at").orderBy("id").offset(DEEP_OFFSET).limit(50).execute();
  if (
    JSON.stringify(deep.items.map((u: { id: string }) => u.id)) !== JSON.stringify(plain.map((u) => u.id))
  ) {
    throw new Error("the deep page differs from the plain OFFSET page");
  }
  const search = await get("/svc-admin/users?q=user42&limit=50");

  const measures: Record<string, () => Promise<unknown>> = {
    "primary-key read `GET /svc-admin/users/{id}` (baseline)": () => get(`/svc-admin/users/${sample.id}`),
    "first page `?limit=50`": () => get("/svc-admin/users?limit=50"),
    "deep page `?offset=90000&limit=50`": () => get(`/svc-admin/users?offset=${DEEP_OFFSET}&limit=50`),
    "search `?q=user42&limit=50`": () => get("/svc-admin/users?q=user42&limit=50"),
    "SQL: primary-key `SELECT`": () =>
      db.selectFrom("users").selectAll().where("id", "=", sample.id).execute(),
    "SQL: plain `OFFSET 90000 LIMIT 50` (no seek, no count)": () =>
      db.selectFrom("users").selectAll().where("realm_id", "=", admin.realmId)
        .orderBy("created_at").orderBy("id").offset(DEEP_OFFSET).limit(50).execute(),
  };
  const samples = new Map<string, number[]>(Object.keys(measures).map((name) => [name, []]));
  for (let round = -3; round < ROUNDS; round++) {
    for (const [name, run] of Object.entries(measures)) {
      const t0 = performance.now();
      await run();
      if (round >= 0) samples.get(name)!.push(performance.now() - t0);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const medians = new Map([...samples].map(([name, xs]) => [name, median(xs)]));
  const baseline = medians.get("primary-key read `GET /svc-admin/users/{id}` (baseline)")!;
  const first = medians.get("first page `?limit=50`")!;
  const deepMs = medians.get("deep page `?offset=90000&limit=50`")!;

  console.log(
    `${POSTGRES ? "Postgres" : "PGlite"}: ${total.toLocaleString("en")} users (+${
      (total - USERS).toLocaleString("en")
    } of the bed), set up in ${(setupMs / 1000).toFixed(1)} s; ${ROUNDS} interleaved rounds, medians; ` +
      `search total ${search.total}`,
  );
  console.log("| measure | median | vs PK read |");
  console.log("| --- | ---: | ---: |");
  for (const [name, ms] of medians) {
    console.log(`| ${name} | ${ms.toFixed(2)} ms | ${(ms / baseline).toFixed(1)}× |`);
  }
  console.log(`deep page / first page: ${(deepMs / first).toFixed(2)}× (goal < 5×)`);
} finally {
  await admin.close();
}
