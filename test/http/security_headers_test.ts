import assert from "node:assert/strict";
import { Hono } from "hono";
import { ManualClock } from "../../core/clock.ts";
import { loadConfig } from "../../core/config/mod.ts";
import { SvcError } from "../../core/errors.ts";
import { seededRandom } from "../../core/random.ts";
import { createApp, type SvcApp } from "../../http/app.ts";
import { noStore, setAnswerHeader } from "../../http/security-headers.ts";

function app(env: Record<string, string> = {}): SvcApp {
  return createApp({
    config: loadConfig({ env }).config,
    readinessChecks: [],
    clock: new ManualClock(Date.UTC(2026, 0, 1)),
    random: seededRandom(5),
    routes: [(a) => {
      a.get("/thing", (c) => c.json({ ok: true }));
      a.post("/thing", (c) => c.json({ ok: true }, 201));
      a.get("/boom", () => {
        throw new SvcError("conflict", "no", 409);
      });
      a.get("/crash", () => {
        throw new Error("internal");
      });
      a.post("/secret", noStore, (c) => c.json({ secret: "s" }, 201));
      a.get("/redirect", () => Response.redirect("https://example.com/", 302));
    }],
  });
}

const BASELINE = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
};

function assertBaseline(res: Response, what: string): void {
  for (const [name, value] of Object.entries(BASELINE)) {
    assert.equal(res.headers.get(name), value, `${name} on ${what}`);
  }
}

Deno.test("security headers: nosniff, no-referrer and DENY on every response, errors and 404 included", async () => {
  const a = app();
  const cases: [string, RequestInit | undefined, number][] = [
    ["/thing", undefined, 200],
    ["/healthz", undefined, 200],
    ["/boom", undefined, 409],
    ["/crash", undefined, 500],
    ["/nope", undefined, 404],
    ["/redirect", undefined, 302],
    ["/thing", { method: "POST", body: "x".repeat(70_000) }, 413],
  ];
  for (const [path, init, status] of cases) {
    const res = await a.request(path, init);
    assert.equal(res.status, status, path);
    assertBaseline(res, `${init?.method ?? "GET"} ${path}`);
    await res.body?.cancel();
  }
});

Deno.test("security headers: Strict-Transport-Security only when the base URL is https", async () => {
  const http = await app().request("/thing");
  assert.equal(http.headers.get("strict-transport-security"), null);
  const https = app({
    SVC_BASE_URL: "https://id.example.com",
    SVC_RP_ID: "example.com",
    SVC_RP_NAME: "Example",
    SVC_RP_ORIGINS: "https://id.example.com",
  });
  for (const path of ["/thing", "/nope", "/boom"]) {
    const res = await https.request(path);
    assert.equal(res.headers.get("strict-transport-security"), "max-age=31536000; includeSubDomains", path);
  }
});

Deno.test("noStore: the route's answer carries Cache-Control: no-store; other answers do not", async () => {
  const a = app();
  const secret = await a.request("/secret", { method: "POST" });
  assert.equal(secret.status, 201);
  assert.equal(secret.headers.get("cache-control"), "no-store");
  assert.equal((await a.request("/thing")).headers.get("cache-control"), null);
});

const ORIGIN = "https://app.example.com";
const cors = () => app({ SVC_CORS_ORIGINS: `${ORIGIN},http://localhost:5173` });

function preflight(a: SvcApp, origin: string, method = "POST", headers = "authorization,content-type") {
  return a.request("/thing", {
    method: "OPTIONS",
    headers: {
      Origin: origin,
      "Access-Control-Request-Method": method,
      "Access-Control-Request-Headers": headers,
    },
  });
}

const CORS_HEADERS = [
  "access-control-allow-origin",
  "access-control-allow-credentials",
  "access-control-allow-methods",
  "access-control-allow-headers",
  "access-control-max-age",
  "access-control-expose-headers",
];

function corsHeadersOf(res: Response): string[] {
  return CORS_HEADERS.filter((name) => res.headers.has(name));
}

Deno.test("CORS off (default): no CORS headers, a preflight is not answered as one", async () => {
  const a = app();
  const res = await preflight(a, ORIGIN);
  assert.deepEqual(corsHeadersOf(res), []);
  assert.notEqual(res.status, 204);
  const get = await a.request("/thing", { headers: { Origin: ORIGIN } });
  assert.deepEqual(corsHeadersOf(get), []);
});

