/**
 * Issue 26 through relying-party libraries nobody here wrote, with their fetch routed into the
 * app: openid-client 6 and oauth4webapi 3 push authorization requests (RFC 9126) and get RFC 9068
 * access tokens for a resource (RFC 8707), which oauth4webapi's `validateJwtAccessToken` (what a
 * resource server runs) accepts; and openid-client's discovery under `SVC_PATH_BASE=/idp`, with
 * the base only in the path base and with it also in `SVC_BASE_URL`.
 */
import { strict as assert } from "node:assert";
import * as client from "openid-client";
import * as oauth from "oauth4webapi";
import { builtinPlugins } from "../../../plugins/builtin.ts";
import { type PluginBed, pluginBed } from "../../support/plugins.ts";
import { seeder } from "../../support/seed.ts";

const REDIRECT = "https://rp.example.test/cb";
const API = "https://api.example.test/orders";
const plugin = () => builtinPlugins().find((candidate) => candidate.name === "oidc-provider")!;

/** A fetch that answers from the bed's app (the libraries' requests never leave the process). */
function appFetch(beds: PluginBed) {
  // deno-lint-ignore no-explicit-any
  return async (url: string, init: any): Promise<Response> => {
    const target = new URL(url);
    return await beds.app.request(`${target.pathname}${target.search}`, init as RequestInit);
  };
}

/** A browser of the bed's plain user, signed in now: the redirect of an authorization URL. */
async function authorizeAsUser(beds: PluginBed, url: URL): Promise<URL> {
  const { bed, realmId, users } = beds.admin;
  const issued = await bed.auth.sessions.signIn({
    realmId,
    userId: users.plain,
    orgId: null,
    mfa: "Password",
  });
  const res = await beds.app.request(`${url.pathname}${url.search}`, {
    headers: { Cookie: `svc_at=${issued.tokens.accessToken}` },
  });
  assert.equal(res.status, 303, await res.text());
  const back = new URL(res.headers.get("Location")!);
  assert.equal(`${back.origin}${back.pathname}`, REDIRECT, back.href);
  return back;
}

Deno.test("oidc-provider: PAR and resource tokens through openid-client and oauth4webapi", async (t) => {
  const beds = await pluginBed([plugin()], { SVC_PLUGINS: "oidc-provider" });
  try {
    const { bed, realmId, users } = beds.admin;
    const seed = seeder(bed.database.db);
    const role = await seed.role(
      realmId,
      "oidc-admin",
      (plugin().permissions ?? []).map((p) => ({ pattern: p.id })),
    );
    await seed.assign(realmId, role, { kind: "User", id: users.global });
    await bed.snapshots.invalidateAll();
    const issuer = new URL(bed.config.server.baseUrl);
    const fetcher = appFetch(beds);
    const created = await beds.request("POST", "/svc-admin/oidc/clients", {
      body: {
        clientId: "rp",
        clientType: "confidential",
        redirectUris: [REDIRECT],
        allowedScopes: ["openid", "email", "offline_access"],
        requirePushedAuthorizationRequests: true,
      },
    });
    assert.equal(created.status, 201);
    const secret = (await created.json()).clientSecret as string;
    const resource = await beds.request("POST", "/svc-admin/oidc/resources", {
      body: { identifier: API, scopes: ["orders:read"], accessTokenTtlSeconds: 300 },
    });
    assert.equal(resource.status, 201);
    // The libraries check times against the real clock: the bed's clock moves to now.
    bed.clock.set(Date.now());

    await t.step("openid-client: PAR, code flow with PKCE, at+jwt for the resource", async () => {
      const config = await client.discovery(issuer, "rp", secret, client.ClientSecretBasic(secret), {
        execute: [client.allowInsecureRequests],
        [client.customFetch]: fetcher,
      });
      config[client.customFetch] = fetcher;
      const verifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const nonce = client.randomNonce();
      const url = await client.buildAuthorizationUrlWithPAR(config, {
        redirect_uri: REDIRECT,
        scope: "openid email orders:read",
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256",
        state,
        nonce,
        resource: API,
      });
      assert.deepEqual([...url.searchParams.keys()].sort(), ["client_id", "request_uri"]);
      const callback = await authorizeAsUser(beds, url);
      const tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: verifier,
        expectedState: state,
        expectedNonce: nonce,
      }, { resource: API });
      assert.equal(tokens.claims()!.sub, users.plain);
      // What the API runs: oauth4webapi's RFC 9068 validation against the published keys.
      const as = config.serverMetadata();
      const claims = await oauth.validateJwtAccessToken(
        as,
        new Request(API, { headers: { Authorization: `Bearer ${tokens.access_token}` } }),
        API,
        { [oauth.customFetch]: fetcher, [oauth.allowInsecureRequests]: true },
      );
      assert.equal(claims.client_id, "rp");
      assert.equal(claims.scope, "orders:read");
      // Another audience is refused by the validator.
      await assert.rejects(
        oauth.validateJwtAccessToken(
          as,
          new Request(API, { headers: { Authorization: `Bearer ${tokens.access_token}` } }),
          "https://other.example.test/api",
          { [oauth.customFetch]: fetcher, [oauth.allowInsecureRequests]: true },
        ),
      );
      // A plain (not pushed) request of this client is refused.
      const plain = client.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT,
        scope: "openid",
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256",
      });
      const refused = await authorizeAsUser(beds, plain);
      assert.equal(refused.searchParams.get("error"), "invalid_request");
    });

    await t.step("oauth4webapi: PAR, code flow, at+jwt validated with validateJwtAccessToken", async () => {
      const options = { [oauth.customFetch]: fetcher, [oauth.allowInsecureRequests]: true };
      const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, options));
      assert.equal(as.pushed_authorization_request_endpoint, `${issuer.origin}/oidc/par`);
      const rp: oauth.Client = { client_id: "rp" };
      const auth = oauth.ClientSecretPost(secret);
      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const pushed = await oauth.processPushedAuthorizationResponse(
        as,
        rp,
        await oauth.pushedAuthorizationRequest(as, rp, auth, {
          redirect_uri: REDIRECT,
          response_type: "code",
          scope: "openid orders:read offline_access",
          code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
          code_challenge_method: "S256",
          state,
          resource: API,
        }, options),
      );
      assert.equal(pushed.expires_in, 60);
      const url = new URL(as.authorization_endpoint!);
      url.searchParams.set("client_id", "rp");
      url.searchParams.set("request_uri", pushed.request_uri);
      const callback = await authorizeAsUser(beds, url);
      const params = oauth.validateAuthResponse(as, rp, callback, state);
      const response = await oauth.processAuthorizationCodeResponse(
        as,
        rp,
        await oauth.authorizationCodeGrantRequest(as, rp, auth, params, REDIRECT, verifier, {
          ...options,
          additionalParameters: { resource: API },
        }),
      );
      const claims = await oauth.validateJwtAccessToken(
        as,
        new Request(API, { headers: { Authorization: `Bearer ${response.access_token}` } }),
        API,
        options,
      );
      assert.equal(claims.sub, users.plain);
      // A refresh for the resource: another at+jwt the validator accepts.
      const refreshed = await oauth.processRefreshTokenResponse(
        as,
        rp,
        await oauth.refreshTokenGrantRequest(as, rp, auth, response.refresh_token!, {
          ...options,
          additionalParameters: { resource: API },
        }),
      );
      const again = await oauth.validateJwtAccessToken(
        as,
        new Request(API, { headers: { Authorization: `Bearer ${refreshed.access_token}` } }),
        API,
        options,
      );
      assert.equal(again.client_id, "rp");
      // The request_uri was used: a second authorization with it is refused.
      const { bed: b, realmId: r, users: u } = beds.admin;
      const issued = await b.auth.sessions.signIn({
        realmId: r,
        userId: u.plain,
        orgId: null,
        mfa: "Password",
      });
      const reused = await beds.app.request(`${url.pathname}${url.search}`, {
        headers: { Cookie: `svc_at=${issued.tokens.accessToken}` },
      });
      assert.equal(reused.status, 400);
    });
  } finally {
    await beds.close();
  }
});

