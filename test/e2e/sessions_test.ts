/**
 * Attack cases of issue 19 (sessions and credential lifecycle) against the real server
 * (`svc start` on Postgres), over HTTP: a logged-out access token is refused at once, including
 * for organization switch; a refresh replay with a foreign orgId revokes the family; an older
 * reset link is refused after a newer reset (links read from the server's `mail_outbox`), and
 * the reset ends the other sessions; an API key stops when its owner is suspended.
 */
import { strict as assert } from "node:assert";
import postgres from "postgres";
import { sha256Hex } from "../../core/digest.ts";
import { startTestServer } from "../support/server.ts";

Deno.test("e2e: sessions and credential lifecycle attacks", async (t) => {
  const server = await startTestServer({
    SVC_ABUSE_PER_IP_LIMIT: "1000",
    SVC_ABUSE_PER_IP_ACCOUNT_LIMIT: "1000",
  });
  const db = postgres(server.databaseUrl, { max: 1, onnotice: () => {} });
  const call = async (path: string, init: { body?: unknown; token?: string; method?: string } = {}) => {
    const headers: Record<string, string> = {};
    if (init.body !== undefined) headers["Content-Type"] = "application/json";
    if (init.token !== undefined) headers.Authorization = `Bearer ${init.token}`;
    const res = await fetch(`${server.url}${path}`, {
      method: init.method ?? (init.body === undefined ? "GET" : "POST"),
      headers,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    const text = await res.text();
    return { status: res.status, body: text === "" ? null : JSON.parse(text) };
  };
  let password = server.adminPassword;
  const login = async () => {
    const res = await call("/auth/login", { body: { email: server.adminEmail, password } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as { accessToken: string; refreshToken: string };
  };

  try {
    await t.step("logout stops the access token at once, organization switch included", async () => {
      const tokens = await login();
      assert.equal((await call("/profile/me", { token: tokens.accessToken })).status, 200);
      assert.equal((await call("/auth/logout", { method: "POST", token: tokens.accessToken })).status, 204);
      const me = await call("/profile/me", { token: tokens.accessToken });
      assert.equal(me.status, 401);
      assert.equal(me.body.error.code, "invalid_token");
      const switched = await call("/auth/switch-organization", {
        token: tokens.accessToken,
        body: { orgId: crypto.randomUUID() },
      });
      assert.equal(switched.status, 401);
    });

    await t.step("a refresh replay with a foreign orgId revokes the family", async () => {
      const tokens = await login();
      const rotated = await call("/auth/refresh", { body: { refreshToken: tokens.refreshToken } });
      assert.equal(rotated.status, 200);
      const replay = await call("/auth/refresh", {
        body: { refreshToken: tokens.refreshToken, orgId: crypto.randomUUID() },
      });
      assert.equal(replay.status, 401);
      assert.equal(replay.body.error.code, "invalid_refresh_token");
      assert.equal(
        (await call("/auth/refresh", { body: { refreshToken: rotated.body.refreshToken } })).status,
        401,
      );
      assert.equal((await call("/profile/me", { token: rotated.body.accessToken })).status, 401);
    });

    await t.step(
      "an older reset link is refused after a newer reset, and the reset ends sessions",
      async () => {
        const other = await login();
        const links = async () =>
          (await db`SELECT text_body FROM mail_outbox WHERE kind = 'password_reset' ORDER BY seq`).map((
            row,
          ) => decodeURIComponent(/[?&]token=([^\s"&<]+)/.exec(row.text_body as string)![1]));
        for (let i = 0; i < 2; i++) {
          assert.equal(
            (await call("/auth/password/forgot", { body: { email: server.adminEmail } })).status,
            202,
          );
          for (let wait = 0; wait < 200 && (await links()).length < i + 1; wait++) {
            await new Promise((r) => setTimeout(r, 25));
          }
        }
        const [older, newer] = await links();
        assert.ok(older && newer && older !== newer);
        password = "a brand new admin password";
        assert.equal((await call("/auth/password/reset", { body: { token: newer, password } })).status, 200);
        const stale = await call("/auth/password/reset", {
          body: { token: older, password: "attacker choice" },
        });
        assert.equal(stale.status, 401);
        assert.equal(stale.body.error.code, "invalid_token");
        assert.equal((await call("/profile/me", { token: other.accessToken })).status, 401);
        await login();
      },
    );

    await t.step("an API key stops when its owner is suspended", async () => {
      const [realm] = await db`SELECT id FROM realms WHERE is_default`;
      const userId = crypto.randomUUID();
      const now = new Date();
      await db`INSERT INTO users (id, realm_id, email, created_at, updated_at)
        VALUES (${userId}, ${realm.id}, 'keyholder@example.test', ${now}, ${now})`;
      const key = `sak_${"k".repeat(43)}`;
      await db`INSERT INTO api_keys (id, realm_id, owner_kind, owner_id, name, token_hash, created_at)
        VALUES (${crypto.randomUUID()}, ${realm.id}, 'User', ${userId}, 'ci', ${sha256Hex(key)}, ${now})`;
      assert.equal((await call("/profile/permissions", { token: key })).status, 200);
      await db`UPDATE users SET status = 'Suspended' WHERE id = ${userId}`;
      const refused = await call("/profile/permissions", { token: key });
      assert.equal(refused.status, 401);
      assert.equal(refused.body.error.code, "invalid_token");
    });
  } finally {
    await db.end();
    await server.close();
  }
});
