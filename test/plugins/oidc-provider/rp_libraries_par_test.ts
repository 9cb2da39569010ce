/**
 * Issue 26 through relying-party libraries nobody here wrote, against the real server (`svc start`
 * as a subprocess on Postgres, every request over TCP): openid-client 6 and oauth4webapi 3 push
 * authorization requests (RFC 9126) and get RFC 9068 access tokens for a resource (RFC 8707),
 * which oauth4webapi's `validateJwtAccessToken` (what a resource server runs) accepts against the
 * published keys; then discovery, the code flow and a refresh through both libraries under
 * `SVC_PATH_BASE=/idp`, with `SVC_BASE_URL` written without the base and with it.
 *
 * Nothing here stays in process: these flows need neither the injected clock (the libraries check
 * times against the real clock, which the server uses too) nor svc's internals (what the admin API
 * shows is enough). PAR expiry, which needs the clock, is in `par_resources_test.ts`.
 */
import { strict as assert } from "node:assert";
import * as client from "openid-client";
import * as oauth from "oauth4webapi";
import { authorizeOverHttp } from "../../support/oidc-browser.ts";
import { httpClient, startTestServer } from "../../support/server.ts";

const REDIRECT = "https://rp.example.test/cb";
const API = "https://api.example.test/orders";
const USER = { email: "plain@example.test", password: "plain's long password" };

type Server = Awaited<ReturnType<typeof startTestServer>>;

/** Signs the bootstrap administrator in and creates the plain user the flows sign in as; answers both. */
async function setUp(server: Server, baseUrl = server.url) {
  const http = httpClient(baseUrl);
  const admin = await http.signIn(server.adminEmail, server.adminPassword);
  const made = await http.call("POST", "/svc-admin/users", admin, { ...USER, displayName: "Plain" });
  assert.equal(made.status, 201, JSON.stringify(made.json));
  return { http, admin, userId: made.json.id as string };
}

/** A port free now on 127.0.0.1, for a server whose public URL must be known before it starts. */
function freePort(): number {
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  return port;
}

/** A request to the API carrying `token`, as the resource server receives it. */
const apiRequest = (token: string) => new Request(API, { headers: { Authorization: `Bearer ${token}` } });

