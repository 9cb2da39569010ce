/**
 * What the svc app is built from and the shape of a route module: the types `createApp`
 * (`http/app.ts`) and the OpenAPI collector (`http/openapi/operation.ts`) share.
 *
 * @module
 */
import type { Context, Hono } from "hono";
import type { Tracer } from "@opentelemetry/api";
import type { Clock } from "../core/clock.ts";
import type { SvcConfig } from "../core/config/mod.ts";
import type { SvcMetrics } from "../core/metrics/svc-metrics.ts";
import type { RandomSource } from "../core/random.ts";
import type { Authenticator } from "./auth/principal.ts";
import type { SvcEnv } from "./env.ts";
import type { RequestLogEntry } from "./request-log.ts";

/** A dependency readiness depends on (database, key ring, break-glass drill…). */
export interface ReadinessCheck {
  /** Stable name, the key in the `/readyz` answer. */
  name: string;
  /** Resolves when the dependency is usable; rejects (or outlasts the time limit) when not. */
  check(): Promise<void>;
  /** False: reported, but a failure does not make the instance unready (default true). */
  critical?: boolean;
}

/** The app type routes are installed on. */
export type SvcApp = Hono<SvcEnv>;

/**
 * A route module: installs its routes on `app`, which is already mounted under
 * `config.server.pathBase` (so routes use paths such as `/auth/logout-all`).
 */
export type RouteInstaller = (app: SvcApp, deps: AppDeps) => void;

/** What the app is built from. */
export interface AppDeps {
  /** The validated configuration. */
  config: SvcConfig;
  /** Checks behind `GET /readyz`, each with a unique name (database, key ring…). */
  readinessChecks: ReadinessCheck[];
  /** The source of the current time. */
  clock: Clock;
  /** The source of random bytes (request ids). */
  random: RandomSource;
  /** Resolves the caller of each request (bearer or cookie tokens); without one, every caller is anonymous. */
  authenticator?: Authenticator;
  /** Route modules, installed in order after the health routes. */
  routes?: RouteInstaller[];
  /** Where unexpected errors and failed readiness checks are reported (the server log). */
  logError?: (line: string) => void;
  /** Time limit of each readiness check in milliseconds (default 2000). */
  readinessTimeoutMs?: number;
  /**
   * Whether a caller may read each readiness check's result at `GET /readyz` (an administrator;
   * an unauthenticated caller or a bad token must answer false, never throw). The metrics token
   * (`config.metrics.token`) is always admitted; anyone else gets the status and check names only.
   */
  readinessDetails?: (c: Context<SvcEnv>) => Promise<boolean>;
  /**
   * Metrics to record every answer in, and to serve at `GET /metrics` behind
   * `config.metrics.token`; `now` is a monotonic clock in milliseconds for latencies.
   */
  metrics?: { readonly recorder: SvcMetrics; readonly now: () => number };
  /** Receives one entry per answered request (the request log, `SVC_LOG_REQUESTS`); absent: no request log. */
  logRequest?: (entry: RequestLogEntry) => void;
  /** Where server spans go; default: the host's global OpenTelemetry provider (a no-op without an SDK). */
  tracer?: Tracer;
}
