/**
 * JSON body limits: a body nested too deeply or with too wide an object or array answers 400
 * `invalid_request` before it is parsed, on unauthenticated routes, admin routes and any route
 * reading its body with `parseBody` (plugins included: they take it from mod.ts); nothing is
 * logged as an unexpected error. An Auth0 import over HTTP reports a deep line and imports the rest.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import { ManualClock } from "../../core/clock.ts";
import { loadConfig } from "../../core/config/mod.ts";
import { seededRandom } from "../../core/random.ts";
import { createApp } from "../../http/app.ts";
import type { ErrorBody } from "../../http/errors.ts";
import { parseBody } from "../../mod.ts";
import { adminBed } from "../support/admin.ts";

const deepArray = (levels: number) => "[".repeat(levels) + "]".repeat(levels);
const deepObject = (levels: number) => '{"email":'.repeat(levels) + '"a@example.test"' + "}".repeat(levels);

async function assertRefused(res: Response, what: string, pattern: RegExp): Promise<void> {
  assert.equal(res.status, 400, what);
  const body = await res.json() as ErrorBody;
  assert.equal(body.error.code, "invalid_request", what);
  assert.match(body.error.message, pattern, what);
  assert.doesNotMatch(JSON.stringify(body), /at .*\.ts|RangeError|stack/i, what);
}

Deno.test("deep JSON bodies (5,000 and 100,000 levels) answer 400 invalid_request, signed in or not", async () => {
  // A 100,000-level body is 200 KB: raise the body limit so the depth limit is what answers.
  const admin = await adminBed({ SVC_MAX_BODY_BYTES: String(1024 * 1024) });
  try {
    for (const levels of [5_000, 100_000]) {
      for (const body of [deepArray(levels), deepObject(levels)]) {
        const what = `${levels} levels`;
        const login = await admin.request("POST", "/auth/login", { as: null, body });
        await assertRefused(login, `unauthenticated ${what}`, /nested more than 160 levels deep/);
        const created = await admin.request("POST", "/svc-admin/roles", { body });
        await assertRefused(created, `admin ${what}`, /nested more than 160 levels deep/);
      }
    }
    const wide = JSON.stringify({
      key: "wide",
      displayName: "Wide",
      ...Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`k${i}`, i])),
    });
    await assertRefused(
      await admin.request("POST", "/svc-admin/roles", { body: wide }),
      "wide object",
      /more than 1000 members/,
    );
    // Within the limits the route works as before.
    const ok = await admin.request("POST", "/svc-admin/roles", {
      body: { key: "fine", displayName: "Fine" },
    });
    assert.equal(ok.status, 201);
    // An Auth0 import over HTTP: the deep line is an Error issue, the others import.
    const deepLine = `{"email":"deep@example.test","app_metadata":${deepObject(5_000)}}`;
    const imported = await admin.request("POST", "/svc-admin/imports/auth0", {
      body: `{"email":"one@example.test"}\n${deepLine}\n{"email":"two@example.test"}\n`,
      headers: { "Content-Type": "application/x-ndjson" },
    });
    assert.equal(imported.status, 200);
    const report = await imported.json();
    assert.deepEqual(report.users, { created: 2, updated: 0, skipped: 0, total: 2 });
    assert.deepEqual(report.issues.map((i: { key: string }) => i.key), ["line 2"]);
  } finally {
    await admin.close();
  }
});

Deno.test("SVC_MAX_JSON_DEPTH and SVC_MAX_JSON_MEMBERS set the limits of parseBody (the one mod.ts exports to plugins)", async () => {
  const logged: string[] = [];
  const app = createApp({
    config: loadConfig({ env: { SVC_MAX_JSON_DEPTH: "3", SVC_MAX_JSON_MEMBERS: "4" } }).config,
    readinessChecks: [],
    clock: new ManualClock(Date.UTC(2026, 0, 1)),
    random: seededRandom(3),
    logError: (line) => logged.push(line),
    routes: [(a) => {
      a.post("/things", async (c) => c.json({ got: await parseBody(c, v.unknown()) }));
    }],
  });
  const post = (body: string) =>
    app.request("/things", { method: "POST", body, headers: { "Content-Type": "application/json" } });
  assert.equal((await post('{"a":[{"b":1}]}')).status, 200);
  await assertRefused(await post('{"a":[{"b":[]}]}'), "4 levels", /more than 3 levels deep/);
  assert.equal((await post("[1,2,3,4]")).status, 200);
  await assertRefused(await post("[1,2,3,4,5]"), "5 members", /more than 4 members/);
  await assertRefused(await post('{"a":1,"b":2,"c":3,"d":4,"e":5}'), "5 keys", /more than 4 members/);
  await assertRefused(await post(deepArray(10_000)), "10,000 levels", /more than 3 levels deep/);
  assert.deepEqual(logged, []);
});
