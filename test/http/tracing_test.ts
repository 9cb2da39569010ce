/**
 * Server spans: one per request, named by method and registered route (never the raw URL), with
 * the status and the request id, an error status on 5xx, and the caller's trace continued when the
 * host's propagator reads one from `traceparent`.
 */
import assert from "node:assert/strict";
import {
  type Context,
  createContextKey,
  propagation,
  SpanKind,
  SpanStatusCode,
  type Tracer,
} from "@opentelemetry/api";
import { ManualClock } from "../../core/clock.ts";
import { loadConfig } from "../../core/config/mod.ts";
import { seededRandom } from "../../core/random.ts";
import { createApp } from "../../http/app.ts";
import { loginBed } from "../support/login.ts";
import { type RecordedSpan as GlobalSpan, recordSpans, stopRecording } from "../support/spans.ts";

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

Deno.test("tracing: a request's work nests under its span: statements, password checks, signatures", async () => {
  const bed = await loginBed();
  const spans = recordSpans();
  try {
    await bed.user("ada@example.test", "correct horse battery");
    spans.length = 0;
    const known = await bed.post("/auth/login", {
      email: "ada@example.test",
      password: "correct horse battery",
    });
    assert.equal(known.status, 200);
    const { refreshToken } = await known.json();
    const unknown = await bed.post("/auth/login", {
      email: "nobody@example.test",
      password: "correct horse battery",
    });
    assert.equal(unknown.status, 401);
    const refreshed = await bed.post("/auth/refresh", { refreshToken });
    assert.equal(refreshed.status, 200);

    const requests = spans.filter((s) => s.parent === undefined);
    assert.deepEqual(requests.map((s) => s.name), [
      "POST /auth/login",
      "POST /auth/login",
      "POST /auth/refresh",
    ]);
    const under = (request: GlobalSpan) => spans.filter((s) => root(s) === request && s !== request);
    const [knownLogin, unknownLogin, refresh] = requests.map(under);

    // The password check is one span, the same for a known user and for the dummy verification.
    const verify = (children: GlobalSpan[]) => children.filter((s) => s.name === "svc.password.verify");
    assert.equal(verify(knownLogin).length, 1);
    assert.deepEqual(
      verify(unknownLogin).map((s) => s.attributes),
      verify(knownLogin).map((s) => s.attributes),
    );
    assert.ok(
      knownLogin.some((s) => s.name === "svc.token.sign" && s.attributes["svc.token.type"] === "at+svc"),
    );
    assert.ok(!unknownLogin.some((s) => s.name === "svc.token.sign"));
    assert.ok(
      knownLogin.some((s) => s.attributes["db.system.name"] === "postgresql"),
      "statements of the login",
    );

    // A refresh grant: its one statement and the access token's signature.
    assert.ok(refresh.some((s) => s.name === "WITH" && s.kind === SpanKind.CLIENT));
    assert.ok(refresh.some((s) => s.name === "svc.token.sign"));
    assert.ok(spans.every((s) => s.ended));
    assert.doesNotMatch(JSON.stringify(spans), /correct horse|srt_|nobody@/);
  } finally {
    stopRecording();
    await bed.close();
  }
});

function root(span: GlobalSpan): GlobalSpan {
  let at = span;
  while (at.parent !== undefined) at = at.parent;
  return at;
}
