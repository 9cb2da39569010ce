import assert from "node:assert/strict";
import fc from "fast-check";
import { MetricsRegistry } from "../../../core/metrics/registry.ts";

Deno.test("metrics registry: the text exposition format for counters, histograms and gauges", async () => {
  const registry = new MetricsRegistry();
  const requests = registry.counter("svc_requests_total", "Requests.", ["route", "status"]);
  requests.inc({ route: "/a", status: "200" });
  requests.inc({ route: "/a", status: "200" }, 2);
  requests.inc({ route: '/b"\\\n', status: "500" });
  const latency = registry.histogram("svc_latency_seconds", "Latency.", ["route"], [0.1, 1]);
  latency.observe({ route: "/a" }, 0.05);
  latency.observe({ route: "/a" }, 0.5);
  latency.observe({ route: "/a" }, 3);
  registry.gauge("svc_queue", "Queue.", () => [{ labels: { status: "pending" }, value: 4 }]);
  registry.gauge("svc_broken", "A collector that fails is left out.", () => {
    throw new Error("database down");
  });
  assert.equal(
    await registry.render(),
    [
      "# HELP svc_requests_total Requests.",
      "# TYPE svc_requests_total counter",
      'svc_requests_total{route="/a",status="200"} 3',
      'svc_requests_total{route="/b\\"\\\\\\n",status="500"} 1',
      "# HELP svc_latency_seconds Latency.",
      "# TYPE svc_latency_seconds histogram",
      'svc_latency_seconds_bucket{route="/a",le="0.1"} 1',
      'svc_latency_seconds_bucket{route="/a",le="1"} 2',
      'svc_latency_seconds_bucket{route="/a",le="+Inf"} 3',
      'svc_latency_seconds_sum{route="/a"} 3.55',
      'svc_latency_seconds_count{route="/a"} 3',
      "# HELP svc_queue Queue.",
      "# TYPE svc_queue gauge",
      'svc_queue{status="pending"} 4',
      "",
    ].join("\n"),
  );
});

Deno.test("metrics registry: bad names, a second registration and a decreasing counter are refused", () => {
  const registry = new MetricsRegistry();
  assert.throws(() => registry.counter("bad name", "x"), RangeError);
  assert.throws(() => registry.counter("ok_total", "x", ["le"]), RangeError);
  const counter = registry.counter("ok_total", "x");
  assert.throws(() => registry.counter("ok_total", "x"), RangeError);
  assert.throws(() => counter.inc({}, -1), RangeError);
  assert.throws(() => registry.histogram("h", "x", [], [1, 1]), RangeError);
});

Deno.test("metrics registry: histogram buckets are cumulative and end at the count (property)", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.double({ min: 0, max: 20, noNaN: true }), { maxLength: 60 }),
      async (values) => {
        const registry = new MetricsRegistry();
        const histogram = registry.histogram("h_seconds", "h", [], [0.01, 0.1, 1, 10]);
        for (const value of values) histogram.observe({}, value);
        const text = await registry.render();
        const buckets = [...text.matchAll(/^h_seconds_bucket\{le="([^"]+)"\} (\d+)$/gm)]
          .map((m) => [m[1], Number(m[2])] as const);
        if (values.length === 0) return assert.equal(buckets.length, 0);
        for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i][1] >= buckets[i - 1][1]);
        assert.equal(buckets.at(-1)![1], values.length);
        for (const [le, count] of buckets) {
          const bound = le === "+Inf" ? Infinity : Number(le);
          assert.equal(count, values.filter((v) => v <= bound).length);
        }
        assert.equal(histogram.count({}), values.length);
      },
    ),
  );
});

Deno.test("metrics registry: past maxSeries, new label values go to one `other` series; known ones keep counting (property)", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 20 }),
      fc.array(fc.string({ maxLength: 6 }), { minLength: 1, maxLength: 200 }),
      async (maxSeries, values) => {
        const registry = new MetricsRegistry({ maxSeries });
        const counter = registry.counter("svc_things_total", "Things.", ["name", "kind"]);
        const histogram = registry.histogram("svc_thing_seconds", "Thing time.", ["name"], [1]);
        for (const name of values) {
          counter.inc({ name, kind: "k" });
          histogram.observe({ name }, 0.5);
        }
        const distinct = [...new Set(values)];
        const kept = distinct.slice(0, maxSeries);
        const text = await registry.render();
        const counterLines = text.split("\n").filter((l) => l.startsWith("svc_things_total"));
        const countLines = text.split("\n").filter((l) => l.startsWith("svc_thing_seconds_count"));
        // At most maxSeries own series plus the one overflow series.
        assert.ok(counterLines.length <= maxSeries + 1);
        assert.ok(countLines.length <= maxSeries + 1);
        for (const name of kept) {
          assert.equal(counter.value({ name, kind: "k" }), values.filter((v) => v === name).length);
          assert.equal(histogram.count({ name }), values.filter((v) => v === name).length);
        }
        const overflowed = values.filter((v) => !kept.includes(v)).length;
        assert.equal(counter.value({ name: "other", kind: "other" }), overflowed);
        assert.equal(histogram.count({ name: "other" }), overflowed);
      },
    ),
  );
});