Deno.test("oidc-provider: openid-client discovery under SVC_PATH_BASE (both setups)", async (t) => {
  for (
    const [name, env] of [
      ["the base in SVC_PATH_BASE only", { SVC_PATH_BASE: "/idp" }],
      ["the base also in SVC_BASE_URL", { SVC_PATH_BASE: "/idp", SVC_BASE_URL: "http://localhost:8080/idp" }],
    ] as const
  ) {
    await t.step(name, async () => {
      const beds = await pluginBed([plugin()], { SVC_PLUGINS: "oidc-provider", ...env });
      try {
        const fetcher = appFetch(beds);
        const issuer = new URL("http://localhost:8080/idp");
        const created = await beds.request("POST", "/idp/svc-admin/oidc/clients", {
          body: { clientId: "rp", clientType: "confidential", redirectUris: [REDIRECT] },
        });
        assert.equal(created.status, 201, await created.clone().text());
        const secret = (await created.json()).clientSecret as string;
        beds.admin.bed.clock.set(Date.now());
        const config = await client.discovery(issuer, "rp", secret, client.ClientSecretBasic(secret), {
          execute: [client.allowInsecureRequests],
          [client.customFetch]: fetcher,
        });
        config[client.customFetch] = fetcher;
        const metadata = config.serverMetadata();
        assert.equal(metadata.issuer, "http://localhost:8080/idp");
        for (
          const key of [
            "authorization_endpoint",
            "token_endpoint",
            "userinfo_endpoint",
            "jwks_uri",
            "end_session_endpoint",
            "pushed_authorization_request_endpoint",
          ] as const
        ) {
          const value = metadata[key] as string;
          assert.ok(value.startsWith("http://localhost:8080/idp/"), `${key}: ${value}`);
          assert.ok(!value.includes("/idp/idp"), `${key}: ${value}`);
        }
        // The whole flow works there: the code, then tokens whose ID token has the issuer.
        const verifier = client.randomPKCECodeVerifier();
        const url = client.buildAuthorizationUrl(config, {
          redirect_uri: REDIRECT,
          scope: "openid",
          code_challenge: await client.calculatePKCECodeChallenge(verifier),
          code_challenge_method: "S256",
          state: "s",
        });
        assert.equal(url.pathname, "/idp/oidc/authorize");
        const callback = await authorizeAsUser(beds, url);
        const tokens = await client.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: verifier,
          expectedState: "s",
        });
        assert.equal(tokens.claims()!.iss, "http://localhost:8080/idp");
        // The RFC 8414 document answers under the base as well.
        const as = await fetcher("http://localhost:8080/idp/.well-known/oauth-authorization-server", {});
        assert.equal((await as.json()).issuer, "http://localhost:8080/idp");
      } finally {
        await beds.close();
      }
    });
  }
});
