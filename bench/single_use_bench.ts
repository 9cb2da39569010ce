/**
 * Single-use operations per second on both drivers, each beside a plain
 * primary-key SELECT on the same table measured in the same run (the baseline of
 * its group, so the report prints the ratio):
 *
 *     deno bench -A bench/single_use_bench.ts
 *
 * - OTP verify, wrong code: the one-statement lock-decide-decrement path, on a fresh
 *   challenge (budget 5) per iteration; storing it is excluded from the timing.
 * - OTP verify, correct code: the lock-decide-delete path, likewise.
 * - jti consume: `INSERT … ON CONFLICT DO NOTHING RETURNING` of a new jti.
 * - code exchange: the lock-and-flip of a fresh code (storing it is excluded from the timing).
 *
 * PGlite runs in memory in this process; Postgres is the server named by
 * SVC_TEST_DATABASE_URL (default the local test server), in a schema
 * `svc_bench_single_use` that is dropped and recreated at the start of each run.
 *
 * @module
 */
import { sql } from "kysely";
import { ManualClock } from "../core/clock.ts";
import { hashOtpCode } from "../core/storage/email-otp.ts";
import { openDatabase, type SvcDatabase } from "../storage/open.ts";
import { createSqlAuthorizationCodeStore } from "../storage/sql/authorization-codes.ts";
import { createSqlConsumedTokenStore } from "../storage/sql/consumed-tokens.ts";
import { createSqlEmailOtpStore } from "../storage/sql/email-otp.ts";

const POSTGRES_URL = Deno.env.get("SVC_TEST_DATABASE_URL") ?? "postgres://postgres@127.0.0.1:5432/test";
const BENCH_SCHEMA = "svc_bench_single_use";
const T0 = Date.UTC(2026, 0, 1);
const FAR = new Date(T0 + 365 * 86_400_000);

async function openBoth(): Promise<{ name: string; database: SvcDatabase }[]> {
  const embedded = await openDatabase({ kind: "embedded" });
  await embedded.ensureSchema();
  const postgres = await openDatabase({ kind: "postgres", url: POSTGRES_URL, schema: BENCH_SCHEMA });
  await sql.raw(`DROP SCHEMA IF EXISTS ${BENCH_SCHEMA} CASCADE`).execute(postgres.db);
  await postgres.ensureSchema();
  return [{ name: "pglite", database: embedded }, { name: "postgres", database: postgres }];
}

let counter = 0;
const next = (prefix: string) =>
  `${prefix}-${(counter++).toString(36)}-${Math.random().toString(36).slice(2)}`;

for (const { name, database } of await openBoth()) {
  const db = database.db;
  const clock = new ManualClock(T0);
  const otp = createSqlEmailOtpStore(db, clock);
  const tokens = createSqlConsumedTokenStore(db, clock);
  const codes = createSqlAuthorizationCodeStore(db, clock);

  // Fixtures the baselines read.
  const hotChallenge = next("otp");
  await otp.store({
    challengeId: hotChallenge,
    codeHash: hashOtpCode("424242"),
    expiresAt: FAR,
    remainingAttempts: 5,
  });
  const hotJti = next("jti");
  await tokens.consume(hotJti, FAR);
  const hotCode = hashOtpCode(next("code"));
  await codes.store(newCode(hotCode));

  // Warm up (PGlite's WASM and both query paths) so the first group is not charged for it.
  for (let i = 0; i < 300; i++) {
    const id = next("otp");
    await otp.store({
      challengeId: id,
      codeHash: hashOtpCode("424242"),
      expiresAt: FAR,
      remainingAttempts: 5,
    });
    await otp.verify(id, "000000");
    await otp.verify(id, "424242");
    await tokens.consume(next("jti"), FAR);
    const hash = hashOtpCode(next("code"));
    await codes.store(newCode(hash));
    await codes.exchange(hash);
    await db.selectFrom("email_otp_challenges").selectAll().where("challenge_id", "=", hotChallenge)
      .executeTakeFirst();
  }

  Deno.bench({
    name: `${name}: SELECT challenge by primary key`,
    group: `${name} otp verify`,
    baseline: true,
    async fn() {
      await db.selectFrom("email_otp_challenges").selectAll().where("challenge_id", "=", hotChallenge)
        .executeTakeFirst();
    },
  });
  Deno.bench({
    name: `${name}: otp verify (wrong code, decrement)`,
    group: `${name} otp verify`,
    async fn(b) {
      const id = next("otp");
      await otp.store({
        challengeId: id,
        codeHash: hashOtpCode("424242"),
        expiresAt: FAR,
        remainingAttempts: 5,
      });
      b.start();
      const result = await otp.verify(id, "000000");
      b.end();
      if (result.outcome !== "WrongCode") throw new Error(result.outcome);
    },
  });
  Deno.bench({
    name: `${name}: otp verify (correct code, delete)`,
    group: `${name} otp verify`,
    async fn(b) {
      const id = next("otp");
      await otp.store({
        challengeId: id,
        codeHash: hashOtpCode("424242"),
        expiresAt: FAR,
        remainingAttempts: 5,
      });
      b.start();
      const result = await otp.verify(id, "424242");
      b.end();
      if (result.outcome !== "Success") throw new Error(result.outcome);
    },
  });

  Deno.bench({
    name: `${name}: SELECT jti by primary key`,
    group: `${name} jti consume`,
    baseline: true,
    async fn() {
      await db.selectFrom("consumed_tokens").selectAll().where("jti", "=", hotJti).executeTakeFirst();
    },
  });
  Deno.bench({
    name: `${name}: jti consume (first presentation)`,
    group: `${name} jti consume`,
    async fn() {
      if (!(await tokens.consume(next("jti"), FAR))) throw new Error("not first");
    },
  });
  Deno.bench({
    name: `${name}: jti consume (replay)`,
    group: `${name} jti consume`,
    async fn() {
      if (await tokens.consume(hotJti, FAR)) throw new Error("replay accepted");
    },
  });

  Deno.bench({
    name: `${name}: SELECT code by primary key`,
    group: `${name} code exchange`,
    baseline: true,
    async fn() {
      await db.selectFrom("authorization_codes").selectAll().where("code_hash", "=", hotCode)
        .executeTakeFirst();
    },
  });
  Deno.bench({
    name: `${name}: code exchange (Consumed)`,
    group: `${name} code exchange`,
    async fn(b) {
      const hash = hashOtpCode(next("code"));
      await codes.store(newCode(hash));
      b.start();
      const result = await codes.exchange(hash);
      b.end();
      if (result.outcome !== "Consumed") throw new Error(result.outcome);
    },
  });
}

function newCode(codeHash: string) {
  return {
    codeHash,
    clientId: "bench",
    redirectUri: "https://app.example.test/cb",
    realmId: crypto.randomUUID(),
    userId: crypto.randomUUID(),
    sessionId: crypto.randomUUID(),
    scopes: ["openid"],
    authTime: new Date(T0),
    expiresAt: FAR,
  };
}
