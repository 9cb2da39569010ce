/**
 * The admin user API against the real server (`svc start` on Postgres), over HTTP, as the
 * bootstrap administrator: create a user with a password, sign in as them, suspend them, and see
 * their existing access token refused at once and their login refused.
 */
import { strict as assert } from "node:assert";
import { startTestServer } from "../support/server.ts";

Deno.test("e2e: admin creates, then suspends a user; the user's token and login stop at once", async (t) => {
  const server = await startTestServer({
    SVC_ABUSE_PER_IP_LIMIT: "1000",
    SVC_ABUSE_PER_IP_ACCOUNT_LIMIT: "1000",
  });
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
    return { status: res.status, body: text === "" ? null : JSON.parse(text), etag: res.headers.get("ETag") };
  };
  const login = (email: string, password: string) => call("/auth/login", { body: { email, password } });

  try {
    const root = await login(server.adminEmail, server.adminPassword);
    assert.equal(root.status, 200, JSON.stringify(root.body));
    const admin = root.body.accessToken as string;
    const email = "e2e.user@example.test";
    const password = "e2e user password";
    let userId = "";
    let userToken = "";

    await t.step("create a user with a password", async () => {
      const created = await call("/svc-admin/users", {
        token: admin,
        body: { email, password, displayName: "E2E User" },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.email, email);
      assert.equal(created.etag, '"1"');
      userId = created.body.id;
      const taken = await call("/svc-admin/users", { token: admin, body: { email } });
      assert.equal(taken.status, 409);
      assert.equal(taken.body.error.code, "user_email_taken");
    });

    await t.step("sign in as them", async () => {
      const signedIn = await login(email, password);
      assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
      userToken = signedIn.body.accessToken;
      const me = await call("/profile/me", { token: userToken });
      assert.equal(me.status, 200);
      assert.equal(me.body.id, userId);
      const sessions = await call(`/svc-admin/users/${userId}/sessions`, { token: admin });
      assert.equal(sessions.body.total, 1);
    });

    await t.step("suspend them: the existing token is refused at once, and so is a login", async () => {
      const suspended = await call(`/svc-admin/users/${userId}/suspend`, {
        token: admin,
        body: { reason: "e2e" },
      });
      assert.equal(suspended.status, 200, JSON.stringify(suspended.body));
      assert.equal(suspended.body.sessionsEnded, 1);
      const me = await call("/profile/me", { token: userToken });
      assert.equal(me.status, 401);
      assert.equal((await login(email, password)).status, 401);
      const read = await call(`/svc-admin/users/${userId}`, { token: admin });
      assert.equal(read.body.status, "Suspended");
    });
  } finally {
    await server.close();
  }
});
