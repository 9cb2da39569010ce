/**
 * Prometheus metrics over HTTP: {@link requestMetrics} records every answer (method, matched
 * route, status, latency), and {@link metricsRoutes} serves `GET /metrics` in the text exposition
 * format behind a bearer token (`SVC_METRICS_TOKEN`, compared in constant time). Without a token
 * the route is not installed, so metrics are never public by accident.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import * as v from "valibot";
import { constantTimeEqual } from "../core/digest.ts";
import { UnauthenticatedError } from "../core/errors.ts";
import type { SvcMetrics } from "../core/metrics/svc-metrics.ts";
import { documented, errorResponses } from "./openapi/operation.ts";
import type { SvcEnv } from "./request-id.ts";

/** The content type of the Prometheus text exposition format. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** The methods counted under their own name; any other method is counted as `other`. */
export const KNOWN_METHODS: ReadonlySet<string> = new Set([
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "PATCH",
  "DELETE",
  "OPTIONS",
]);

/** The method label of a request: a known method, else `other` (the method is the client's to choose). */
export function methodLabel(method: string): string {
  return KNOWN_METHODS.has(method) ? method : "other";
}

/** The status label of an answer: the code when it is a valid HTTP status (100–599), else `other`. */
export function statusLabel(status: number): string {
  return Number.isInteger(status) && status >= 100 && status <= 599 ? String(status) : "other";
}

/**
 * Records each answer in `metrics` (install it first, so errors and 404s are counted too). Every
 * label is bounded whatever the client sends: the route label is the registered path
 * (`/svc-admin/users/:id`), never the raw URL, and a request no route matched is `unmatched`; a
 * method outside {@link KNOWN_METHODS} is `other`. `now` is a monotonic clock in milliseconds.
 */
export function requestMetrics(metrics: SvcMetrics, now: () => number): MiddlewareHandler<SvcEnv> {
  return async (c, next) => {
    const started = now();
    try {
      await next();
    } finally {
      const matched = routePath(c, -1);
      const route = matched === "*" || matched === "/*" || matched === "" ? "unmatched" : matched;
      const method = methodLabel(c.req.method);
      metrics.httpRequests.inc({ method, route, status: statusLabel(c.res.status) });
      metrics.httpDuration.observe({ method, route }, Math.max(0, now() - started) / 1000);
    }
  };
}

/** Whether the request carries `Authorization: Bearer <token>` (compared in constant time). */
export function presentsBearer(c: Context, token: string): boolean {
  const header = c.req.header("Authorization") ?? "";
  const presented = header.startsWith("Bearer ") ? header.slice("Bearer ".length) : "";
  return constantTimeEqual(presented, token);
}

/** `GET /metrics` with `Authorization: Bearer <token>`; `token` undefined installs nothing. */
export function metricsRoutes(metrics: SvcMetrics, token: string | undefined) {
  return documented((app) => {
    if (token === undefined) return;
    app.get("/metrics", async (c) => {
      if (!presentsBearer(c, token)) {
        throw new UnauthenticatedError("The metrics token is missing or wrong.");
      }
      c.header("Cache-Control", "no-store");
      return c.body(await metrics.registry.render(), 200, { "Content-Type": PROMETHEUS_CONTENT_TYPE });
    });
  }, (deps) =>
    deps.config.metrics.token === undefined ? [] : [{
      method: "GET",
      path: "/metrics",
      summary: "Prometheus metrics (text exposition format), behind the metrics bearer token",
      tags: ["Operations"],
      auth: "public",
      responses: {
        200: {
          description: "Every metric of this instance",
          body: v.string(),
          mediaType: "text/plain",
        },
        ...errorResponses(401),
      },
    }]);
}
