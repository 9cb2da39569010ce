/**
 * Attacks on the request edge of the real server (`svc start` under Deno on Postgres): oversized
 * and chunked bodies, U+0000 in every kind of input, the security headers, and CORS on and off.
 */
import assert from "node:assert/strict";
import { toBase64 } from "../../core/encoding.ts";
import { startTestServer } from "../support/server.ts";

const LISTED_ORIGIN = "https://app.example.test";
const MIB = 1024 * 1024;

/** The resident memory of a process in bytes (Linux). */
async function rssBytes(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  assert.ok(kib, "VmRSS in /proc/<pid>/status");
  return Number(kib[1]) * 1024;
}

/** Sends a raw HTTP/1.1 request and reads the status line of the answer ("" if none within 5 s). */
async function rawStatusLine(url: string, head: string, body: Uint8Array): Promise<string> {
  const { hostname, port } = new URL(url);
  const conn = await Deno.connect({ hostname, port: Number(port) });
  const timer = setTimeout(() => conn.close(), 5000);
  try {
    await conn.write(new TextEncoder().encode(head));
    await conn.write(body);
    const buffer = new Uint8Array(4096);
    const n = await conn.read(buffer);
    return new TextDecoder().decode(buffer.subarray(0, n ?? 0)).split("\r\n")[0];
  } catch (err) {
    if (err instanceof Deno.errors.BadResource || err instanceof Deno.errors.Interrupted) return "";
    throw err;
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed by the timer */ }
  }
}

