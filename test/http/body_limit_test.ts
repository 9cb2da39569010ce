import assert from "node:assert/strict";
import * as v from "valibot";
import { ManualClock } from "../../core/clock.ts";
import { loadConfig } from "../../core/config/mod.ts";
import { seededRandom } from "../../core/random.ts";
import { createApp, type RouteInstaller, type SvcApp } from "../../http/app.ts";
import { bodyLimit } from "../../http/body-limit.ts";
import type { ErrorBody } from "../../http/errors.ts";
import { parseBody } from "../../http/validate.ts";

const KIB = 1024;

/** An app whose POST /echo parses `{ text }` and answers its length; POST /upload takes up to 1 MiB. */
function app(env: Record<string, string> = {}): SvcApp {
  const routes: RouteInstaller = (a, deps) => {
    a.post("/echo", async (c) => {
      const body = await parseBody(c, v.object({ text: v.string() }));
      return c.json({ length: body.text.length });
    });
    a.post("/upload", bodyLimit(deps.config.server.maxUploadBytes), async (c) => {
      return c.json({ bytes: (await c.req.arrayBuffer()).byteLength });
    });
  };
  return createApp({
    config: loadConfig({ env: { SVC_MAX_UPLOAD_BYTES: String(1024 * KIB), ...env } }).config,
    readinessChecks: [],
    clock: new ManualClock(Date.UTC(2026, 0, 1)),
    random: seededRandom(3),
    routes: [routes],
  });
}

/** A JSON body `{"text":"xxx…"}` of exactly `bytes` bytes. */
function jsonOfSize(bytes: number): string {
  return `{"text":"${"x".repeat(bytes - 11)}"}`;
}

/** A stream of `chunk`-byte chunks without end; counts the bytes it handed out. */
function endlessStream(chunk: number): { stream: ReadableStream<Uint8Array>; pulled(): number } {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled += chunk;
      controller.enqueue(new Uint8Array(chunk).fill(0x78));
    },
  });
  return { stream, pulled: () => pulled };
}

async function assertTooLarge(res: Response): Promise<void> {
  assert.equal(res.status, 413);
  const body = await res.json() as ErrorBody;
  assert.equal(body.error.code, "payload_too_large");
  assert.equal(body.error.requestId, res.headers.get("X-Request-Id"));
  assert.match(body.error.message, /64 KiB|65536 bytes/);
}

Deno.test("body limit: a string body over the 64 KiB default answers 413 payload_too_large; at the limit it passes", async () => {
  const a = app();
  const post = (body: string) =>
    a.request("/echo", { method: "POST", body, headers: { "Content-Type": "application/json" } });
  const at = await post(jsonOfSize(64 * KIB));
  assert.equal(at.status, 200);
  assert.deepEqual(await at.json(), { length: 64 * KIB - 11 });
  await assertTooLarge(await post(jsonOfSize(64 * KIB + 1)));
  // An unknown path is limited too (no route reads the body there, the limit still holds).
  const unknown = await a.request("/nope", { method: "POST", body: jsonOfSize(64 * KIB + 1) });
  assert.equal(unknown.status, 413);
});

Deno.test("body limit: a streamed body without Content-Length is refused once it passes the limit, not read to the end", async () => {
  const { stream, pulled } = endlessStream(4 * KIB);
  const res = await app().request(
    new Request("http://localhost/echo", {
      method: "POST",
      body: stream,
      headers: { "Content-Type": "application/json" },
      duplex: "half",
    } as RequestInit),
  );
  await assertTooLarge(res);
  assert.ok(pulled() <= 80 * KIB, `read ${pulled()} bytes of an endless body`);
});

Deno.test("body limit: a Content-Length that lies low does not let a larger body through", async () => {
  const { stream, pulled } = endlessStream(16 * KIB);
  const res = await app().request(
    new Request("http://localhost/echo", {
      method: "POST",
      body: stream,
      headers: { "Content-Type": "application/json", "Content-Length": "20" },
      duplex: "half",
    } as RequestInit),
  );
  await assertTooLarge(res);
  assert.ok(pulled() <= 96 * KIB, `read ${pulled()} bytes`);
});

Deno.test("body limit: a declared Content-Length over the limit is refused before any byte is read", async () => {
  const { stream, pulled } = endlessStream(KIB);
  const res = await app().request(
    new Request("http://localhost/echo", {
      method: "POST",
      body: stream,
      headers: { "Content-Type": "application/json", "Content-Length": String(200 * 1024 * KIB) },
      duplex: "half",
    } as RequestInit),
  );
  await assertTooLarge(res);
  assert.ok(pulled() <= 2 * KIB, `read ${pulled()} bytes`);
});

Deno.test("body limit: SVC_MAX_BODY_BYTES sets the default; a route declaring its own limit takes larger bodies", async () => {
  const a = app({ SVC_MAX_BODY_BYTES: "2048" });
  const echo = (bytes: number) =>
    a.request("/echo", {
      method: "POST",
      body: jsonOfSize(bytes),
      headers: { "Content-Type": "application/json" },
    });
  assert.equal((await echo(2048)).status, 200);
  const refused = await echo(2049);
  assert.equal(refused.status, 413);
  assert.match((await refused.json()).error.message, /2048 bytes/);

  const upload = (body: BodyInit) => a.request("/upload", { method: "POST", body });
  const big = await upload(new Uint8Array(600 * KIB));
  assert.equal(big.status, 200);
  assert.deepEqual(await big.json(), { bytes: 600 * KIB });
  assert.equal((await upload(new Uint8Array(1024 * KIB + 1))).status, 413);
  const { stream } = endlessStream(64 * KIB);
  const streamed = await a.request(
    new Request("http://localhost/upload", { method: "POST", body: stream, duplex: "half" } as RequestInit),
  );
  assert.equal(streamed.status, 413);
  assert.match((await streamed.json()).error.message, /1 MiB|1048576 bytes/);
});

Deno.test("body limit: from a server that frames bodies, a declared length within the limit is read in one call, and still measured", async () => {
  const a = app();
  const framed = { framedBodies: true };
  const body = jsonOfSize(40 * KIB);
  const at = await a.request("/echo", {
    method: "POST",
    body,
    headers: { "Content-Type": "application/json", "Content-Length": String(body.length) },
  }, framed);
  assert.equal(at.status, 200);
  assert.deepEqual(await at.json(), { length: 40 * KIB - 11 });
  // The route reads the body the limit read, as text, bytes or a form.
  const upload = await a.request("/upload", {
    method: "POST",
    body: new Uint8Array(300 * KIB),
    headers: { "Content-Length": String(300 * KIB) },
  }, framed);
  assert.deepEqual(await upload.json(), { bytes: 300 * KIB });
  // A length that lies low cannot happen on such a server; if it did, the bytes read still count.
  const lying = await a.request("/echo", {
    method: "POST",
    body: jsonOfSize(70 * KIB),
    headers: { "Content-Type": "application/json", "Content-Length": "20" },
  }, framed);
  await assertTooLarge(lying);
  // Over the limit as declared: refused before a byte is read, framed or not.
  const { stream, pulled } = endlessStream(KIB);
  const declared = await a.request(
    new Request("http://localhost/echo", {
      method: "POST",
      body: stream,
      headers: { "Content-Type": "application/json", "Content-Length": String(65 * KIB) },
      duplex: "half",
    } as RequestInit),
    undefined,
    framed,
  );
  await assertTooLarge(declared);
  assert.ok(pulled() <= 2 * KIB, `read ${pulled()} bytes`);
});
