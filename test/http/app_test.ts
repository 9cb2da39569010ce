import assert from "node:assert/strict";
import { HTTPException } from "hono/http-exception";
import * as v from "valibot";
import { ManualClock } from "../../core/clock.ts";
import { loadConfig } from "../../core/config/mod.ts";
import { NotFoundError, SvcError } from "../../core/errors.ts";
import { seededRandom } from "../../core/random.ts";
import { type AppDeps, createApp, type ReadinessCheck, type SvcApp } from "../../http/app.ts";
import type { ErrorBody } from "../../http/errors.ts";
import { parseBody } from "../../http/validate.ts";

function app(overrides: Partial<AppDeps> = {}, env: Record<string, string> = {}): SvcApp {
  return createApp({
    config: loadConfig({ env }).config,
    readinessChecks: [],
    clock: new ManualClock(Date.UTC(2026, 0, 1)),
    random: seededRandom(7),
    ...overrides,
  });
}

const ok = (name: string): ReadinessCheck => ({ name, check: () => Promise.resolve() });

/** Admits every caller to the readiness details (what an administrator's token gets). */
const everyone: AppDeps["readinessDetails"] = () => Promise.resolve(true);

/** Asserts the one error shape and returns it. */
async function errorOf(res: Response, status: number, code: string): Promise<ErrorBody["error"]> {
  assert.equal(res.status, status);
  assert.match(res.headers.get("Content-Type") ?? "", /^application\/json/);
  const body = await res.json() as ErrorBody;
  assert.deepEqual(Object.keys(body), ["error"]);
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, "string");
  assert.equal(body.error.requestId, res.headers.get("X-Request-Id"));
  return body.error;
}

Deno.test("GET /healthz answers 200 ok", async () => {
  const res = await app().request("/healthz");
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { status: "ok" });
  assert.equal(res.headers.get("Cache-Control"), "no-store");
});

Deno.test("GET /readyz answers 200 with every check named when all pass", async () => {
  const res = await app({ readinessChecks: [ok("database"), ok("key_ring")], readinessDetails: everyone })
    .request("/readyz");
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), {
    status: "ready",
    checks: { database: { status: "ok" }, key_ring: { status: "ok" } },
  });
});

Deno.test("GET /readyz answers 503 naming the failing check, without leaking its error", async () => {
  const logged: string[] = [];
  const res = await app({
    readinessChecks: [
      ok("key_ring"),
      {
        name: "database",
        check: () => Promise.reject(new Error("connect ECONNREFUSED postgres://svc:hunter2@db")),
      },
      {
        name: "drill",
        check: () => Promise.reject(new SvcError("drill_overdue", "No drill in 90 days.", 503)),
      },
      {
        name: "throws",
        check: () => {
          throw new Error("synchronously");
        },
      },
    ],
    logError: (line) => logged.push(line),
    readinessDetails: everyone,
  }).request("/readyz");
  assert.equal(res.status, 503);
  assert.deepEqual(await res.json(), {
    status: "not_ready",
    checks: {
      key_ring: { status: "ok" },
      database: { status: "fail", error: "check failed" },
      drill: { status: "fail", error: "No drill in 90 days." },
      throws: { status: "fail", error: "check failed" },
    },
  });
  assert.ok(logged.some((line) => line.includes("readiness check database failed: connect ECONNREFUSED")));
});

Deno.test("GET /readyz fails a check that outlasts its time limit", async () => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const res = await app({
    readinessChecks: [{
      name: "database",
      check: () => new Promise((resolve) => timer = setTimeout(resolve, 1000)),
    }],
    readinessTimeoutMs: 20,
    readinessDetails: everyone,
  }).request("/readyz");
  clearTimeout(timer);
  assert.equal(res.status, 503);
  assert.deepEqual(await res.json(), {
    status: "not_ready",
    checks: { database: { status: "fail", error: "timed out after 20 ms" } },
  });
});

