/**
 * Scale-out of "Apps with access" (issue 26): two `svc start` instances with the OIDC provider
 * on one Postgres database. A user grants a client (code flow: access and refresh token), and
 * instance B serves the client (userinfo, introspection, a refresh), so that B's caches hold the
 * token's verification, the grant and the client. The user revokes the app on instance A; at once,
 * without waiting for a message between the instances, B answers userinfo with the old access
 * tokens 401, refuses the refresh token and introspects all of them as inactive: B decides on
 * stored state (the session row), not on what it cached. The user's own svc session is untouched.
 */
import { strict as assert } from "node:assert";
import {
  FAST_SERVER_PASSWORD_ENV,
  freshServerDatabase,
  httpClient,
  type RealServer,
  startServer,
} from "../support/server.ts";

const ADMIN_EMAIL = "root@example.test";
const ADMIN_PASSWORD = "bootstrap secret";
const USER_EMAIL = "ada@example.test";
const USER_PASSWORD = "ada's long password";
const REDIRECT = "https://app.example.test/cb";
const FORM = { "Content-Type": "application/x-www-form-urlencoded" };

Deno.test("scale-out: revoking an app on one instance ends its tokens on the other", async () => {
  const database = await freshServerDatabase("svc_apps_scale");
  const env = {
    SVC_PORT: "0",
    // Behind one load balancer, every instance has the same issuer (base URL).
    SVC_BASE_URL: "http://localhost:18080",
    SVC_DATABASE_URL: database.url,
    SVC_BOOTSTRAP_ADMIN_EMAIL: ADMIN_EMAIL,
    SVC_BOOTSTRAP_ADMIN_PASSWORD: ADMIN_PASSWORD,
    SVC_MAINTENANCE_INTERVAL_SECONDS: "0",
    SVC_PLUGINS: "oidc-provider",
    ...FAST_SERVER_PASSWORD_ENV,
  };
  const servers: RealServer[] = [];
  let stopped: PromiseSettledResult<Deno.CommandStatus>[] = [];
  try {
    // The first boots the schema; the second starts on it (a concurrent first boot is
    // test/e2e/scale_out_test.ts).
    servers.push(await startServer("deno", env));
    servers.push(await startServer("deno", env));
    const [urlA, urlB] = servers.map((s) => s.url);
    const [a, b] = [httpClient(urlA), httpClient(urlB)];
    const root = await a.signIn(ADMIN_EMAIL, ADMIN_PASSWORD);

    const created = await a.call("POST", "/svc-admin/oidc/clients", root, {
      clientId: "notes",
      clientName: "Notes",
      clientType: "confidential",
      redirectUris: [REDIRECT],
      allowedScopes: ["openid", "email", "offline_access"],
    });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const secret = created.json.clientSecret as string;
    const user = await a.call("POST", "/svc-admin/users", root, {
      email: USER_EMAIL,
      password: USER_PASSWORD,
      emailVerified: true,
    });
    assert.equal(user.status, 201, JSON.stringify(user.json));
    const own = await a.signIn(USER_EMAIL, USER_PASSWORD);

    /** A form POST to an OIDC endpoint of `base` as the client. */
    const form = async (base: string, path: string, fields: Record<string, string>) => {
      const res = await fetch(`${base}${path}`, {
        method: "POST",
        headers: FORM,
        body: new URLSearchParams({ ...fields, client_id: "notes", client_secret: secret }).toString(),
      });
      return { status: res.status, json: await res.json().catch(() => null) };
    };
    const userinfo = async (base: string, accessToken: string) => {
      const res = await fetch(`${base}/oidc/userinfo`, {
        headers: { Authorization: `Bearer ${accessToken}` },
      });
      await res.body?.cancel();
      return res.status;
    };
    const active = async (base: string, token: string) => {
      const res = await form(base, "/oidc/introspect", { token });
      assert.equal(res.status, 200, JSON.stringify(res.json));
      return res.json.active as boolean;
    };

    // The code flow on A, as the user's browser (signed in to svc) would run it.
    const query = new URLSearchParams({
      response_type: "code",
      client_id: "notes",
      redirect_uri: REDIRECT,
      scope: "openid email offline_access",
      state: "s",
    });
    const authorized = await fetch(`${urlA}/oidc/authorize?${query}`, {
      headers: { Cookie: `svc_at=${own}` },
      redirect: "manual",
    });
    await authorized.body?.cancel();
    const location = new URL(authorized.headers.get("Location") ?? "", urlA);
    assert.equal(`${location.origin}${location.pathname}`, REDIRECT, location.href);
    const code = location.searchParams.get("code")!;
    const exchanged = await form(urlA, "/oidc/token", {
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT,
    });
    assert.equal(exchanged.status, 200, JSON.stringify(exchanged.json));
    const firstAccess = exchanged.json.access_token as string;

    // B serves the client: its verified-token, grant and client caches now hold all of it.
    assert.equal(await userinfo(urlB, firstAccess), 200);
    const refreshed = await form(urlB, "/oidc/token", {
      grant_type: "refresh_token",
      refresh_token: exchanged.json.refresh_token,
    });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.json));
    const access = [firstAccess, refreshed.json.access_token as string];
    const refreshToken = refreshed.json.refresh_token as string;
    for (const token of access) {
      assert.equal(await userinfo(urlB, token), 200);
      assert.equal(await active(urlB, token), true);
    }
    assert.equal(await active(urlB, refreshToken), true);

    // The user sees the app on either instance, and revokes it on A.
    const listed = await b.call("GET", "/profile/apps", own);
    assert.equal(listed.status, 200, JSON.stringify(listed.json));
    const app = (listed.json.apps as { clientId: string; activeSessions: number }[])
      .find((entry) => entry.clientId === "notes");
    assert.equal(app?.activeSessions, 1, JSON.stringify(listed.json));
    assert.equal((await a.call("DELETE", "/profile/apps/notes", own)).status, 204);

    // At once on B: no polling, no message between the instances awaited.
    for (const token of access) {
      assert.equal(await userinfo(urlB, token), 401, "userinfo with an access token of the revoked app");
      assert.equal(await active(urlB, token), false, "the access token is inactive");
    }
    assert.equal(await active(urlB, refreshToken), false, "the refresh token is inactive");
    const refused = await form(urlB, "/oidc/token", {
      grant_type: "refresh_token",
      refresh_token: refreshToken,
    });
    assert.equal(refused.status, 400, JSON.stringify(refused.json));
    assert.equal(refused.json.error, "invalid_grant");
    const after = await b.call("GET", "/profile/apps", own);
    assert.equal(after.status, 200, "the user's own session is untouched");
    assert.ok(!(after.json.apps as { clientId: string }[]).some((entry) => entry.clientId === "notes"));
  } finally {
    stopped = await Promise.allSettled(servers.map((s) => s.stop()));
    await database.drop();
  }
  for (const status of stopped) if (status.status === "rejected") throw status.reason;
});