Deno.test("oidc-provider: PAR and resource tokens through openid-client and oauth4webapi (real server)", async (t) => {
  const server = await startTestServer({ SVC_PLUGINS: "oidc-provider" });
  try {
    const { http, admin, userId } = await setUp(server);
    const issuer = new URL(server.issuer);
    const created = await http.call("POST", "/svc-admin/oidc/clients", admin, {
      clientId: "rp",
      clientType: "confidential",
      redirectUris: [REDIRECT],
      allowedScopes: ["openid", "email", "offline_access"],
      requirePushedAuthorizationRequests: true,
    });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    assert.equal(created.json.requirePushedAuthorizationRequests, true);
    const secret = created.json.clientSecret as string;
    // The plugin's resource permissions are not the bootstrap administrator's: a role grants them.
    const me = await http.call("GET", "/profile/me", admin);
    const role = await http.call("POST", "/svc-admin/roles", admin, {
      key: "oidc-resources",
      displayName: "OIDC resources",
      grants: ["oidc-provider:global:resources-read", "oidc-provider:global:resources-manage"]
        .map((pattern) => ({ pattern, effect: "Allow" })),
    });
    assert.equal(role.status, 201, JSON.stringify(role.json));
    const assigned = await http.call("POST", "/svc-admin/role-assignments", admin, {
      roleId: role.json.id,
      principalKind: "User",
      principalId: me.json.id,
    });
    assert.equal(assigned.status, 201, JSON.stringify(assigned.json));
    const resource = await http.call("POST", "/svc-admin/oidc/resources", admin, {
      identifier: API,
      scopes: ["orders:read"],
      accessTokenTtlSeconds: 300,
    });
    assert.equal(resource.status, 201, JSON.stringify(resource.json));
    // One browser for the file: its session (cookies) carries from one flow to the next.
    const browser = new Map<string, string>();
    const authorize = (url: URL) =>
      authorizeOverHttp(url, USER.email, USER.password, REDIRECT, { jar: browser });

    await t.step("openid-client: PAR, code flow with PKCE, at+jwt for the resource", async () => {
      const config = await client.discovery(issuer, "rp", secret, client.ClientSecretBasic(secret), {
        execute: [client.allowInsecureRequests],
      });
      assert.equal(config.serverMetadata().require_pushed_authorization_requests, false);
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
      assert.match(url.searchParams.get("request_uri")!, /^urn:ietf:params:oauth:request_uri:/);
      const callback = await authorize(url);
      const tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: verifier,
        expectedState: state,
        expectedNonce: nonce,
      }, { resource: API });
      assert.equal(tokens.claims()!.sub, userId);
      assert.equal(tokens.claims()!.iss, server.issuer);
      // What the API runs: oauth4webapi's RFC 9068 validation against the published keys.
      const as = config.serverMetadata();
      const options = { [oauth.allowInsecureRequests]: true };
      const claims = await oauth.validateJwtAccessToken(as, apiRequest(tokens.access_token), API, options);
      assert.equal(claims.client_id, "rp");
      assert.equal(claims.scope, "orders:read");
      assert.equal(claims.sub, userId);
      assert.equal(claims.iss, server.issuer);
      // Another audience is refused by the validator.
      await assert.rejects(
        oauth.validateJwtAccessToken(
          as,
          apiRequest(tokens.access_token),
          "https://other.example.test/api",
          options,
        ),
        (error: Error) => {
          assert.match(String(error), /aud/);
          return true;
        },
      );
      // A plain (not pushed) request of this client is refused, to the client.
      const plain = client.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT,
        scope: "openid",
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256",
      });
      const refused = await authorize(plain);
      assert.equal(refused.searchParams.get("error"), "invalid_request");
      assert.equal(refused.searchParams.get("code"), null);
    });

    await t.step("oauth4webapi: PAR, code flow, at+jwt validated with validateJwtAccessToken", async () => {
      const options = { [oauth.allowInsecureRequests]: true };
      const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, options));
      assert.equal(as.pushed_authorization_request_endpoint, `${server.issuer}/oidc/par`);
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
      const callback = await authorize(url);
      const params = oauth.validateAuthResponse(as, rp, callback, state);
      const response = await oauth.processAuthorizationCodeResponse(
        as,
        rp,
        await oauth.authorizationCodeGrantRequest(as, rp, auth, params, REDIRECT, verifier, {
          ...options,
          additionalParameters: { resource: API },
        }),
      );
      const claims = await oauth.validateJwtAccessToken(as, apiRequest(response.access_token), API, options);
      assert.equal(claims.sub, userId);
      assert.equal(claims.scope, "orders:read");
      assert.ok(response.refresh_token, "offline_access gives a refresh token");
      // A refresh for the resource: another at+jwt the validator accepts.
      const refreshed = await oauth.processRefreshTokenResponse(
        as,
        rp,
        await oauth.refreshTokenGrantRequest(as, rp, auth, response.refresh_token!, {
          ...options,
          additionalParameters: { resource: API },
        }),
      );
      assert.notEqual(refreshed.access_token, response.access_token);
      const again = await oauth.validateJwtAccessToken(as, apiRequest(refreshed.access_token), API, options);
      assert.equal(again.client_id, "rp");
      assert.equal(again.sub, userId);
      // The request_uri was used: a second authorization with it, by the same signed-in browser, is refused.
      assert.ok(browser.has("svc_at"), "the browser is signed in");
      const reused = await fetch(url, {
        redirect: "manual",
        headers: { Cookie: [...browser].map(([name, value]) => `${name}=${value}`).join("; ") },
      });
      assert.equal(reused.status, 400, await reused.clone().text());
      assert.equal(reused.headers.get("Location"), null);
      await reused.body?.cancel();
    });
  } finally {
    await server.close();
  }
});

