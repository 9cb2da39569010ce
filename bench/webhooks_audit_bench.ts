/**
 * Webhook deliveries and audit appends per second on Postgres, each beside a plain INSERT
 * into a table of the same width (`CREATE TABLE … (LIKE <svc table>)` plus the same primary
 * key, no other index) measured in the same run (the baseline of its group, so the report
 * prints the ratio):
 *
 *     deno bench -A bench/webhooks_audit_bench.ts
 *
 * - webhook delivery: one iteration is one dispatcher batch of 20 queued deliveries to a
 *   loopback receiver (Deno.serve answering 204): claim (`FOR UPDATE SKIP LOCKED` + lease),
 *   HMAC signing, POST over HTTP/1.1, and recording each success. Queueing is excluded from
 *   the timing. Baseline: 20 single-row INSERTs into a table as wide as the outbox, 8 in
 *   flight at a time (the dispatcher's default concurrency).
 *   Deliveries per second = 20 × iterations per second.
 * - audit append, 1 writer: one append to one realm's chain (transaction, per-realm advisory
 *   lock, tail read, two payload digests, entry hash, INSERT). Baseline: one INSERT into a
 *   table as wide as the chain.
 * - audit append, 20 writers: 20 appends to one realm started at once over 20 connections
 *   (they serialize on the realm's lock). Baseline: 20 concurrent INSERTs.
 *   Appends per second = 20 × iterations per second.
 *
 * Postgres is the server named by SVC_TEST_DATABASE_URL (default the local test server), in a
 * schema `svc_bench_webhooks_audit` that is dropped and recreated at the start of each run.
 *
 * @module
 */
import { type Kysely, sql } from "kysely";
import { systemClock } from "../core/clock.ts";
import { cryptoRandom, randomUuid } from "../core/random.ts";
import { createOutboundFetch } from "../core/net/outbound.ts";
import { WebhookDispatcher } from "../core/webhooks/dispatcher.ts";
import type { AdminAuditEntriesTable, Database, WebhookDeliveriesTable } from "../storage/database.ts";
import { openDatabase } from "../storage/open.ts";
import { createSqlStorage } from "../storage/storage.ts";

const POSTGRES_URL = Deno.env.get("SVC_TEST_DATABASE_URL") ?? "postgres://postgres@127.0.0.1:5432/test";
const SCHEMA = "svc_bench_webhooks_audit";
const BATCH = 20;
const WRITERS = 20;

const database = await openDatabase({
  kind: "postgres",
  url: POSTGRES_URL,
  schema: SCHEMA,
  maxConnections: WRITERS + 2,
});
await sql.raw(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`).execute(database.db);
await database.ensureSchema();
const db = database.db as unknown as Kysely<
  Database & { plain_deliveries: WebhookDeliveriesTable; plain_audit: AdminAuditEntriesTable }
>;
await sql.raw(`CREATE TABLE plain_deliveries (LIKE webhook_deliveries, PRIMARY KEY (id))`).execute(db);
await sql.raw(`CREATE TABLE plain_audit (LIKE admin_audit_entries, PRIMARY KEY (realm_id, seq))`).execute(db);

const storage = createSqlStorage(database, { clock: systemClock, random: cryptoRandom });
const realm = randomUuid(cryptoRandom);
await db.insertInto("realms").values({
  id: realm,
  name: "bench",
  display_name: "bench",
  is_default: false,
  created_at: new Date(),
}).execute();

const receiver = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
  await req.arrayBuffer();
  return new Response(null, { status: 204 });
});
const endpoint = await storage.webhooks.createEndpoint({
  realmId: realm,
  url: `http://127.0.0.1:${receiver.addr.port}/hook`,
  secret: "whsec_bench_secret_0123456789abcdef",
  eventPatterns: ["*"],
});
const dispatcher = new WebhookDispatcher({
  storage,
  outbound: createOutboundFetch({
    policy: { allowPrivate: ["127.0.0.1"] },
    fetch: (input, init) => fetch(input, init),
    resolveHost: () => Promise.reject(new Error("the bench sends to an address")),
  }),
  clock: systemClock,
  batchSize: BATCH,
  concurrency: 8,
});
const payload = JSON.stringify({
  id: randomUuid(cryptoRandom),
  kind: "login.succeeded",
  occurredAt: new Date().toISOString(),
  realmId: realm,
  orgId: null,
  userId: randomUuid(cryptoRandom),
  data: { ip: "198.51.100.7", method: "passkey", device: "Safari on macOS" },
});

