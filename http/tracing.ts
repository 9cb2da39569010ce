/**
 * OpenTelemetry traces through `@opentelemetry/api`: one server span per request, named by the
 * method and the registered route, continuing the caller's trace when the host's propagator
 * reads one from the headers (`traceparent`). Without an SDK installed by the host, the API is a
 * no-op and this costs next to nothing. The raw URL, headers and bodies are never recorded.
 *
 * @module
 */
import { context, propagation, SpanKind, SpanStatusCode, type Tracer } from "@opentelemetry/api";
import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import { svcTracer } from "../core/tracing.ts";
import type { SvcEnv } from "./request-id.ts";

/** The W3C trace context and baggage headers a parent context is extracted from. */
const PROPAGATION_HEADERS = ["traceparent", "tracestate", "baggage"] as const;

/** A server span around each request (install it after the request id). */
export function requestTracing(tracer: Tracer = svcTracer()): MiddlewareHandler<SvcEnv> {
  return async (c, next) => {
    // Three lookups, not an iteration of every header: on Node, iterating makes @hono/node-server
    // build a full `Headers` object of the request, a lookup reads the parsed request.
    const carrier: Record<string, string> = {};
    for (const name of PROPAGATION_HEADERS) {
      const value = c.req.raw.headers.get(name);
      if (value !== null) carrier[name] = value;
    }
    const parent = propagation.extract(context.active(), carrier);
    const method = c.req.method;
    await tracer.startActiveSpan(
      method,
      { kind: SpanKind.SERVER, attributes: { "http.request.method": method } },
      parent,
      async (span) => {
        try {
          await next();
        } finally {
          const matched = routePath(c, -1);
          const route = matched === "*" || matched === "/*" || matched === "" ? "unmatched" : matched;
          const status = c.res.status;
          span.updateName(`${method} ${route}`);
          span.setAttribute("http.route", route);
          span.setAttribute("http.response.status_code", status);
          span.setAttribute("svc.request_id", c.get("requestId"));
          if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        }
      },
    );
  };
}