/** The discovery members that are the provider's endpoints, and their paths under the issuer. */
const ENDPOINTS = {
  authorization_endpoint: "/oidc/authorize",
  token_endpoint: "/oidc/token",
  userinfo_endpoint: "/oidc/userinfo",
  jwks_uri: "/.well-known/jwks.json",
  end_session_endpoint: "/oidc/logout",
  pushed_authorization_request_endpoint: "/oidc/par",
  revocation_endpoint: "/oidc/revoke",
  introspection_endpoint: "/oidc/introspect",
} as const;

/** The issuer is `issuer` exactly, and every URL in the metadata is under it with `/idp` exactly once. */
function assertUnderBase(metadata: Record<string, unknown>, issuer: string): void {
  assert.equal(metadata.issuer, issuer);
  for (const [key, path] of Object.entries(ENDPOINTS)) assert.equal(metadata[key], `${issuer}${path}`, key);
  for (const [key, value] of Object.entries(metadata)) {
    if (typeof value !== "string" || !/^https?:/.test(value)) continue;
    assert.ok(value === issuer || value.startsWith(`${issuer}/`), `${key}: ${value}`);
    assert.equal(value.split("/idp").length, 2, `${key} carries /idp once: ${value}`);
  }
}

Deno.test("oidc-provider: discovery, code flow and refresh under SVC_PATH_BASE through both libraries (real server)", async (t) => {
  for (const withBase of [false, true]) {
    await t.step(`SVC_BASE_URL ${withBase ? "with" : "without"} the path base`, async (t) => {
      // The public URL names the port: a free one, chosen before the server starts.
      const port = freePort();
      const origin = `http://127.0.0.1:${port}`;
      const issuer = `${origin}/idp`;
      const server = await startTestServer({
        SVC_PLUGINS: "oidc-provider",
        SVC_HOST: "127.0.0.1",
        SVC_PORT: String(port),
        SVC_PATH_BASE: "/idp",
        SVC_BASE_URL: withBase ? issuer : origin,
      });
      try {
        // svc listens under the base: its address is the issuer.
        assert.equal(server.url, issuer);
        const { http, admin, userId } = await setUp(server);
        const created = await http.call("POST", "/svc-admin/oidc/clients", admin, {
          clientId: "rp",
          clientType: "confidential",
          redirectUris: [REDIRECT],
          allowedScopes: ["openid", "email", "offline_access"],
        });
        assert.equal(created.status, 201, JSON.stringify(created.json));
        const secret = created.json.clientSecret as string;
        // Nothing of the provider is served outside the base.
        for (
          const path of ["/.well-known/openid-configuration", "/oidc/authorize", "/idp/idp/oidc/authorize"]
        ) {
          const outside = await fetch(`${origin}${path}`);
          assert.equal(outside.status, 404, path);
          await outside.body?.cancel();
        }
        // The RFC 8414 document answers under the base with the same issuer.
        const rfc8414 = await fetch(`${issuer}/.well-known/oauth-authorization-server`);
        assert.equal(rfc8414.status, 200);
        assertUnderBase(await rfc8414.json(), issuer);

        // A browser's hops all stay under the base (sign-in page, its login request, the session hop).
        const authorize = (url: URL) =>
          authorizeOverHttp(url, USER.email, USER.password, REDIRECT, {
            onHop(hop) {
              assert.equal(hop.origin, origin, hop.href);
              assert.ok(hop.pathname.startsWith("/idp/") && !hop.pathname.startsWith("/idp/idp/"), hop.href);
            },
          });

        await t.step("openid-client: discovery, code flow, refresh", async () => {
          const config = await client.discovery(
            new URL(issuer),
            "rp",
            secret,
            client.ClientSecretBasic(secret),
            {
              execute: [client.allowInsecureRequests],
            },
          );
          assertUnderBase(config.serverMetadata() as Record<string, unknown>, issuer);
          const verifier = client.randomPKCECodeVerifier();
          const state = client.randomState();
          const nonce = client.randomNonce();
          const url = client.buildAuthorizationUrl(config, {
            redirect_uri: REDIRECT,
            scope: "openid email offline_access",
            code_challenge: await client.calculatePKCECodeChallenge(verifier),
            code_challenge_method: "S256",
            state,
            nonce,
          });
          assert.equal(url.pathname, "/idp/oidc/authorize");
          const callback = await authorize(url);
          assert.equal(callback.searchParams.get("iss"), issuer);
          const tokens = await client.authorizationCodeGrant(config, callback, {
            pkceCodeVerifier: verifier,
            expectedState: state,
            expectedNonce: nonce,
          });
          assert.equal(tokens.claims()!.iss, issuer);
          assert.equal(tokens.claims()!.sub, userId);
          const info = await client.fetchUserInfo(config, tokens.access_token, userId);
          assert.equal(info.email, USER.email);
          const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
          assert.ok(refreshed.refresh_token && refreshed.refresh_token !== tokens.refresh_token);
          assert.equal(refreshed.claims()!.iss, issuer);
          assert.equal(refreshed.claims()!.sub, userId);
        });

        await t.step("oauth4webapi: discovery, code flow, refresh", async () => {
          const options = { [oauth.allowInsecureRequests]: true };
          const as = await oauth.processDiscoveryResponse(
            new URL(issuer),
            await oauth.discoveryRequest(new URL(issuer), options),
          );
          assertUnderBase(as as unknown as Record<string, unknown>, issuer);
          // RFC 8414's own discovery inserts the well-known name before the issuer's path.
          const inserted = await oauth.processDiscoveryResponse(
            new URL(issuer),
            await oauth.discoveryRequest(new URL(issuer), { ...options, algorithm: "oauth2" }),
          );
          assert.deepEqual(inserted, as);
          const rp: oauth.Client = { client_id: "rp" };
          const auth = oauth.ClientSecretBasic(secret);
          const verifier = oauth.generateRandomCodeVerifier();
          const state = oauth.generateRandomState();
          const nonce = oauth.generateRandomNonce();
          const url = new URL(as.authorization_endpoint!);
          url.search = new URLSearchParams({
            client_id: "rp",
            redirect_uri: REDIRECT,
            response_type: "code",
            scope: "openid offline_access",
            state,
            nonce,
            code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
            code_challenge_method: "S256",
          }).toString();
          const callback = await authorize(url);
          // validateAuthResponse checks the callback's iss against the discovered issuer (RFC 9207).
          const params = oauth.validateAuthResponse(as, rp, callback, state);
          const response = await oauth.processAuthorizationCodeResponse(
            as,
            rp,
            await oauth.authorizationCodeGrantRequest(as, rp, auth, params, REDIRECT, verifier, options),
            { expectedNonce: nonce, requireIdToken: true },
          );
          const claims = oauth.getValidatedIdTokenClaims(response)!;
          assert.equal(claims.iss, issuer);
          assert.equal(claims.sub, userId);
          const refreshed = await oauth.processRefreshTokenResponse(
            as,
            rp,
            await oauth.refreshTokenGrantRequest(as, rp, auth, response.refresh_token!, options),
          );
          assert.ok(refreshed.refresh_token && refreshed.refresh_token !== response.refresh_token);
          assert.equal(oauth.getValidatedIdTokenClaims(refreshed)?.iss, issuer);
          const info = await oauth.processUserInfoResponse(
            as,
            rp,
            userId,
            await oauth.userInfoRequest(as, rp, refreshed.access_token, options),
          );
          assert.equal(info.sub, userId);
        });
      } finally {
        await server.close();
      }
    });
  }
});
