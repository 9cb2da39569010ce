/**
 * SCIM lookup by userName at scale (issue 30): `GET /Users?filter=userName eq "…"` against
 * `GET /Users/{id}` (the primary-key lookup of the same table, through the same stack), and the
 * bare primary-key `SELECT` of svc's users table for reference, rounds interleaved in the same
 * run, on a connection holding 100 000 users seeded with SQL (generate_series):
 *
 *     deno run -A bench/scim_filter.ts [--pglite] [--rounds 200] [--users 100000]
 *
 * Postgres by default (`SVC_TEST_DATABASE_URL`). The plan of the compiled filter is printed and
 * must use the `scim_users_user_name` index. Goal: filter ≤ 2× the primary-key lookup. A script,
 * not a `deno bench` file (named without `_bench`), so `npm run bench` does not run it.
 *
 * @module
 */
import { sql } from "kysely";
import { parseFilter } from "../plugins/scim/filter.ts";
import { builder, compileFilter } from "../plugins/scim/query.ts";
import { USER_KIND } from "../plugins/scim/schema.ts";
import { scimBed } from "../test/plugins/scim/bed.ts";

function arg(name: string, fallback: number): number {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Number(Deno.args[i + 1]) : fallback;
}
const POSTGRES = !Deno.args.includes("--pglite");
const ROUNDS = arg("rounds", 200);
const USERS = arg("users", 100_000);

const b = await scimBed({ postgres: POSTGRES });
try {
  const bed = b.plugged.admin.bed;
  const conn = await b.connection(b.orgA);
  const db = bed.storage.pluginSql;
  const t0 = performance.now();
  // svc users, their memberships and the connection's rows, in three statements.
  await db.query(
    `INSERT INTO users (id, realm_id, email, display_name, status, created_at, updated_at)
     SELECT (lpad(to_hex(i), 8, '0') || '-0000-4000-8000-' || lpad(to_hex(i), 12, '0'))::uuid, $1,
            'user-' || i || '@bench.test', 'User ' || i, 'Active', now(), now()
       FROM generate_series(1, $2::int) AS i`,
    [b.realmId, USERS],
  );
  await db.query(
    `INSERT INTO org_memberships (org_id, user_id, created_at)
     SELECT $1, (lpad(to_hex(i), 8, '0') || '-0000-4000-8000-' || lpad(to_hex(i), 12, '0'))::uuid, now()
       FROM generate_series(1, $2::int) AS i`,
    [b.orgA, USERS],
  );
  await db.query(
    `INSERT INTO scim_users (connection_id, user_id, user_name, external_id, display_name, active, resource, version, created_at, updated_at)
     SELECT $1, (lpad(to_hex(i), 8, '0') || '-0000-4000-8000-' || lpad(to_hex(i), 12, '0'))::uuid,
            'user-' || i || '@bench.test', 'ext-' || i, 'User ' || i, true,
            jsonb_build_object('userName', 'user-' || i || '@bench.test', 'active', true,
              'name', jsonb_build_object('givenName', 'User', 'familyName', i::text),
              'emails', jsonb_build_array(jsonb_build_object('value', 'user-' || i || '@bench.test', 'type', 'work', 'primary', true))),
            1, now(), now()
       FROM generate_series(1, $2::int) AS i`,
    [conn.id, USERS],
  );
  await db.query("ANALYZE users");
  await db.query("ANALYZE scim_users");
  const seeded = performance.now() - t0;

  const idOf = (i: number) =>
    `${i.toString(16).padStart(8, "0")}-0000-4000-8000-${i.toString(16).padStart(12, "0")}`;
  const pick = () => 1 + Math.floor(Math.random() * USERS);
  const get = async (path: string, expect: (body: Record<string, unknown>) => boolean) => {
    const res = await b.scim(conn, "GET", path);
    const body = await res.json();
    if (res.status !== 200 || !expect(body)) {
      throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
    }
  };

  // The plan of the compiled filter.
  const where = compileFilter(USER_KIND, parseFilter('userName eq "user-77@bench.test"'));
  const plan = sql`EXPLAIN SELECT user_id FROM scim_users WHERE connection_id = ${conn.id} AND (${where})`
    .compile(
      builder,
    );
  const planText = (await db.query<{ "QUERY PLAN": string }>(plan.sql, plan.parameters))
    .map((r) => r["QUERY PLAN"]).join("\n");

  const measures: Record<string, () => Promise<unknown>> = {
    "`GET /Users?filter=userName eq …`": () => {
      const i = pick();
      return get(
        `/Users?filter=${encodeURIComponent(`userName eq "USER-${i}@bench.test"`)}`,
        (body) => body.totalResults === 1,
      );
    },
    "`GET /Users/{id}` (primary key)": () =>
      get(`/Users/${idOf(pick())}`, (body) => typeof body.id === "string"),
    "bare `SELECT … FROM users WHERE id = $1`": () =>
      db.query("SELECT id, email FROM users WHERE id = $1", [idOf(pick())]),
  };
  const samples = new Map<string, number[]>(Object.keys(measures).map((name) => [name, []]));
  for (let round = -20; round < ROUNDS; round++) {
    for (const [name, run] of Object.entries(measures)) {
      const start = performance.now();
      await run();
      if (round >= 0) samples.get(name)!.push(performance.now() - start);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)];
  const medians = new Map([...samples].map(([name, xs]) => [name, median(xs)]));
  const base = medians.get("`GET /Users/{id}` (primary key)")!;
  console.log(
    `${POSTGRES ? "Postgres" : "PGlite"}: ${USERS} users seeded in ${
      (seeded / 1000).toFixed(1)
    } s; ${ROUNDS} interleaved rounds`,
  );
  console.log("plan of the compiled filter:\n" + planText.split("\n").map((l) => `    ${l}`).join("\n"));
  console.log("| measure | median | p95 | vs primary key |");
  console.log("| --- | ---: | ---: | ---: |");
  for (const [name, xs] of samples) {
    console.log(
      `| ${name} | ${median(xs).toFixed(2)} ms | ${p95(xs).toFixed(2)} ms | ${
        (median(xs) / base).toFixed(2)
      }× |`,
    );
  }
  const ratio = medians.get("`GET /Users?filter=userName eq …`")! / base;
  const indexed = planText.includes("scim_users_user_name");
  console.log(`filter / primary key: ${ratio.toFixed(2)}× (goal ≤ 2×); index used: ${indexed}`);
  if (!indexed || ratio > 2) Deno.exitCode = 1;
} finally {
  await b.close();
}
