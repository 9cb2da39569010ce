import assert from "node:assert/strict";
import fc from "fast-check";
import * as v from "valibot";
import { ManualClock } from "../../core/clock.ts";
import { loadConfig } from "../../core/config/mod.ts";
import { seededRandom } from "../../core/random.ts";
import { createApp, type SvcApp } from "../../http/app.ts";
import type { ErrorBody } from "../../http/errors.ts";
import { containsNul, parseBody } from "../../http/validate.ts";

/** POST /things echoes any JSON; GET /things/:id echoes the id and the query. */
function app(): SvcApp {
  return createApp({
    config: loadConfig({ env: {} }).config,
    readinessChecks: [],
    clock: new ManualClock(Date.UTC(2026, 0, 1)),
    random: seededRandom(9),
    routes: [(a) => {
      a.post("/things", async (c) => c.json({ got: await parseBody(c, v.unknown()) }));
      a.get("/things/:id", (c) => c.json({ id: c.req.param("id"), q: c.req.query("q") ?? null }));
    }],
  });
}

async function assertInvalid(res: Response, what: string): Promise<void> {
  assert.equal(res.status, 400, what);
  const body = await res.json() as ErrorBody;
  assert.equal(body.error.code, "invalid_request", what);
  assert.match(body.error.message, /U\+0000/, what);
}

Deno.test("parseBody: U+0000 in any string of the body, key included, answers 400 invalid_request", async () => {
  const a = app();
  const post = (json: string) =>
    a.request("/things", { method: "POST", body: json, headers: { "Content-Type": "application/json" } });
  const refused = [
    '{"email":"a\\u0000@example.com"}',
    '{"deep":{"list":[1,"ok",{"x":"\\u0000"}]}}',
    '{"k\\u0000ey":1}',
    '["\\u0000"]',
    '"\\u0000"',
  ];
  for (const json of refused) await assertInvalid(await post(json), json);
  const fine = await post('{"email":"a@example.com","n":[1,{"t":"\\u0001"}]}');
  assert.equal(fine.status, 200);
  assert.deepEqual(await fine.json(), { got: { email: "a@example.com", n: [1, { t: "\u0001" }] } });
});

Deno.test("U+0000 in a path parameter or a query parameter answers 400 invalid_request", async () => {
  const a = app();
  await assertInvalid(await a.request("/things/a%00b"), "path");
  await assertInvalid(await a.request("/things/x?q=%00"), "query value");
  await assertInvalid(await a.request("/things/x?q%00=1"), "query name");
  const fine = await a.request("/things/a%01b?q=%2500");
  assert.equal(fine.status, 200);
  assert.deepEqual(await fine.json(), { id: "a\u0001b", q: "%00" });
});

Deno.test("containsNul finds U+0000 anywhere in JSON values and only there (property)", () => {
  const json = fc.jsonValue();
  fc.assert(
    fc.property(json, (value) => containsNul(value) === JSON.stringify(value).includes("\\u0000")),
  );
  fc.assert(
    fc.property(
      json,
      fc.string(),
      fc.string(),
      (value, before, after) =>
        containsNul({ wrap: [value, `${before}\0${after}`] }) && containsNul({ [`${before}\0`]: value }),
    ),
  );
});

Deno.test("containsNul walks 100,000 levels without overflowing the stack", () => {
  const levels = 100_000;
  const deep = (leaf: string) =>
    JSON.parse('{"a":['.repeat(levels) + JSON.stringify(leaf) + "]}".repeat(levels));
  assert.equal(containsNul(deep("fine")), false);
  assert.equal(containsNul(deep("a\0b")), true);
});