Deno.test("GET /readyz without the metrics token or an admitted caller: the status and check names only", async () => {
  const TOKEN = "metrics-token-0123456789abcdef0123456789";
  const admitted: string[] = [];
  const a = app({
    readinessChecks: [
      ok("database"),
      {
        name: "break_glass_drill",
        critical: false,
        check: () =>
          Promise.reject(
            new SvcError("break_glass_drill_overdue", "break-glass drill overdue in 1 realm", 503),
          ),
      },
      { name: "plugin:greeting", check: () => Promise.reject(new SvcError("down", "greeting is down", 503)) },
    ],
    // An administrator's token, as the app's caller decides it.
    readinessDetails: (c) => {
      admitted.push(c.req.header("Authorization") ?? "");
      return Promise.resolve(c.req.header("Authorization") === "Bearer admin");
    },
  }, { SVC_METRICS_TOKEN: TOKEN });
  const readyz = async (authorization?: string) => {
    const res = await a.request("/readyz", {
      headers: authorization ? { Authorization: authorization } : {},
    });
    assert.equal(res.status, 503);
    assert.equal(res.headers.get("Cache-Control"), "no-store");
    return await res.json();
  };
  const names = { status: "not_ready", checks: ["database", "break_glass_drill", "plugin:greeting"] };
  const details = {
    status: "not_ready",
    checks: {
      database: { status: "ok" },
      break_glass_drill: { status: "fail", error: "break-glass drill overdue in 1 realm", critical: false },
      "plugin:greeting": { status: "fail", error: "greeting is down" },
    },
  };
  assert.deepEqual(await readyz(), names);
  assert.deepEqual(await readyz(`Bearer ${TOKEN.slice(0, -1)}x`), names, "a wrong metrics token");
  assert.deepEqual(await readyz("Bearer someone"), names, "a caller not admitted");
  assert.deepEqual(await readyz(`Bearer ${TOKEN}`), details, "the metrics token");
  assert.deepEqual(await readyz("Bearer admin"), details, "an admitted caller");
  assert.ok(!admitted.includes(`Bearer ${TOKEN}`), "the metrics token is settled before any other check");
  // Without a configured metrics token or a details reader, nobody reads the details.
  const bare = await app({ readinessChecks: [ok("database")] }).request("/readyz", {
    headers: { Authorization: `Bearer ${TOKEN}` },
  });
  assert.deepEqual(await bare.json(), { status: "ready", checks: ["database"] });
});

Deno.test("readiness checks must have unique names", () => {
  assert.throws(
    () => app({ readinessChecks: [ok("database"), ok("database")] }),
    /two readiness checks are named database/,
  );
});

Deno.test("an unknown path answers 404 not_found in the error shape", async () => {
  const error = await errorOf(await app().request("/nope"), 404, "not_found");
  assert.equal(error.message, "No such endpoint.");
  assert.equal(error.details, undefined);
});

Deno.test("a thrown SvcError answers its status, code, message and details", async () => {
  const res = await app({
    routes: [(a) => {
      a.get("/svc", () => {
        throw new SvcError("passkey_not_eligible", "This passkey cannot be a first factor.", 401, {
          credential: "c1",
        });
      });
      a.get("/missing", () => {
        throw new NotFoundError("The session was not found.");
      });
    }],
  });
  const error = await errorOf(await res.request("/svc"), 401, "passkey_not_eligible");
  assert.equal(error.message, "This passkey cannot be a first factor.");
  assert.deepEqual(error.details, { credential: "c1" });
  await errorOf(await res.request("/missing"), 404, "not_found");
});

Deno.test("Hono's HTTPException keeps its status in the error shape", async () => {
  const res = await app({
    routes: [(a) =>
      a.post("/upload", () => {
        throw new HTTPException(413, { message: "The body is too large." });
      })],
  }).request("/upload", { method: "POST" });
  const error = await errorOf(res, 413, "payload_too_large");
  assert.equal(error.message, "The body is too large.");
});

Deno.test("an unknown error answers 500 internal_error with a generic message and no stack", async () => {
  const logged: string[] = [];
  const res = await app({
    routes: [(a) =>
      a.get("/boom", () => {
        throw new Error("secret detail at /srv/svc/internal.ts:42");
      })],
    logError: (line) => logged.push(line),
  }).request("/boom");
  const text = await res.clone().text();
  const error = await errorOf(res, 500, "internal_error");
  assert.equal(error.message, "An internal error occurred.");
  assert.ok(!text.includes("secret detail") && !text.includes("internal.ts") && !text.includes("at "), text);
  assert.equal(logged.length, 1);
  assert.match(
    logged[0],
    new RegExp(`^internal error \\(request ${error.requestId}, GET /boom\\): Error: secret detail`),
  );
});

Deno.test("parseBody: non-JSON → 400 invalid_json; schema mismatch → 400 invalid_request naming the field", async () => {
  const a = app({
    routes: [(a) =>
      a.post("/things", async (c) => {
        const body = await parseBody(
          c,
          v.object({ name: v.string(), size: v.object({ width: v.number() }) }),
        );
        return c.json(body, 201);
      })],
  });
  const post = (body: string, type = "application/json") =>
    a.request("/things", { method: "POST", body, headers: { "Content-Type": type } });

  const created = await post('{"name":"a","size":{"width":2}}', "application/json; charset=utf-8");
  assert.equal(created.status, 201);
  assert.deepEqual(await created.json(), { name: "a", size: { width: 2 } });

  assert.equal(
    (await errorOf(await post("{nope"), 400, "invalid_json")).message,
    "The request body is not valid JSON.",
  );
  await errorOf(await post('{"name":"a"}', "text/plain"), 400, "invalid_json");
  await errorOf(await post("name=a", "application/x-www-form-urlencoded"), 400, "invalid_json");

  const error = await errorOf(await post('{"name":"a","size":{"width":"wide"}}'), 400, "invalid_request");
  assert.match(error.message, /^Invalid request: size\.width: /);
  assert.deepEqual((error.details?.issues as { path: string }[]).map((i) => i.path), ["size.width"]);
});

