/**
 * The statements of a password sign-in on Postgres (issue 29), counted where kysely hands each
 * statement to the driver (the tracing spans, `BEGIN` and `COMMIT` included): a user with a long
 * ledger (600 events of the last 50 minutes, 6 of them sign-ins) signs in from a known device,
 * and the counts stay at the ceilings below, the risk gate's login history being one row read,
 * not pages of the ledger.
 *
 * Before issue 29 this sign-in took 29 statements in 2 transactions and read 516 rows (the
 * history paged 500 events, 100 at a time), then 17 statements; now 6, no transaction, a
 * handful of rows (the goal):
 * 1. the sign-in read: realm, account, credential, known device, login history and enrolled
 *    factors in one statement (`storage/sql/sign-ins.ts`);
 * 2. the abuse gate's four counter hits (the lockout slot reserved);
 * 3. `risk.evaluated` (ledger entry and webhook deliveries in one statement);
 * 4. the lockout slot given back (the password was right);
 * 5. the session and its first refresh token;
 * 6. `login.succeeded` with the login history, the account's failures cleared and the device's
 *    last-seen time, in one statement.
 * The ceilings are what the pipeline does today, so that a statement added to a sign-in fails
 * here first.
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { T0 } from "../../support/auth.ts";
import { loginBed } from "../../support/login.ts";
import { recordSpans, stopRecording } from "../../support/spans.ts";

const MAX_STATEMENTS = 6;
const MAX_TRANSACTIONS = 0;
const MAX_ROWS = 20;

Deno.test("login statements: a password sign-in on Postgres stays within its statement budget", async () => {
  const bed = await loginBed({}, { postgres: true });
  try {
    const userId = await bed.user("long@example.test", "correct horse battery staple");
    await sql`INSERT INTO security_events (id, realm_id, user_id, kind, occurred_at, ip_address)
      SELECT gen_random_uuid(), ${bed.realmId}::uuid, ${userId}::uuid,
        CASE WHEN g % 100 = 0 THEN 'login.succeeded' ELSE 'token.refreshed' END,
        to_timestamp(${T0 / 1000}::double precision - 3000 + g * 4), '192.0.2.1'
      FROM generate_series(1, 600) AS g`.execute(bed.database.db);
    // As a schema from before the login history: the table is filled from the ledger.
    await sql`DROP TABLE IF EXISTS login_history`.execute(bed.database.db);
    await sql`DELETE FROM svc_schema_state`.execute(bed.database.db);
    await bed.database.ensureSchema();
    const body = {
      email: "long@example.test",
      password: "correct horse battery staple",
      deviceFingerprint: "device-long",
    };
    const first = await bed.post("/auth/login", body); // the device becomes known
    assert.equal(first.status, 200);
    await first.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 100));

    const spans = recordSpans();
    let statements;
    try {
      const res = await bed.post("/auth/login", body);
      assert.equal(res.status, 200);
      assert.ok((await res.json()).accessToken);
      await new Promise((resolve) => setTimeout(resolve, 100)); // background writes settle
      statements = spans.filter((s) => s.attributes["db.system.name"] === "postgresql");
    } finally {
      stopRecording();
    }
    const rows = statements.reduce((n, s) => n + Number(s.attributes["db.response.returned_rows"] ?? 0), 0);
    const transactions = statements.filter((s) => s.name === "BEGIN").length;
    const list = statements.map((s) => `${s.name} ${String(s.attributes["db.query.text"]).slice(0, 70)}`)
      .join("\n");
    assert.ok(statements.length <= MAX_STATEMENTS, `${statements.length} statements:\n${list}`);
    assert.ok(transactions <= MAX_TRANSACTIONS, `${transactions} transactions`);
    assert.ok(rows <= MAX_ROWS, `${rows} rows`);
    assert.ok(!list.includes('from "security_events"'), "the ledger is not read to sign in");
  } finally {
    await bed.close();
  }
});