Deno.test("CORS on: a listed origin's preflight answers 204 with methods, headers, credentials and max-age", async () => {
  const res = await preflight(cors(), ORIGIN);
  assert.equal(res.status, 204);
  assert.equal(res.headers.get("access-control-allow-origin"), ORIGIN);
  assert.equal(res.headers.get("access-control-allow-credentials"), "true");
  const methods = (res.headers.get("access-control-allow-methods") ?? "").split(/,\s*/);
  for (const m of ["GET", "POST", "PUT", "PATCH", "DELETE"]) assert.ok(methods.includes(m), m);
  const allowed = (res.headers.get("access-control-allow-headers") ?? "").toLowerCase().split(/,\s*/);
  for (const h of ["authorization", "content-type", "x-svc-csrf", "dpop"]) assert.ok(allowed.includes(h), h);
  assert.match(res.headers.get("access-control-max-age") ?? "", /^\d+$/);
  assert.match(res.headers.get("vary") ?? "", /Origin/);
  assertBaseline(res, "preflight");
});

Deno.test("CORS on: a listed origin's request, success or error, carries its origin and credentials", async () => {
  const a = cors();
  for (const [path, status] of [["/thing", 200], ["/boom", 409], ["/nope", 404]] as const) {
    const res = await a.request(path, { headers: { Origin: "http://localhost:5173" } });
    assert.equal(res.status, status);
    assert.equal(res.headers.get("access-control-allow-origin"), "http://localhost:5173", path);
    assert.equal(res.headers.get("access-control-allow-credentials"), "true", path);
    assert.match(res.headers.get("access-control-expose-headers") ?? "", /X-Request-Id/i);
    // A browser app reads DPoP's nonce and challenges (RFC 9449 8, 7.1).
    assert.match(res.headers.get("access-control-expose-headers") ?? "", /DPoP-Nonce.*WWW-Authenticate/i);
    assert.match(res.headers.get("vary") ?? "", /Origin/, path);
  }
});

Deno.test("CORS on: an unlisted origin gets no CORS headers, preflight or not", async () => {
  const a = cors();
  for (const origin of ["https://evil.example", "https://app.example.com.evil.example", "null"]) {
    const pre = await preflight(a, origin);
    assert.deepEqual(corsHeadersOf(pre), [], origin);
    assert.notEqual(pre.status, 204);
    const get = await a.request("/thing", { headers: { Origin: origin } });
    assert.equal(get.status, 200);
    assert.deepEqual(corsHeadersOf(get), [], origin);
    assert.match(get.headers.get("vary") ?? "", /Origin/, "the answer depends on Origin");
  }
  // Without Origin (not a browser cross-origin call): no CORS headers either.
  assert.deepEqual(corsHeadersOf(await a.request("/thing")), []);
});

Deno.test("SVC_CORS_ORIGINS: a value that is not an origin stops boot naming the setting", () => {
  assert.throws(
    () => loadConfig({ env: { SVC_CORS_ORIGINS: "https://app.example.com/path" } }),
    /SVC_CORS_ORIGINS/,
  );
});

Deno.test("setAnswerHeader: sets the header on the handler's own answer in place, and on an immutable one through a copy", async () => {
  const made = new Map<string, Response>();
  const after = new Map<string, Response>();
  const a = new Hono();
  a.use("*", async (c, next) => {
    await next();
    setAnswerHeader(c, "X-One", "1");
    setAnswerHeader(c, "Vary", "Origin", true);
    after.set(c.req.path, c.res);
  });
  a.get("/own", (c) => {
    made.set("/own", c.json({ ok: true }));
    return made.get("/own")!;
  });
  a.get("/immutable", () => {
    made.set("/immutable", Response.redirect("https://example.com/", 302));
    return made.get("/immutable")!;
  });
  a.use("/early", async (c, next) => {
    // Before the answer exists: the header waits in Hono's prepared headers.
    setAnswerHeader(c, "X-Early", "e");
    await next();
  });
  a.get("/early", (c) => c.text("ok", 200, { Vary: "Accept" }));
  const own = await a.request("/own");
  assert.equal(own.headers.get("x-one"), "1");
  assert.equal(own.headers.get("vary"), "Origin");
  // Not copied: the answer the handler made is the one sent.
  assert.equal(after.get("/own"), made.get("/own"));
  const immutable = await a.request("/immutable");
  assert.equal(immutable.status, 302);
  assert.equal(immutable.headers.get("location"), "https://example.com/");
  assert.equal(immutable.headers.get("x-one"), "1");
  assert.notEqual(after.get("/immutable"), made.get("/immutable"));
  const early = await a.request("/early");
  assert.equal(early.headers.get("x-early"), "e");
  assert.equal(early.headers.get("vary"), "Accept, Origin");
  await Promise.all([own, immutable, early].map((res) => res.body?.cancel()));
});