Deno.test("edge attacks against the real server", async (t) => {
  const [server, corsServer] = await Promise.all([
    startTestServer(),
    startTestServer({
      SVC_CORS_ORIGINS: LISTED_ORIGIN,
      SVC_BASE_URL: "https://id.example.test",
      SVC_RP_ID: "example.test",
      SVC_RP_NAME: "Example",
      SVC_RP_ORIGINS: "https://id.example.test",
    }),
  ]);
  try {
    const json = (body: unknown, headers: Record<string, string> = {}) => ({
      method: "POST",
      headers: { "Content-Type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    const login = await fetch(
      `${server.url}/auth/login`,
      json({ email: server.adminEmail, password: server.adminPassword }),
    );
    assert.equal(login.status, 200);
    const { accessToken, refreshToken } = await login.json();
    const admin = { Authorization: `Bearer ${accessToken}` };

    await t.step("a body over 64 KiB answers 413 payload_too_large in the error shape", async () => {
      const res = await fetch(
        `${server.url}/auth/login`,
        json({ email: server.adminEmail, password: "x".repeat(70 * 1024) }),
      );
      assert.equal(res.status, 413);
      const { error } = await res.json();
      assert.equal(error.code, "payload_too_large");
      assert.equal(error.requestId, res.headers.get("X-Request-Id"));
    });

    await t.step(
      "a 200 MB chunked anonymous upload is refused quickly and the server's memory stays flat",
      async () => {
        const before = await rssBytes(server.pid);
        let sent = 0;
        const chunk = new Uint8Array(MIB).fill(0x61);
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (sent >= 200 * MIB) return controller.close();
            sent += chunk.byteLength;
            controller.enqueue(chunk);
          },
        });
        const started = performance.now();
        const res = await fetch(`${server.url}/auth/login`, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body,
        });
        const elapsed = performance.now() - started;
        assert.equal(res.status, 413);
        assert.equal((await res.json()).error.code, "payload_too_large");
        await body.cancel().catch(() => {});
        const after = await rssBytes(server.pid);
        assert.ok(elapsed < 5000, `refused after ${Math.round(elapsed)} ms`);
        assert.ok(
          after - before < 32 * MIB,
          `RSS grew by ${((after - before) / MIB).toFixed(1)} MiB (before ${(before / MIB).toFixed(0)} MiB)`,
        );
        assert.ok(sent < 200 * MIB, `the client sent ${sent / MIB} MiB: the server stopped reading`);
      },
    );

    await t.step("a declared Content-Length of 200 MB is refused before the body arrives", async () => {
      const { host } = new URL(server.url);
      const status = await rawStatusLine(
        server.url,
        `POST /auth/login HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${200 * MIB}\r\nConnection: close\r\n\r\n`,
        new TextEncoder().encode('{"email":"'),
      );
      assert.equal(status, "HTTP/1.1 413 Payload Too Large");
    });

    await t.step("U+0000 in any input answers 400 invalid_request (or 401), never 500", async () => {
      const nul = "a\u0000b";
      const basic = (user: string, secret: string) => ({
        Authorization: `Basic ${toBase64(new TextEncoder().encode(`${user}:${secret}`))}`,
      });
      const endpoints = (await (await fetch(`${server.url}/svc-admin/webhooks`, {
        ...json({ url: "https://hooks.example.com/in", eventPatterns: ["user.*"] }, admin),
      })).json()) as { id: string };
      const cases: [string, string, RequestInit, 400 | 401][] = [
        ["login email", "/auth/login", json({ email: `root${nul}@example.test`, password: "p" }), 400],
        ["login realm", "/auth/login", json({ email: server.adminEmail, password: "p", realm: nul }), 400],
        [
          "login audience",
          "/auth/login",
          json({ email: server.adminEmail, password: "p", audience: nul }),
          400,
        ],
        ["login password", "/auth/login", json({ email: server.adminEmail, password: nul }), 400],
        ["mfa token", "/auth/mfa/verify", json({ mfaToken: nul, factor: "totp", code: "123456" }), 400],
        ["passkey options GET email", "/auth/passkey/login/options?email=a%00b", {}, 400],
        ["passkey options GET realm", "/auth/passkey/login/options?realm=%00", {}, 400],
        ["passkey options POST email", "/auth/passkey/login/options", json({ email: nul }), 400],
        ["passkey options POST realm", "/auth/passkey/login/options", json({ realm: nul }), 400],
        ["passkey login ceremony id", "/auth/passkey/login", json({ ceremonyId: nul, response: {} }), 400],
        [
          "passkey mfa ceremony id",
          "/auth/passkey/mfa/verify",
          json({ mfaToken: "x.y.z", ceremonyId: nul, response: {} }),
          400,
        ],
        [
          "passkey register ceremony id",
          "/auth/passkey/register",
          json({ ceremonyId: nul, response: {} }, admin),
          400,
        ],
        ["passkey delete id", "/auth/passkey/a%00b", { method: "DELETE", headers: admin }, 400],
        ["Basic client id", "/profile/me", { headers: basic(`svc${nul}`, "secret") }, 401],
        ["Basic realm", "/profile/me", { headers: basic(`realm${nul}/svc`, "secret") }, 401],
        ["Basic secret", "/profile/me", { headers: basic("svc", nul) }, 401],
        ["refresh token", "/auth/refresh", json({ refreshToken: `${refreshToken}${nul}` }), 400],
        ["forgot password", "/auth/password/forgot", json({ email: nul }), 400],
        ["reset token", "/auth/password/reset", json({ token: nul, password: "a new password" }), 400],
        ["email verify token", "/auth/email/verify", json({ token: nul }), 400],
        ["invitation token", "/auth/invitation/accept", json({ token: nul, password: "a password!" }), 400],
        ["invite email", "/svc-admin/users/invite", json({ email: `x${nul}@example.test` }, admin), 400],
        [
          "invite name",
          "/svc-admin/users/invite",
          json({ email: "y@example.test", displayName: nul }, admin),
          400,
        ],
        [
          "webhook url",
          "/svc-admin/webhooks",
          json({ url: `https://hooks.example.com/${nul}`, eventPatterns: ["user.*"] }, admin),
          400,
        ],
        [
          "webhook description",
          "/svc-admin/webhooks",
          json({ url: "https://hooks.example.com/a", eventPatterns: ["user.*"], description: nul }, admin),
          400,
        ],
        [
          "webhook pattern",
          "/svc-admin/webhooks",
          json({ url: "https://hooks.example.com/a", eventPatterns: [nul] }, admin),
          400,
        ],
        ["webhook key", "/svc-admin/webhooks", json({ [nul]: 1 }, admin), 400],
        ["webhook id", "/svc-admin/webhooks/a%00b", { headers: admin }, 400],
        [
          "webhook patch",
          `/svc-admin/webhooks/${endpoints.id}`,
          { ...json({ description: nul }, admin), method: "PATCH" },
          400,
        ],
        [
          "deliveries status",
          `/svc-admin/webhooks/${endpoints.id}/deliveries?status=%00`,
          { headers: admin },
          400,
        ],
        ["session id", "/profile/sessions/%00", { method: "DELETE", headers: admin }, 400],
        ["realm jwks", "/realms/%00/.well-known/jwks.json", {}, 400],
        ["audit user", "/svc-admin/users/%00/erase", json({}, admin), 400],
        [
          "authz inspect",
          "/svc-admin/authz/inspect",
          json({ userId: nul, permission: "svc:*:*" }, admin),
          400,
        ],
      ];
      const wrong: string[] = [];
      for (const [name, path, init, status] of cases) {
        const res = await fetch(`${server.url}${path}`, init);
        const body = await res.json();
        const expected = status === 400 ? "invalid_request" : "invalid_credentials";
        if (res.status !== status || body.error?.code !== expected) {
          wrong.push(`${name}: ${res.status} ${body.error?.code} ${body.error?.message}`);
        } else if (status === 400 && !/U\+0000/.test(body.error.message)) {
          wrong.push(`${name}: refused for another reason (${body.error.message})`);
        }
      }
      assert.deepEqual(wrong, []);
    });

    await t.step("every answer carries nosniff, no-referrer and DENY; secrets carry no-store", async () => {
      const answers: [string, Response][] = [
        ["healthz", await fetch(`${server.url}/healthz`)],
        ["404", await fetch(`${server.url}/no/such/thing`)],
        ["401", await fetch(`${server.url}/profile/me`)],
        ["jwks", await fetch(`${server.url}/.well-known/jwks.json`)],
      ];
      const token = await fetch(
        `${server.url}/auth/login`,
        json({ email: server.adminEmail, password: server.adminPassword }),
      );
      const created = await fetch(
        `${server.url}/svc-admin/webhooks`,
        json({ url: "https://hooks.example.com/h", eventPatterns: ["user.*"] }, admin),
      );
      assert.equal(created.status, 201);
      const { id, secret } = await created.json();
      assert.match(secret, /\S{20,}/);
      const rotated = await fetch(`${server.url}/svc-admin/webhooks/${id}/rotate-secret`, json({}, admin));
      assert.equal(rotated.status, 200);
      const totp = await fetch(`${server.url}/profile/factors/totp`, { method: "POST", headers: admin });
      assert.equal(totp.status, 200);
      for (
        const [name, res] of [["login", token], ["webhook create", created], ["rotate", rotated], [
          "totp",
          totp,
        ]]
      ) {
        assert.equal((res as Response).headers.get("cache-control"), "no-store", name as string);
        answers.push([name as string, res as Response]);
      }
      for (const [name, res] of answers) {
        assert.equal(res.headers.get("x-content-type-options"), "nosniff", name);
        assert.equal(res.headers.get("referrer-policy"), "no-referrer", name);
        assert.equal(res.headers.get("x-frame-options"), "DENY", name);
        assert.equal(res.headers.get("strict-transport-security"), null, `${name}: http base URL, no HSTS`);
        if (!res.bodyUsed) await res.body?.cancel();
      }
      const https = await fetch(`${corsServer.url}/healthz`);
      assert.equal(https.headers.get("strict-transport-security"), "max-age=31536000; includeSubDomains");
      await https.body?.cancel();
    });

    await t.step(
      "CORS: off by default; on, a listed origin is served with credentials, others get nothing",
      async () => {
        const preflight = (url: string, origin: string) =>
          fetch(`${url}/auth/login`, {
            method: "OPTIONS",
            headers: {
              Origin: origin,
              "Access-Control-Request-Method": "POST",
              "Access-Control-Request-Headers": "content-type,x-svc-csrf",
            },
          });
        const off = await preflight(server.url, LISTED_ORIGIN);
        assert.equal(off.headers.get("access-control-allow-origin"), null);
        assert.equal(off.headers.get("access-control-allow-credentials"), null);
        await off.body?.cancel();

        const listed = await preflight(corsServer.url, LISTED_ORIGIN);
        assert.equal(listed.status, 204);
        assert.equal(listed.headers.get("access-control-allow-origin"), LISTED_ORIGIN);
        assert.equal(listed.headers.get("access-control-allow-credentials"), "true");
        assert.match(listed.headers.get("access-control-allow-methods") ?? "", /POST/);
        assert.match(listed.headers.get("access-control-allow-headers") ?? "", /Authorization/);
        assert.match(listed.headers.get("access-control-allow-headers") ?? "", /X-Svc-Csrf/);
        assert.match(listed.headers.get("access-control-max-age") ?? "", /^\d+$/);
        assert.match(listed.headers.get("vary") ?? "", /Origin/);

        const unlisted = await preflight(corsServer.url, "https://evil.example");
        for (const [name] of unlisted.headers) assert.doesNotMatch(name, /^access-control-/, name);
        await unlisted.body?.cancel();

        const actual = await fetch(`${corsServer.url}/healthz`, { headers: { Origin: LISTED_ORIGIN } });
        assert.equal(actual.headers.get("access-control-allow-origin"), LISTED_ORIGIN);
        assert.equal(actual.headers.get("access-control-allow-credentials"), "true");
        await actual.body?.cancel();
        const other = await fetch(`${corsServer.url}/healthz`, {
          headers: { Origin: "https://evil.example" },
        });
        for (const [name] of other.headers) assert.doesNotMatch(name, /^access-control-/, name);
        await other.body?.cancel();
      },
    );
  } finally {
    await Promise.all([server.close(), corsServer.close()]);
    const log = await server.stderr;
    assert.doesNotMatch(log, /internal error/, `the server reported internal errors:\n${log}`);
  }
});
