/**
 * Server spans: one per request, named by method and registered route (never the raw URL), with
 * the status and the request id, an error status on 5xx, and the caller's trace continued when the
 * host's propagator reads one from `traceparent`.
 */
import assert from "node:assert/strict";
import { type Context, createContextKey, propagation, SpanStatusCode, type Tracer } from "@opentelemetry/api";
import { ManualClock } from "../../core/clock.ts";
import { loadConfig } from "../../core/config/mod.ts";
import { seededRandom } from "../../core/random.ts";
import { createApp } from "../../http/app.ts";

interface RecordedSpan {
  name: string;
  attributes: Record<string, unknown>;
  status?: number;
  ended: boolean;
  parent: unknown;
}

const TRACEPARENT = createContextKey("test traceparent");

function recordingTracer(spans: RecordedSpan[]): Tracer {
  return {
    startActiveSpan(
      name: string,
      options: { attributes?: Record<string, unknown> },
      ctx: Context,
      fn: (span: unknown) => unknown,
    ) {
      const record: RecordedSpan = {
        name,
        attributes: { ...options.attributes },
        ended: false,
        parent: ctx.getValue(TRACEPARENT),
      };
      spans.push(record);
      return fn({
        updateName: (n: string) => void (record.name = n),
        setAttribute: (k: string, v: unknown) => void (record.attributes[k] = v),
        setStatus: (s: { code: number }) => void (record.status = s.code),
        end: () => void (record.ended = true),
      });
    },
  } as unknown as Tracer;
}

function app(spans: RecordedSpan[]) {
  return createApp({
    config: loadConfig({ env: {} }).config,
    readinessChecks: [],
    clock: new ManualClock(0),
    random: seededRandom(4),
    tracer: recordingTracer(spans),
    routes: [(a) => {
      a.get("/reset/:token", (c) => c.json({ ok: true }));
      a.get("/crash", () => {
        throw new Error("boom");
      });
    }],
  });
}

Deno.test("tracing: one server span per request, by registered route, with status and request id", async () => {
  const spans: RecordedSpan[] = [];
  const ok = await app(spans).request("/reset/a-secret-token?code=1");
  await app(spans).request("/crash");
  assert.equal(spans.length, 2);
  assert.deepEqual(spans[0], {
    name: "GET /reset/:token",
    attributes: {
      "http.request.method": "GET",
      "http.route": "/reset/:token",
      "http.response.status_code": 200,
      "svc.request_id": ok.headers.get("x-request-id"),
    },
    ended: true,
    parent: undefined,
  });
  assert.equal(spans[1].status, SpanStatusCode.ERROR);
  assert.equal(spans[1].attributes["http.response.status_code"], 500);
  assert.doesNotMatch(JSON.stringify(spans), /a-secret-token|code=1/);
});

Deno.test("tracing: the caller's trace is continued through the host's propagator", async () => {
  propagation.setGlobalPropagator({
    inject() {},
    extract: (ctx, carrier, getter) => {
      const value = getter.get(carrier, "traceparent");
      return value === undefined ? ctx : ctx.setValue(TRACEPARENT, value);
    },
    fields: () => ["traceparent"],
  });
  try {
    const spans: RecordedSpan[] = [];
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    await app(spans).request("/reset/x", { headers: { traceparent } });
    assert.equal(spans[0].parent, traceparent);
  } finally {
    propagation.disable();
  }
});
