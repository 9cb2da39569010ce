import assert from "node:assert/strict";
import { ManualClock } from "../../core/clock.ts";
import { loadConfig } from "../../core/config/mod.ts";
import { seededRandom } from "../../core/random.ts";
import { createApp } from "../../http/app.ts";
import type { RequestLogEntry } from "../../http/request-log.ts";

Deno.test("request log: one entry per answer with its request id, registered route and status; no raw URL", async () => {
  const entries: RequestLogEntry[] = [];
  const app = createApp({
    config: loadConfig({ env: {} }).config,
    readinessChecks: [],
    clock: new ManualClock(0),
    random: seededRandom(3),
    logRequest: (entry) => void entries.push(entry),
    routes: [(a) => a.get("/reset/:token", (c) => c.json({ ok: true }))],
  });
  const ok = await app.request("/reset/secret-reset-token?code=123456");
  const missing = await app.request("/nowhere");
  assert.equal(entries.length, 2);
  assert.deepEqual(
    entries.map(({ durationMs: _, ...rest }) => rest),
    [
      { requestId: ok.headers.get("x-request-id"), method: "GET", route: "/reset/:token", status: 200 },
      { requestId: missing.headers.get("x-request-id"), method: "GET", route: "unmatched", status: 404 },
    ],
  );
  assert.doesNotMatch(JSON.stringify(entries), /secret-reset-token|123456/);
});
