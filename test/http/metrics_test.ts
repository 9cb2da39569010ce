/**
 * `GET /metrics` and the request recorder on the Hono app: the token fence (no token configured:
 * no route; missing or wrong token: 401), the exposition content type, requests counted by their
 * registered route (never the raw URL) and status, unknown methods and unmatched paths collapsed
 * into one label value each, events by kind, and the webhook queue,
 * snapshot cache and database pool gauges.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../../core/clock.ts";
import { loadConfig } from "../../core/config/mod.ts";
import { createSvcMetrics } from "../../core/metrics/svc-metrics.ts";
import { seededRandom } from "../../core/random.ts";
import { createApp } from "../../http/app.ts";
import { PROMETHEUS_CONTENT_TYPE } from "../../http/metrics.ts";

const TOKEN = "metrics-token-0123456789abcdef0123456789";

function bed(env: Record<string, string> = { SVC_METRICS_TOKEN: TOKEN }) {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  let monotonic = 0;
  const metrics = createSvcMetrics({
    now: () => clock.now(),
    webhookQueue: () =>
      Promise.resolve({ pending: 2, retrying: 1, deadLetter: 0, oldestDueAt: clock.now() - 30_000 }),
    snapshots: { cachedCount: 5, lookups: { hits: 7, misses: 3 } },
    databasePool: { maxConnections: 10, inUse: 3, waiting: 2, acquisitions: 40, waitSeconds: 1.5 },
  });
  const app = createApp({
    config: loadConfig({ env }).config,
    readinessChecks: [],
    clock,
    random: seededRandom(9),
    // Each reading advances 20 ms: every request takes 20 ms on this clock.
    metrics: { recorder: metrics, now: () => (monotonic += 20) },
    routes: [(a) => a.get("/things/:id", (c) => c.json({ id: c.req.param("id") }))],
  });
  return { app, metrics };
}

const scrape = (app: ReturnType<typeof bed>["app"], token = TOKEN) =>
  app.request("/metrics", { headers: { Authorization: `Bearer ${token}` } });

Deno.test("metrics: without a configured token there is no /metrics route", async () => {
  const { app } = bed({});
  assert.equal((await app.request("/metrics")).status, 404);
  const doc = await (await app.request("/openapi.json")).json();
  assert.equal(doc.paths["/metrics"], undefined);
});

Deno.test("metrics: a missing or wrong token is 401; the right one gets the exposition text", async () => {
  const { app } = bed();
  const none = await app.request("/metrics");
  assert.equal(none.status, 401);
  assert.equal((await none.json()).error.code, "unauthenticated");
  assert.equal((await scrape(app, TOKEN.slice(0, -1) + "x")).status, 401);
  const res = await scrape(app);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), PROMETHEUS_CONTENT_TYPE);
  assert.equal(res.headers.get("cache-control"), "no-store");
  const doc = await (await app.request("/openapi.json")).json();
  assert.ok(doc.paths["/metrics"].get, "documented in the OpenAPI document");
});

Deno.test("metrics: requests are counted by registered route and status, with latency", async () => {
  const { app, metrics } = bed();
  for (const id of ["1", "2", "3"]) await (await app.request(`/things/${id}`)).body?.cancel();
  await (await app.request("/nowhere/at/all")).body?.cancel();
  const text = await (await scrape(app)).text();
  assert.match(text, /^svc_http_requests_total\{method="GET",route="\/things\/:id",status="200"\} 3$/m);
  assert.match(text, /^svc_http_requests_total\{method="GET",route="unmatched",status="404"\} 1$/m);
  assert.doesNotMatch(text, /things\/1/, "raw URLs never become labels");
  assert.match(
    text,
    /^svc_http_request_duration_seconds_bucket\{method="GET",route="\/things\/:id",le="0.025"\} 3$/m,
  );
  assert.match(
    text,
    /^svc_http_request_duration_seconds_bucket\{method="GET",route="\/things\/:id",le="0.01"\} 0$/m,
  );
  assert.equal(metrics.httpDuration.count({ method: "GET", route: "/things/:id" }), 3);
});

Deno.test("metrics: events by kind, the webhook queue and the snapshot cache", async () => {
  const { app, metrics } = bed();
  metrics.onEvent({ kind: "login.succeeded" });
  metrics.onEvent({ kind: "login.succeeded" });
  metrics.onEvent({ kind: "token.refresh_reuse_detected" });
  const text = await (await scrape(app)).text();
  assert.match(text, /^svc_events_total\{kind="login.succeeded"\} 2$/m);
  assert.match(text, /^svc_events_total\{kind="token.refresh_reuse_detected"\} 1$/m);
  assert.match(text, /^svc_webhook_deliveries\{status="pending"\} 2$/m);
  assert.match(text, /^svc_webhook_deliveries\{status="retrying"\} 1$/m);
  assert.match(text, /^svc_webhook_queue_lag_seconds 30$/m);
  assert.match(text, /^# TYPE svc_snapshot_cache_lookups_total counter$/m);
  assert.match(text, /^svc_snapshot_cache_lookups_total\{result="hit"\} 7$/m);
  assert.match(text, /^svc_snapshot_cache_entries 5$/m);
});

Deno.test("metrics: the database pool gauges", async () => {
  const { app } = bed();
  const text = await (await scrape(app)).text();
  assert.match(text, /^svc_db_pool_connections\{state="in_use"\} 3$/m);
  assert.match(text, /^svc_db_pool_connections\{state="available"\} 7$/m);
  assert.match(text, /^svc_db_pool_max_connections 10$/m);
  assert.match(text, /^svc_db_pool_waiting 2$/m);
  assert.match(text, /^# TYPE svc_db_pool_acquisitions_total counter$/m);
  assert.match(text, /^svc_db_pool_acquisitions_total 40$/m);
  assert.match(text, /^svc_db_pool_wait_seconds_total 1.5$/m);
});

Deno.test("metrics: thousands of distinct methods and paths keep the series bounded (other, unmatched)", async () => {
  const { app } = bed();
  await (await app.request("/things/1")).body?.cancel();
  const seriesCount = async () =>
    (await (await scrape(app)).text()).split("\n").filter((line) => line.startsWith("svc_http_")).length;
  const before = await seriesCount();
  for (let i = 0; i < 1_000; i++) {
    await (await app.request("/healthz", { method: `M${i.toString(36).toUpperCase()}` })).body?.cancel();
    await (await app.request(`/nowhere/${i}`, { method: i % 2 === 0 ? "GET" : `X${i}` })).body?.cancel();
    await (await app.request(`/things/${i}`, { method: `Q${i}` })).body?.cancel();
  }
  const text = await (await scrape(app)).text();
  assert.match(text, /^svc_http_requests_total\{method="other",route="unmatched",status="404"\} 2500$/m);
  assert.match(text, /^svc_http_requests_total\{method="GET",route="unmatched",status="404"\} 500$/m);
  assert.doesNotMatch(text, /method="M|method="X|method="Q|nowhere/);
  // Two new series (other and GET, both unmatched) plus the scrapes' own: a handful of lines, not thousands.
  assert.ok(await seriesCount() - before <= 60, `${await seriesCount() - before} new lines`);
});
