/**
 * Issue 26, over raw HTTP through the app: pushed authorization requests (RFC 9126), resources
 * with RFC 9068 access tokens (RFC 8707), deletion of a client, and single sign-on for the
 * session's life (the resume hop under the refresh cookie's path).
 */
import { strict as assert } from "node:assert";
import { Validator } from "@seriousme/openapi-schema-validator";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { builtinPlugins } from "../../../plugins/builtin.ts";
import { pluginBed } from "../../support/plugins.ts";
import { seeder } from "../../support/seed.ts";

const REDIRECT = "https://app.example.test/cb";
const FORM = { "Content-Type": "application/x-www-form-urlencoded" };
const API = "https://api.example.test/orders";

Deno.test("oidc-provider: PAR, resources, client deletion and SSO (raw HTTP)", async (t) => {
  const plugin = builtinPlugins().find((candidate) => candidate.name === "oidc-provider")!;
  const beds = await pluginBed([plugin], { SVC_PLUGINS: "oidc-provider" });
  try {
    const { bed, realmId, users } = beds.admin;
    const issuer = bed.config.server.baseUrl;
    // The realm administrator also holds the plugin's permissions (svc:*:* does not cover them).
    const seed = seeder(bed.database.db);
    const role = await seed.role(
      realmId,
      "oidc-admin",
      (plugin.permissions ?? []).map((p) => ({ pattern: p.id })),
    );
    await seed.assign(realmId, role, { kind: "User", id: users.global });
    await bed.snapshots.invalidateAll();
    const makeClient = async (clientId: string, extra: Record<string, unknown> = {}) => {
      const created = await beds.request("POST", "/svc-admin/oidc/clients", {
        body: {
          clientId,
          clientType: "confidential",
          redirectUris: [REDIRECT],
          allowedScopes: ["openid", "email", "offline_access"],
          ...extra,
        },
      });
      assert.equal(created.status, 201, await created.clone().text());
      const json = await created.json();
      return { secret: json.clientSecret as string, id: json.id as string };
    };
    const app = await makeClient("app");
    const strict = await makeClient("strict-app", { requirePushedAuthorizationRequests: true });

    const signIn = async () => {
      const issued = await bed.auth.sessions.signIn({
        realmId,
        userId: users.plain,
        orgId: null,
        mfa: "Password",
      });
      return {
        cookie: `svc_at=${issued.tokens.accessToken}`,
        refresh: issued.tokens.refreshToken,
      };
    };
    const get = (path: string, cookie = "") =>
      beds.app.request(path, { headers: cookie ? { Cookie: cookie } : {} });
    const location = (res: Response) => {
      assert.equal(res.status, 303, `expected a redirect, got ${res.status}`);
      return new URL(res.headers.get("Location")!, issuer);
    };
    const toClient = (res: Response) => {
      const target = location(res);
      assert.equal(`${target.origin}${target.pathname}`, REDIRECT, target.href);
      return target.searchParams;
    };
    const post = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
      beds.app.request(path, {
        method: "POST",
        headers: { ...FORM, ...headers },
        body: new URLSearchParams(fields).toString(),
      });
    const authParams = (extra: Record<string, string> = {}) => ({
      response_type: "code",
      client_id: "app",
      redirect_uri: REDIRECT,
      scope: "openid email",
      state: "st",
      nonce: "n",
      ...extra,
    });
    const push = (fields: Record<string, string>, secret = app.secret) =>
      post("/oidc/par", fields, { Authorization: `Basic ${btoa(`${fields.client_id ?? "app"}:${secret}`)}` });
    const exchange = (code: string, extra: Record<string, string> = {}) =>
      post("/oidc/token", {
        grant_type: "authorization_code",
        code,
        redirect_uri: REDIRECT,
        client_id: "app",
        client_secret: app.secret,
        ...extra,
      });

    await t.step("discovery names the PAR endpoint under the issuer", async () => {
      const metadata = await (await get("/.well-known/openid-configuration")).json();
      assert.equal(metadata.pushed_authorization_request_endpoint, `${issuer}/oidc/par`);
      assert.equal(metadata.require_pushed_authorization_requests, false);
      assert.equal(metadata.issuer, issuer);
    });

    await t.step("the served OpenAPI document has the new routes and stays valid", async () => {
      const openapi = await (await get("/openapi.json")).json();
      const validation = await new Validator().validate(structuredClone(openapi));
      assert.equal(validation.valid, true, JSON.stringify(validation.errors));
      assert.ok(openapi.paths["/oidc/par"].post);
      assert.ok(openapi.paths["/auth/refresh/oidc-resume"].get);
      assert.ok(openapi.paths["/svc-admin/oidc/resources"].get);
      assert.ok(openapi.paths["/svc-admin/oidc/resources"].post);
      for (const method of ["get", "patch", "delete"]) {
        assert.ok(openapi.paths["/svc-admin/oidc/resources/{resourceId}"][method], method);
      }
      assert.ok(openapi.paths["/svc-admin/oidc/clients/{clientRowId}"].delete);
      assert.deepEqual(openapi.paths["/svc-admin/oidc/resources"].post["x-svc-permissions"], [
        "oidc-provider:global:resources-manage",
      ]);
    });

    await t.step("PAR: client authentication, checks as at /oidc/authorize, 201 with a urn", async () => {
      const unauthenticated = await post("/oidc/par", authParams());
      assert.equal(unauthenticated.status, 401);
      assert.equal((await unauthenticated.json()).error, "invalid_client");
      const wrongSecret = await push(authParams(), "soc_wrong");
      assert.equal(wrongSecret.status, 401);
      const withUri = await push(authParams({ request_uri: "urn:ietf:params:oauth:request_uri:x" }));
      assert.equal(withUri.status, 400);
      assert.equal((await withUri.json()).error, "invalid_request");
      const badRedirect = await push(authParams({ redirect_uri: "https://evil.example.test/cb" }));
      assert.equal(badRedirect.status, 400);
      assert.equal((await badRedirect.json()).error, "invalid_request");
      const badScope = await push(authParams({ scope: "email" }));
      assert.equal((await badScope.json()).error, "invalid_scope");
      const otherClient = await push(authParams({ client_id: "strict-app" }));
      assert.equal(otherClient.status, 401, "the form's client_id names the client that authenticates");
      const nul = await push(authParams({ state: "a\u0000b" }));
      assert.equal(nul.status, 400);
      const ok = await push(authParams());
      assert.equal(ok.status, 201, await ok.clone().text());
      assert.equal(ok.headers.get("Cache-Control"), "no-store");
      const body = await ok.json();
      assert.match(body.request_uri, /^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/);
      assert.equal(body.expires_in, 60);
    });

    await t.step("a pushed request gives one code, with its own parameters only", async () => {
      const { request_uri } = await (await push(authParams({ state: "pushed-state" }))).json();
      const { cookie } = await signIn();
      // A parameter outside the pushed request is ignored (RFC 9126 4).
      const query = new URLSearchParams({ client_id: "app", request_uri, state: "outside" });
      const back = toClient(await get(`/oidc/authorize?${query}`, cookie));
      assert.ok(back.get("code"));
      assert.equal(back.get("state"), "pushed-state");
      const tokens = await exchange(back.get("code")!);
      assert.equal(tokens.status, 200);
      // Used: the second use is refused on a page (no redirect to trust any more).
      const again = await get(`/oidc/authorize?${query}`, cookie);
      assert.equal(again.status, 400);
      // Another client cannot use it.
      const { request_uri: other } = await (await push(authParams())).json();
      const stolen = await get(
        `/oidc/authorize?${new URLSearchParams({ client_id: "strict-app", request_uri: other })}`,
        cookie,
      );
      assert.equal(stolen.status, 400);
    });

    await t.step("a pushed request expires unused after expires_in", async () => {
      const { request_uri } = await (await push(authParams())).json();
      bed.clock.advance(61_000);
      const { cookie } = await signIn();
      const late = await get(
        `/oidc/authorize?${new URLSearchParams({ client_id: "app", request_uri })}`,
        cookie,
      );
      assert.equal(late.status, 400);
    });

    await t.step("a pushed request survives the sign-in it sends the browser to", async () => {
      const { request_uri } = await (await push(authParams())).json();
      const first = location(
        await get(`/oidc/authorize?${new URLSearchParams({ client_id: "app", request_uri })}`),
      );
      // No session: the resume hop, then sign-in.
      assert.equal(first.pathname, "/auth/refresh/oidc-resume");
      const signInPage = location(await get(`${first.pathname}${first.search}`));
      assert.match(signInPage.pathname, /\/sign-in$/);
      const returnTo = new URL(signInPage.searchParams.get("returnTo")!);
      // Signing in takes longer than expires_in: the request is already in use.
      bed.clock.advance(120_000);
      const { cookie } = await signIn();
      const back = toClient(await get(`${returnTo.pathname}${returnTo.search}`, cookie));
      assert.ok(back.get("code"));
    });

    await t.step("request_uri not from PAR stays request_uri_not_supported", async () => {
      const { cookie } = await signIn();
      const back = toClient(
        await get(
          `/oidc/authorize?${new URLSearchParams(authParams({ request_uri: "https://app.example.test/r" }))}`,
          cookie,
        ),
      );
      assert.equal(back.get("error"), "request_uri_not_supported");
    });

    await t.step("a client that must push is refused a plain request", async () => {
      const { cookie } = await signIn();
      const plain = toClient(
        await get(`/oidc/authorize?${new URLSearchParams(authParams({ client_id: "strict-app" }))}`, cookie),
      );
      assert.equal(plain.get("error"), "invalid_request");
      const pushed = await push(authParams({ client_id: "strict-app" }), strict.secret);
      assert.equal(pushed.status, 201);
      const { request_uri } = await pushed.json();
      const back = toClient(
        await get(`/oidc/authorize?${new URLSearchParams({ client_id: "strict-app", request_uri })}`, cookie),
      );
      assert.ok(back.get("code"));
      const read = await (await beds.request("GET", `/svc-admin/oidc/clients/${strict.id}`)).json();
      assert.equal(read.requirePushedAuthorizationRequests, true);
    });

    await t.step("prompt=consent in a pushed request ends after the consent (no loop)", async () => {
      const consenting = await makeClient("consenting-app", { requireConsent: true });
      const fields = authParams({ client_id: "consenting-app", prompt: "consent" });
      const { request_uri } = await (await push(fields, consenting.secret)).json();
      const { cookie } = await signIn();
      const query = new URLSearchParams({ client_id: "consenting-app", request_uri });
      const consentUrl = location(await get(`/oidc/authorize?${query}`, cookie));
      assert.equal(consentUrl.pathname, "/oidc/consent");
      const page = await get(`${consentUrl.pathname}${consentUrl.search}`, cookie);
      assert.equal(page.status, 200);
      const html = await page.text();
      const formToken = /name="form" value="([^"]+)"/.exec(html)![1];
      const formCookie = page.headers.get("Set-Cookie")!.split(";")[0];
      const decided = await beds.app.request("/oidc/consent", {
        method: "POST",
        headers: { ...FORM, Cookie: `${cookie}; ${formCookie}` },
        body: new URLSearchParams({
          request: consentUrl.searchParams.toString(),
          form: formToken,
          decision: "allow",
        })
          .toString(),
      });
      const backTo = location(decided);
      assert.equal(backTo.pathname, "/oidc/authorize");
      const back = toClient(await get(`${backTo.pathname}${backTo.search}`, cookie));
      assert.ok(back.get("code"), back.toString());
    });

    let resourceId = "";
    await t.step("resources: admin create, read, list, update; invalid bodies refused", async () => {
      const created = await beds.request("POST", "/svc-admin/oidc/resources", {
        body: {
          identifier: API,
          name: "Orders",
          scopes: ["orders:read", "orders:write"],
          accessTokenTtlSeconds: 300,
        },
      });
      assert.equal(created.status, 201, await created.clone().text());
      const resource = await created.json();
      resourceId = resource.id;
      assert.deepEqual(resource.scopes, ["orders:read", "orders:write"]);
      const again = await beds.request("POST", "/svc-admin/oidc/resources", { body: { identifier: API } });
      assert.equal(again.status, 409);
      for (
        const body of [
          { identifier: "not a uri" },
          { identifier: "https://api.example.test/#frag" },
          { identifier: "https://x.example.test", scopes: ["openid"] },
          { identifier: "https://x.example.test", accessTokenTtlSeconds: 5 },
          { identifier: "https://x.example.test", name: "a\u0000b" },
          { identifier: "https://x.example.test", extra: true },
        ]
      ) {
        const refused = await beds.request("POST", "/svc-admin/oidc/resources", { body });
        assert.equal(refused.status, 400, JSON.stringify(body));
      }
      const list = await (await beds.request("GET", "/svc-admin/oidc/resources")).json();
      assert.equal(list.total, 1);
      const patched = await beds.request("PATCH", `/svc-admin/oidc/resources/${resourceId}`, {
        body: { accessTokenTtlSeconds: 600 },
      });
      assert.equal(patched.status, 200);
      assert.equal((await patched.json()).accessTokenTtlSeconds, 600);
      assert.equal(
        (await beds.request("GET", `/svc-admin/oidc/resources/${crypto.randomUUID()}`)).status,
        404,
      );
    });

    await t.step("an authorization with a resource; at+jwt with resource, at+svc without", async () => {
      const { cookie } = await signIn();
      const unknown = toClient(
        await get(
          `/oidc/authorize?${new URLSearchParams(authParams({ resource: "https://unknown.example.test" }))}`,
          cookie,
        ),
      );
      assert.equal(unknown.get("error"), "invalid_target");
      const fragment = toClient(
        await get(`/oidc/authorize?${new URLSearchParams(authParams({ resource: `${API}#x` }))}`, cookie),
      );
      assert.equal(fragment.get("error"), "invalid_target");
      const codeFor = async () => {
        const back = toClient(
          await get(
            `/oidc/authorize?${new URLSearchParams(
              authParams({ resource: API, scope: "openid email orders:read offline_access" }),
            )}`,
            cookie,
          ),
        );
        assert.ok(back.get("code"), back.toString());
        return back.get("code")!;
      };
      // A resource not granted: invalid_target, and the code is not used up by it.
      const code = await codeFor();
      const wrong = await exchange(code, { resource: "https://other.example.test/api" });
      assert.equal(wrong.status, 400);
      assert.equal((await wrong.json()).error, "invalid_target");
      const tokens = await (await exchange(code, { resource: API })).json();
      assert.equal(decodeProtectedHeader(tokens.access_token).typ, "at+jwt");
      const claims = decodeJwt(tokens.access_token);
      assert.equal(claims.iss, issuer);
      assert.equal(claims.aud, API);
      assert.equal(claims.sub, users.plain);
      assert.equal(claims.client_id, "app");
      assert.equal(claims.scope, "orders:read");
      assert.equal(claims.exp! - claims.iat!, 600);
      assert.equal(typeof claims.jti, "string");
      assert.equal(typeof claims.auth_time, "number");
      assert.equal(tokens.scope, "orders:read");
      assert.equal(tokens.expires_in, 600);
      // The at+jwt is for its resource: userinfo refuses it.
      const userinfo = await beds.app.request("/oidc/userinfo", {
        headers: { Authorization: `Bearer ${tokens.access_token}` },
      });
      assert.equal(userinfo.status, 401);
      // Introspection by its client: active, with the resource as audience.
      const introspected = await (await post("/oidc/introspect", {
        token: tokens.access_token,
        client_id: "app",
        client_secret: app.secret,
      })).json();
      assert.equal(introspected.active, true);
      assert.equal(introspected.aud, API);
      // A refresh with the resource: another at+jwt; without: svc's at+svc, which userinfo takes.
      const refreshed = await (await post("/oidc/token", {
        grant_type: "refresh_token",
        refresh_token: tokens.refresh_token,
        resource: API,
        client_id: "app",
        client_secret: app.secret,
      })).json();
      assert.equal(decodeProtectedHeader(refreshed.access_token).typ, "at+jwt");
      const plain = await (await post("/oidc/token", {
        grant_type: "refresh_token",
        refresh_token: refreshed.refresh_token,
        client_id: "app",
        client_secret: app.secret,
      })).json();
      assert.equal(decodeProtectedHeader(plain.access_token).typ, "at+svc");
      const info = await beds.app.request("/oidc/userinfo", {
        headers: { Authorization: `Bearer ${plain.access_token}` },
      });
      assert.equal(info.status, 200);
      const notGranted = await post("/oidc/token", {
        grant_type: "refresh_token",
        refresh_token: plain.refresh_token,
        resource: "https://other.example.test/api",
        client_id: "app",
        client_secret: app.secret,
      });
      assert.equal((await notGranted.json()).error, "invalid_target");
      // Revoking the at+jwt ends its session: its tokens go inactive.
      assert.equal(
        (await post("/oidc/revoke", {
          token: refreshed.access_token,
          client_id: "app",
          client_secret: app.secret,
        })).status,
        200,
      );
      const after = await (await post("/oidc/introspect", {
        token: refreshed.access_token,
        client_id: "app",
        client_secret: app.secret,
      }))
        .json();
      assert.equal(after.active, false);
    });

    await t.step("a pushed request may name several resources; each token names one", async () => {
      const API2 = "https://api.example.test/invoices";
      const second = await beds.request("POST", "/svc-admin/oidc/resources", {
        body: { identifier: API2, scopes: ["invoices:read"] },
      });
      assert.equal(second.status, 201);
      const body = new URLSearchParams(
        authParams({ scope: "openid orders:read invoices:read offline_access" }),
      );
      body.append("resource", API);
      body.append("resource", API2);
      const pushed = await beds.app.request("/oidc/par", {
        method: "POST",
        headers: { ...FORM, Authorization: `Basic ${btoa(`app:${app.secret}`)}` },
        body: body.toString(),
      });
      assert.equal(pushed.status, 201, await pushed.clone().text());
      const { request_uri } = await pushed.json();
      const { cookie } = await signIn();
      const back = toClient(
        await get(`/oidc/authorize?${new URLSearchParams({ client_id: "app", request_uri })}`, cookie),
      );
      const tokens = await (await exchange(back.get("code")!, { resource: API2 })).json();
      assert.equal(decodeJwt(tokens.access_token).aud, API2);
      assert.equal(decodeJwt(tokens.access_token).scope, "invoices:read");
      const other = await (await post("/oidc/token", {
        grant_type: "refresh_token",
        refresh_token: tokens.refresh_token,
        resource: API,
        client_id: "app",
        client_secret: app.secret,
      })).json();
      assert.equal(decodeJwt(other.access_token).aud, API);
      assert.equal(decodeJwt(other.access_token).scope, "orders:read");
      // Two resources in one token request: refused (one audience per access token).
      const two = new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: other.refresh_token,
        client_id: "app",
        client_secret: app.secret,
      });
      two.append("resource", API);
      two.append("resource", API2);
      const refused = await beds.app.request("/oidc/token", {
        method: "POST",
        headers: FORM,
        body: two.toString(),
      });
      assert.equal(refused.status, 400);
      // A repeated field other than resource is refused at the PAR endpoint.
      const repeated = new URLSearchParams(authParams());
      repeated.append("state", "again");
      const bad = await beds.app.request("/oidc/par", {
        method: "POST",
        headers: { ...FORM, Authorization: `Basic ${btoa(`app:${app.secret}`)}` },
        body: repeated.toString(),
      });
      assert.equal(bad.status, 400);
    });

    await t.step("a resource is deleted through the admin API", async () => {
      assert.equal((await beds.request("DELETE", `/svc-admin/oidc/resources/${resourceId}`)).status, 204);
      assert.equal((await beds.request("DELETE", `/svc-admin/oidc/resources/${resourceId}`)).status, 404);
      const { cookie } = await signIn();
      const back = toClient(
        await get(`/oidc/authorize?${new URLSearchParams(authParams({ resource: API }))}`, cookie),
      );
      assert.equal(back.get("error"), "invalid_target");
    });

    await t.step("deleting a client ends its tokens (audited)", async () => {
      const doomed = await makeClient("doomed-app");
      const { cookie } = await signIn();
      const back = toClient(
        await get(
          `/oidc/authorize?${new URLSearchParams(
            authParams({ client_id: "doomed-app", scope: "openid offline_access" }),
          )}`,
          cookie,
        ),
      );
      const tokens = await (await post("/oidc/token", {
        grant_type: "authorization_code",
        code: back.get("code")!,
        redirect_uri: REDIRECT,
        client_id: "doomed-app",
        client_secret: doomed.secret,
      })).json();
      const sessionId = decodeJwt(tokens.access_token).sid as string;
      assert.ok(await bed.storage.sessions.getActive(sessionId));
      const deleted = await beds.request("DELETE", `/svc-admin/oidc/clients/${doomed.id}`);
      assert.equal(deleted.status, 204);
      assert.equal(await bed.storage.sessions.getActive(sessionId), null);
      assert.equal((await beds.request("GET", `/svc-admin/oidc/clients/${doomed.id}`)).status, 404);
      assert.equal((await beds.request("DELETE", `/svc-admin/oidc/clients/${doomed.id}`)).status, 404);
      const refresh = await post("/oidc/token", {
        grant_type: "refresh_token",
        refresh_token: tokens.refresh_token,
        client_id: "doomed-app",
        client_secret: doomed.secret,
      });
      assert.equal(refresh.status, 401);
      const entry = (await bed.storage.adminAudit.head(realmId))!;
      assert.equal(entry.action, "oidc.client.delete");
      // A new client with the same client id does not inherit the old one's consents.
      const consenting = await makeClient("consent-once", { requireConsent: true });
      await bed.storage.pluginSql.query(
        `INSERT INTO oidc_provider_consents (realm_id, user_id, client_id, scopes, granted_at) VALUES ($1, $2, $3, $4, $5)`,
        [realmId, users.plain, "consent-once", ["openid", "email"], new Date(bed.clock.now())],
      );
      const consented = location(
        await get(
          `/oidc/authorize?${new URLSearchParams(authParams({ client_id: "consent-once" }))}`,
          cookie,
        ),
      );
      assert.equal(`${consented.origin}${consented.pathname}`, REDIRECT, "the consent counts for its client");
      assert.equal((await beds.request("DELETE", `/svc-admin/oidc/clients/${consenting.id}`)).status, 204);
      bed.clock.advance(1_000);
      await makeClient("consent-once", { requireConsent: true });
      const asked = location(
        await get(
          `/oidc/authorize?${new URLSearchParams(authParams({ client_id: "consent-once" }))}`,
          cookie,
        ),
      );
      assert.equal(asked.pathname, "/oidc/consent", "the new client asks again");
    });
    await t.step("SSO: an expired access-token cookie with a live session resumes it", async () => {
      const { cookie, refresh } = await signIn();
      bed.clock.advance(11 * 60_000);
      const query = new URLSearchParams(authParams());
      const hop = location(await get(`/oidc/authorize?${query}`, cookie));
      assert.equal(hop.pathname, "/auth/refresh/oidc-resume");
      // prompt=login goes straight to sign-in.
      const login = location(
        await get(`/oidc/authorize?${new URLSearchParams(authParams({ prompt: "login" }))}`, cookie),
      );
      assert.match(login.pathname, /\/sign-in$/);
      const resumed = await get(`${hop.pathname}${hop.search}`, `svc_rt=${refresh}`);
      const back = location(resumed);
      assert.equal(back.pathname, "/oidc/authorize");
      assert.equal(back.searchParams.get("svc_resumed"), "1");
      const fresh = resumed.headers.getSetCookie().find((line) => line.startsWith("svc_at="))!.split(";")[0];
      const code = toClient(await get(`${back.pathname}${back.search}`, fresh)).get("code");
      assert.ok(code);
      // The rotated refresh token is used up: presenting it again is a replay, which ends the session.
      const replay = location(await get(`${hop.pathname}${hop.search}`, `svc_rt=${refresh}`));
      assert.match(replay.pathname, /\/sign-in$/);
    });

    await t.step("SSO: past the session's idle timeout, sign-in; forged hops refused", async () => {
      const { refresh } = await signIn();
      bed.clock.advance((bed.config.sessions.idleTimeoutSeconds + 60) * 1000);
      const hop = location(await get(`/oidc/authorize?${new URLSearchParams(authParams())}`));
      const signInPage = location(await get(`${hop.pathname}${hop.search}`, `svc_rt=${refresh}`));
      assert.match(signInPage.pathname, /\/sign-in$/);
      assert.equal((await get("/auth/refresh/oidc-resume?r=forged")).status, 400);
      // prompt=none: the hop ends at the client with login_required.
      const silent = location(
        await get(`/oidc/authorize?${new URLSearchParams(authParams({ prompt: "none" }))}`),
      );
      assert.equal(toClient(await get(`${silent.pathname}${silent.search}`)).get("error"), "login_required");
    });
  } finally {
    await beds.close();
  }
});
