import assert from "node:assert/strict";
import { logLines } from "../../cli/log-lines.ts";
import { ManualClock } from "../../core/clock.ts";

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    sink: { print: (l: string) => void out.push(l), printError: (l: string) => void err.push(l) },
  };
}

Deno.test("log lines: pretty prints the message and its fields; json one object per line", () => {
  const clock = new ManualClock(Date.UTC(2026, 10, 23, 12, 0, 0));
  const pretty = capture();
  logLines("pretty", pretty.sink, clock).info("request", { requestId: "r1", status: 200 });
  logLines("pretty", pretty.sink, clock).error("svc stopped");
  assert.deepEqual(pretty.out, ["request requestId=r1 status=200"]);
  assert.deepEqual(pretty.err, ["svc stopped"]);

  const json = capture();
  logLines("json", json.sink, clock).info("request", { requestId: "r1", status: 200 });
  logLines("json", json.sink, clock).error("storage: cannot open");
  assert.deepEqual(json.out.map((l) => JSON.parse(l)), [
    { time: "2026-11-23T12:00:00.000Z", level: "info", msg: "request", requestId: "r1", status: 200 },
  ]);
  assert.deepEqual(JSON.parse(json.err[0]), {
    time: "2026-11-23T12:00:00.000Z",
    level: "error",
    msg: "storage: cannot open",
  });
});

Deno.test("log lines: a field named like a secret is never written, in either format", () => {
  const clock = new ManualClock(0);
  for (const format of ["pretty", "json"] as const) {
    const c = capture();
    logLines(format, c.sink, clock).info("x", {
      password: "hunter2",
      refreshToken: "srt_abc",
      Authorization: "Bearer a",
      clientSecret: "s",
      status: 401,
    });
    assert.doesNotMatch(c.out[0], /hunter2|srt_abc|Bearer a|"s"|=s\b/);
    assert.match(c.out[0], /401/);
  }
});