function plainDelivery() {
  const now = new Date();
  return {
    id: randomUuid(cryptoRandom),
    endpoint_id: endpoint.id,
    event_kind: "login.succeeded",
    payload,
    status: "succeeded" as const,
    attempts: 1,
    next_attempt_at: now,
    last_error: null,
    last_status_code: 204,
    created_at: now,
    completed_at: now,
  };
}

const snapshot = { role: "editor", grants: ["docs:org:*"], members: 12, note: "bench" };
let plainSeq = 0;
function plainAuditRow() {
  return {
    realm_id: realm,
    seq: ++plainSeq,
    occurred_at: new Date(),
    action: "role.update",
    actor_id: "bench-admin",
    actor_kind: "User" as const,
    target: "role-1",
    org_id: null,
    before_json: sql`${JSON.stringify(snapshot)}::jsonb`,
    after_json: sql`${JSON.stringify({ ...snapshot, members: 13 })}::jsonb`,
    before_digest: "a".repeat(64),
    after_digest: "b".repeat(64),
    prev_hash: "c".repeat(64),
    entry_hash: "d".repeat(64),
  };
}
const append = () =>
  storage.adminAudit.append(realm, {
    action: "role.update",
    actorId: "bench-admin",
    actorKind: "User",
    target: "role-1",
    before: snapshot,
    after: { ...snapshot, members: 13 },
  });

// Warm up every path (connections, prepared plans, the HTTP client) before measuring.
for (let i = 0; i < 5; i++) {
  for (let j = 0; j < BATCH; j++) await storage.webhooks.enqueue(endpoint.id, "login.succeeded", payload);
  await dispatcher.runOnce();
  await Promise.all(Array.from({ length: WRITERS }, append));
  await Promise.all(
    Array.from({ length: WRITERS }, () => db.insertInto("plain_audit").values(plainAuditRow()).execute()),
  );
  await db.insertInto("plain_deliveries").values(plainDelivery()).execute();
}

Deno.bench({
  name: `webhook delivery: batch of ${BATCH} to loopback (claim, sign, POST, record)`,
  group: "webhook delivery",
  async fn(b) {
    for (let j = 0; j < BATCH; j++) await storage.webhooks.enqueue(endpoint.id, "login.succeeded", payload);
    b.start();
    const outcomes = await dispatcher.runOnce();
    b.end();
    if (outcomes.length !== BATCH || !outcomes.every((o) => o.ok)) throw new Error("a delivery failed");
  },
});

Deno.bench({
  name: `baseline: ${BATCH} plain INSERTs into a table as wide as the outbox, 8 at a time`,
  group: "webhook delivery",
  baseline: true,
  async fn() {
    let next = 0;
    const worker = async () => {
      while (next++ < BATCH) await db.insertInto("plain_deliveries").values(plainDelivery()).execute();
    };
    await Promise.all(Array.from({ length: 8 }, worker));
  },
});

Deno.bench({
  name: "audit append, 1 writer",
  group: "audit append, 1 writer",
  async fn() {
    await append();
  },
});

Deno.bench({
  name: "baseline: plain INSERT into a table as wide as the chain, 1 writer",
  group: "audit append, 1 writer",
  baseline: true,
  async fn() {
    await db.insertInto("plain_audit").values(plainAuditRow()).execute();
  },
});

Deno.bench({
  name: `audit append, ${WRITERS} concurrent writers (${WRITERS} appends per iteration)`,
  group: `audit append, ${WRITERS} writers`,
  async fn() {
    await Promise.all(Array.from({ length: WRITERS }, append));
  },
});

Deno.bench({
  name: `baseline: ${WRITERS} concurrent plain INSERTs`,
  group: `audit append, ${WRITERS} writers`,
  baseline: true,
  async fn() {
    await Promise.all(
      Array.from({ length: WRITERS }, () => db.insertInto("plain_audit").values(plainAuditRow()).execute()),
    );
  },
});
