/**
 * "Apps with access" (`/profile/apps`): the user sees the clients holding a grant (name, scopes,
 * granted at, last use) and revokes one: consent deleted, the client's sessions ended (refresh
 * refused, access token refused), one audit entry even under 20 concurrent revocations, none for
 * a no-op; the fence (no caller, an app's token, another user, impersonation); the OpenAPI entry.
 */
import { strict as assert } from "node:assert";
import { oidcProviderPlugin } from "../../../plugins/oidc-provider/mod.ts";
import { otherRealm } from "../../support/other-realm.ts";
import { pluginBed } from "../../support/plugins.ts";

const REDIRECT = "https://app.example.test/cb";
const FORM = { "Content-Type": "application/x-www-form-urlencoded" };

Deno.test("oidc-provider: apps with access on the account", async (t) => {
  const plugin = oidcProviderPlugin({ backchannelWorker: false });
  const beds = await pluginBed([plugin], { SVC_PLUGINS: "oidc-provider" });
  try {
    const { bed, realmId } = beds.admin;
    const created = await beds.request("POST", "/svc-admin/oidc/clients", {
      body: {
        clientId: "photos",
        clientName: "Photo Album",
        clientType: "confidential",
        redirectUris: [REDIRECT],
        allowedScopes: ["openid", "email", "offline_access"],
        requireConsent: true,
      },
    });
    assert.equal(created.status, 201, await created.clone().text());
    const secret = (await created.json()).clientSecret as string;

    const user = await bed.storage.users.create({ realmId, email: "apps@example.test" });
    const other = await bed.storage.users.create({ realmId, email: "other@example.test" });
    const browser = await bed.auth.sessions.signIn({
      realmId,
      userId: user.id,
      orgId: null,
      mfa: "Password",
    });
    const otherBrowser = await bed.auth.sessions.signIn({
      realmId,
      userId: other.id,
      orgId: null,
      mfa: "Password",
    });
    const bearer = { Authorization: `Bearer ${browser.tokens.accessToken}` };
    const cookie = `svc_at=${browser.tokens.accessToken}`;

    /** Authorizes (consenting on the hosted page as a browser would) and exchanges the code. */
    const authorize = async () => {
      const query = new URLSearchParams({
        response_type: "code",
        client_id: "photos",
        redirect_uri: REDIRECT,
        scope: "openid email offline_access",
        state: "s",
      });
      let res = await beds.app.request(`/oidc/authorize?${query}`, { headers: { Cookie: cookie } });
      assert.equal(res.status, 303);
      let location = new URL(res.headers.get("Location")!, "http://svc.test");
      if (location.pathname === "/oidc/consent") {
        const page = await beds.app.request(`${location.pathname}${location.search}`, {
          headers: { Cookie: cookie },
        });
        assert.equal(page.status, 200);
        const html = await page.text();
        assert.match(html, /Photo Album/, "the consent page names the client");
        const unescape = (text: string) =>
          text.replace(/&#(\d+);/g, (_, code) => String.fromCharCode(Number(code)));
        const request = unescape(/name="request" value="([^"]*)"/.exec(html)![1]);
        const form = unescape(/name="form" value="([^"]*)"/.exec(html)![1]);
        const formCookie = page.headers.get("Set-Cookie")!.split(";")[0];
        res = await beds.app.request("/oidc/consent", {
          method: "POST",
          headers: { ...FORM, Cookie: `${cookie}; ${formCookie}` },
          body: new URLSearchParams({ request, form, decision: "allow" }).toString(),
        });
        assert.equal(res.status, 303, await res.clone().text());
        location = new URL(res.headers.get("Location")!, "http://svc.test");
        res = await beds.app.request(`${location.pathname}${location.search}`, {
          headers: { Cookie: cookie },
        });
        assert.equal(res.status, 303);
        location = new URL(res.headers.get("Location")!, "http://svc.test");
      }
      const code = location.searchParams.get("code");
      assert.ok(code, location.href);
      const tokens = await beds.app.request("/oidc/token", {
        method: "POST",
        headers: FORM,
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code,
          redirect_uri: REDIRECT,
          client_id: "photos",
          client_secret: secret,
        }).toString(),
      });
      assert.equal(tokens.status, 200, await tokens.clone().text());
      return await tokens.json() as { access_token: string; refresh_token: string };
    };
    const refresh = (token: string) =>
      beds.app.request("/oidc/token", {
        method: "POST",
        headers: FORM,
        body: new URLSearchParams({
          grant_type: "refresh_token",
          refresh_token: token,
          client_id: "photos",
          client_secret: secret,
        }).toString(),
      });
    const list = async (headers: Record<string, string> = bearer) => {
      const res = await beds.app.request("/profile/apps", { headers });
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(res.headers.get("Cache-Control"), "no-store");
      return (await res.json()).apps as Record<string, unknown>[];
    };

    let tokens = await authorize();

    await t.step("the user sees the client with its name, scopes, grant and last use", async () => {
      bed.clock.advance(5_000);
      const refreshed = await refresh(tokens.refresh_token);
      assert.equal(refreshed.status, 200);
      tokens = await refreshed.json();
      const apps = await list();
      assert.equal(apps.length, 1);
      assert.equal(apps[0].clientId, "photos");
      assert.equal(apps[0].clientName, "Photo Album");
      assert.deepEqual(apps[0].scopes, ["email", "offline_access", "openid"]);
      assert.equal(apps[0].activeSessions, 1);
      assert.equal(apps[0].lastUsedAt, new Date(bed.clock.now()).toISOString());
      assert.ok(Date.parse(apps[0].grantedAt as string) < bed.clock.now());
      // Another user sees none of it.
      assert.deepEqual(await list({ Authorization: `Bearer ${otherBrowser.tokens.accessToken}` }), []);
    });

    await t.step(
      "the fence: no caller, an app's token, impersonation, an organization admin, another realm",
      async () => {
        assert.equal((await beds.app.request("/profile/apps")).status, 401);
        const appToken = await beds.app.request("/profile/apps", {
          headers: { Authorization: `Bearer ${tokens.access_token}` },
        });
        assert.ok([401, 403].includes(appToken.status), String(appToken.status));
        const byApp = await beds.app.request("/profile/apps/photos", {
          method: "DELETE",
          headers: { Authorization: `Bearer ${tokens.access_token}` },
        });
        assert.ok([401, 403].includes(byApp.status), String(byApp.status));
        const { token: impersonating } = await bed.auth.tokens.mint("at+svc", {
          aud: bed.config.server.baseUrl,
          realm: realmId,
          sub: user.id,
          sid: browser.session.id,
          mfa: "Password",
          act: { sub: beds.admin.users.global, imp: crypto.randomUUID() },
        });
        const impersonated = await beds.app.request("/profile/apps/photos", {
          method: "DELETE",
          headers: { Authorization: `Bearer ${impersonating}` },
        });
        assert.ok([401, 403].includes(impersonated.status), String(impersonated.status));
        // An organization administrator and another realm's administrator reach nothing of the user's.
        const chain = await beds.admin.chainLength();
        const orgAdmin = { Authorization: `Bearer ${beds.admin.tokens.orgA}` };
        assert.deepEqual(await list(orgAdmin), []);
        const byOrgAdmin = await beds.app.request("/profile/apps/photos", {
          method: "DELETE",
          headers: orgAdmin,
        });
        assert.equal(byOrgAdmin.status, 204, "a no-op: the administrator's own (empty) access");
        const foreign = await otherRealm(beds.admin);
        const foreignHeaders = { Authorization: `Bearer ${foreign.token}` };
        assert.equal((await beds.app.request("/profile/apps", { headers: foreignHeaders })).status, 404);
        const byForeign = await beds.app.request("/profile/apps/photos", {
          method: "DELETE",
          headers: foreignHeaders,
        });
        assert.equal(byForeign.status, 404);
        assert.equal(await beds.admin.chainLength(), chain, "no entry");
        assert.equal((await list()).length, 1, "nothing was revoked");
        const unknown = await beds.app.request("/profile/apps/nope", { method: "DELETE", headers: bearer });
        assert.equal(unknown.status, 404);
        const malformed = await beds.app.request("/profile/apps/%00x", { method: "DELETE", headers: bearer });
        assert.ok([400, 404].includes(malformed.status), "U+0000 is refused");
        const long = await beds.app.request(`/profile/apps/${"a".repeat(200)}`, {
          method: "DELETE",
          headers: bearer,
        });
        assert.equal(long.status, 404);
      },
    );

    await t.step("revocation: 20 at once give one audit entry; tokens and consent end", async () => {
      const chain = await beds.admin.chainLength();
      const answers = await Promise.all(
        Array.from(
          { length: 20 },
          () => beds.app.request("/profile/apps/photos", { method: "DELETE", headers: bearer }),
        ),
      );
      assert.ok(answers.every((res) => res.status === 204), answers.map((r) => r.status).join());
      assert.equal(await beds.admin.chainLength(), chain + 1, "one entry");
      assert.equal(bed.events.filter((e) => e.kind === "oidc.app_access_revoked").length, 1);
      assert.deepEqual(await list(), []);
      assert.equal((await refresh(tokens.refresh_token)).status, 400, "the refresh token is revoked");
      const userinfo = await beds.app.request("/oidc/userinfo", {
        headers: { Authorization: `Bearer ${tokens.access_token}` },
      });
      assert.equal(userinfo.status, 401, "the access token stopped");
      const [consent] = await bed.database.db.selectFrom("oidc_provider_consents" as never).selectAll()
        .where("user_id" as never, "=", user.id as never).execute();
      assert.equal(consent, undefined, "consent is gone: the next authorization asks again");
      // The user's own session is untouched.
      assert.notEqual(await bed.storage.sessions.getActive(browser.session.id), null);
      // Again: nothing left, no entry.
      const again = await beds.app.request("/profile/apps/photos", { method: "DELETE", headers: bearer });
      assert.equal(again.status, 204);
      assert.equal(await beds.admin.chainLength(), chain + 1);
    });

    await t.step("the routes are in the served OpenAPI document", async () => {
      const openapi = await (await beds.app.request("/openapi.json")).json();
      assert.ok(openapi.paths["/profile/apps"]?.get);
      assert.ok(openapi.paths["/profile/apps/{clientId}"]?.delete);
    });
  } finally {
    await beds.close();
  }
});
