/**
 * `inSpan`: the work runs in an active span that ends when it settles; a failure sets the error
 * status and `error.type` from the error's code or class (never its message) and is rethrown.
 */
import assert from "node:assert/strict";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { SvcError } from "../../core/errors.ts";
import { inSpan } from "../../core/tracing.ts";
import { recordSpans, stopRecording } from "../support/spans.ts";

Deno.test("tracing: inSpan ends its span, nests spans, and records failures by code only", async () => {
  const spans = recordSpans();
  try {
    const value = await inSpan("outer", { attributes: { "svc.a": 1 } }, (outer) => {
      outer.setAttribute("svc.b", "x");
      return inSpan("inner", { kind: SpanKind.CLIENT }, () => Promise.resolve(42));
    });
    assert.equal(value, 42);
    assert.deepEqual(spans.map((s) => [s.name, s.ended, s.parent?.name]), [
      ["outer", true, undefined],
      ["inner", true, "outer"],
    ]);
    assert.deepEqual(spans[0].attributes, { "svc.a": 1, "svc.b": "x" });
    assert.equal(spans[1].kind, SpanKind.CLIENT);

    const secret = new SvcError("invalid_token", "token abc.def.ghi is invalid", 401);
    await assert.rejects(inSpan("fails", {}, () => Promise.reject(secret)), (err) => err === secret);
    await assert.rejects(inSpan("fails too", {}, () => Promise.reject(new RangeError("p4ssw0rd"))));
    const [coded, named] = spans.slice(2);
    assert.equal(coded.status?.code, SpanStatusCode.ERROR);
    assert.equal(coded.attributes["error.type"], "invalid_token");
    assert.equal(named.attributes["error.type"], "RangeError");
    assert.ok(coded.ended && named.ended);
    const recorded = JSON.stringify(spans.map((s) => s.attributes));
    assert.ok(!recorded.includes("p4ssw0rd") && !recorded.includes("abc.def"), "no message in a span");
  } finally {
    stopRecording();
  }
});
