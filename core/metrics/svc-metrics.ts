/**
 * svc's own metrics on a {@link MetricsRegistry}: HTTP requests by route and status with a latency
 * histogram, every event by kind (sign-in outcomes, MFA, token issuance and refresh reuse, abuse
 * and risk decisions are all events), and gauges read at scrape time from the webhook queue, the
 * subject snapshot cache and the database connection pool.
 *
 * @module
 */
import type { WebhookQueueStats } from "../storage/webhooks.ts";
import { type Counter, type Histogram, MetricsRegistry } from "./registry.ts";

/** Where the scrape-time gauges read from; each is optional. */
export interface SvcMetricsSources {
  /** The webhook delivery queue (`storage.webhooks.queueStats`). */
  readonly webhookQueue?: () => Promise<WebhookQueueStats>;
  /** The subject snapshot cache: its size and lookups. */
  readonly snapshots?: {
    readonly cachedCount: number;
    readonly lookups: { readonly hits: number; readonly misses: number };
  };
  /**
   * The database connection pool (`database.pool`): connections in use, capacity, waiting
   * acquisitions. Embedded, the pool is PGlite's single connection.
   */
  readonly databasePool?: {
    readonly maxConnections: number;
    readonly inUse: number;
    readonly waiting: number;
    readonly acquisitions: number;
    readonly waitSeconds: number;
  };
  /** The clock, for the webhook queue's lag. */
  readonly now: () => number;
}

/** The recorders svc's middleware and event subscriber write to, and the registry they render from. */
export interface SvcMetrics {
  /** The registry every metric below is in; the HTTP layer renders it. */
  readonly registry: MetricsRegistry;
  /** `svc_http_requests_total`, by method, route and status. */
  readonly httpRequests: Counter;
  /** `svc_http_request_duration_seconds`, by method and route. */
  readonly httpDuration: Histogram;
  /** `svc_events_total`, by event kind. */
  readonly events: Counter;
  /** An event subscriber for the event hub: counts each event by kind. */
  readonly onEvent: (event: { readonly kind: string }) => void;
}

/** Registers svc's metrics and the gauges of `sources`. */
export function createSvcMetrics(sources: SvcMetricsSources): SvcMetrics {
  const registry = new MetricsRegistry();
  const httpRequests = registry.counter(
    "svc_http_requests_total",
    "HTTP requests answered, by method, matched route and status.",
    ["method", "route", "status"],
  );
  const httpDuration = registry.histogram(
    "svc_http_request_duration_seconds",
    "Time to answer an HTTP request, by method and matched route.",
    ["method", "route"],
  );
  const events = registry.counter(
    "svc_events_total",
    "Events emitted, by kind (login.*, mfa.*, token.*, risk.evaluated, abuse.*, webhook.*…).",
    ["kind"],
  );
  const { webhookQueue, snapshots, databasePool: pool, now } = sources;
  if (webhookQueue) {
    registry.gauge("svc_webhook_deliveries", "Webhook deliveries by status.", async () => {
      const stats = await webhookQueue();
      return [
        { labels: { status: "pending" }, value: stats.pending },
        { labels: { status: "retrying" }, value: stats.retrying },
        { labels: { status: "dead_letter" }, value: stats.deadLetter },
      ];
    });
    registry.gauge(
      "svc_webhook_queue_lag_seconds",
      "How long the oldest waiting webhook delivery has been due (0 when none waits).",
      async () => {
        const { oldestDueAt } = await webhookQueue();
        return [{ value: oldestDueAt === null ? 0 : Math.max(0, (now() - oldestDueAt) / 1000) }];
      },
    );
  }
  if (snapshots) {
    registry.gauge("svc_snapshot_cache_entries", "Subject snapshots cached.", () => [
      { value: snapshots.cachedCount },
    ]);
    registry.gauge(
      "svc_snapshot_cache_lookups_total",
      "Subject snapshot lookups since start, by result.",
      () => [
        { labels: { result: "hit" }, value: snapshots.lookups.hits },
        { labels: { result: "miss" }, value: snapshots.lookups.misses },
      ],
      "counter",
    );
  }
  if (pool) {
    registry.gauge(
      "svc_db_pool_connections",
      "Database connections by state: in_use (held by a query or a transaction), available (the rest of the pool's maximum; postgres.js opens them on demand).",
      () => [
        { labels: { state: "in_use" }, value: pool.inUse },
        { labels: { state: "available" }, value: Math.max(0, pool.maxConnections - pool.inUse) },
      ],
    );
    registry.gauge("svc_db_pool_max_connections", "The most connections the pool holds (1 embedded).", () => [
      { value: pool.maxConnections },
    ]);
    registry.gauge(
      "svc_db_pool_waiting",
      "Queries and transactions waiting for a database connection (embedded: queued behind the running one).",
      () => [{ value: pool.waiting }],
    );
    registry.gauge(
      "svc_db_pool_acquisitions_total",
      "Database connections handed to a query or a transaction since start.",
      () => [{ value: pool.acquisitions }],
      "counter",
    );
    registry.gauge(
      "svc_db_pool_wait_seconds_total",
      "Seconds spent waiting for a database connection since start (divide by acquisitions for the mean wait).",
      () => [{ value: pool.waitSeconds }],
      "counter",
    );
  }
  return {
    registry,
    httpRequests,
    httpDuration,
    events,
    onEvent: (event) => events.inc({ kind: event.kind }),
  };
}