Deno.test("a thrown valibot error answers 400 invalid_request with the field path", async () => {
  const res = await app({
    routes: [(a) =>
      a.get("/parse", () => {
        v.parse(v.object({ id: v.string() }), { id: 1 });
        return new Response("unreachable");
      })],
  }).request("/parse");
  const error = await errorOf(res, 400, "invalid_request");
  assert.deepEqual((error.details?.issues as { path: string }[])[0].path, "id");
});

Deno.test("request id: a sane incoming X-Request-Id is echoed, anything else is replaced", async () => {
  const a = app({ routes: [(a) => a.get("/id", (c) => c.json({ id: c.get("requestId") }))] });
  const echoed = await a.request("/id", { headers: { "X-Request-Id": "abc.DEF_123-x" } });
  assert.equal(echoed.headers.get("X-Request-Id"), "abc.DEF_123-x");
  assert.deepEqual(await echoed.json(), { id: "abc.DEF_123-x" });

  const seen = new Set<string>();
  for (const incoming of [undefined, "", "has space", "semi;colon", "x".repeat(129), "<script>"]) {
    const headers: Record<string, string> = incoming === undefined ? {} : { "X-Request-Id": incoming };
    const res = await a.request("/id", { headers });
    const id = res.headers.get("X-Request-Id") ?? "";
    assert.match(
      id,
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      `for ${incoming}`,
    );
    assert.deepEqual(await res.json(), { id });
    seen.add(id);
  }
  assert.equal(seen.size, 6, "a fresh id per request");
  assert.equal(
    (await a.request("/id", { headers: { "X-Request-Id": "x".repeat(128) } })).headers.get("X-Request-Id"),
    "x".repeat(128),
  );

  // Error responses carry it too, in the header and the body.
  const notFound = await a.request("/nope", { headers: { "X-Request-Id": "req-1" } });
  assert.equal((await errorOf(notFound, 404, "not_found")).requestId, "req-1");
});

Deno.test("request id: set on responses a route builds itself, even with immutable headers", async () => {
  const res = await app({
    routes: [(a) => a.get("/go", () => Response.redirect("https://example.com/", 302))],
  })
    .request("/go", { headers: { "X-Request-Id": "r-2" } });
  assert.equal(res.status, 302);
  assert.equal(res.headers.get("X-Request-Id"), "r-2");
});

Deno.test("pathBase mounts every route, health included, under it", async () => {
  const a = app({ routes: [(a) => a.get("/auth/thing", (c) => c.json({ ok: true }))] }, {
    SVC_PATH_BASE: "/id",
  });
  assert.equal((await a.request("/id/healthz")).status, 200);
  assert.equal((await a.request("/id/readyz")).status, 200);
  assert.equal((await a.request("/id/auth/thing")).status, 200);
  await errorOf(await a.request("/healthz"), 404, "not_found");
  await errorOf(await a.request("/auth/thing"), 404, "not_found");
  await errorOf(await a.request("/id/nope"), 404, "not_found");
});

Deno.test("pathBase: well-known documents also answer with the path inserted (RFC 8414 3.1)", async () => {
  const a = app({
    routes: [(a) => a.get("/.well-known/oauth-authorization-server", (c) => c.json({ issuer: "x" }))],
  }, { SVC_PATH_BASE: "/id/p" });
  assert.deepEqual(await (await a.request("/id/p/.well-known/oauth-authorization-server")).json(), {
    issuer: "x",
  });
  assert.deepEqual(await (await a.request("/.well-known/oauth-authorization-server/id/p")).json(), {
    issuer: "x",
  });
  // Only that form, and only documents served under the base.
  await errorOf(await a.request("/.well-known/oauth-authorization-server"), 404, "not_found");
  await errorOf(await a.request("/.well-known/oauth-authorization-server/id"), 404, "not_found");
  await errorOf(await a.request("/.well-known/openid-configuration/id/p"), 404, "not_found");
  await errorOf(await a.request("/.well-known/oauth-authorization-server/id/p/x"), 404, "not_found");
  // Without a path base nothing is rewritten.
  const root = app({ routes: [(a) => a.get("/.well-known/thing", (c) => c.text("ok"))] });
  assert.equal((await root.request("/.well-known/thing")).status, 200);
  await errorOf(await root.request("/.well-known/thing/"), 404, "not_found");
});

Deno.test("route installers receive the app deps", async () => {
  let seenPort = 0;
  const a = app({ routes: [(_, deps) => seenPort = deps.config.server.port] }, { SVC_PORT: "9123" });
  assert.equal(seenPort, 9123);
  assert.equal((await a.request("/healthz")).status, 200);
});
