/**
 * Dynamic client registration end to end through a relying-party library nobody here wrote,
 * against the real server (`svc start` as a subprocess on Postgres, `SVC_OIDC_REGISTRATION=
 * initial-token`): an administrator mints an initial access token through the admin API;
 * openid-client 6 discovers svc, registers a client with it (`dynamicClientRegistration`,
 * RFC 7591), then runs the code flow with PKCE against the new client (the user signs in on the
 * hosted page and consents on svc's consent page, as every registered client asks), exchanges the
 * code, reads userinfo and refreshes. A wrong initial access token is refused to the library and
 * takes no use of the real one; the admin API lists the client as dynamically registered.
 *
 * Nothing stays in process: the flow needs neither the injected clock nor svc's internals.
 */
import { strict as assert } from "node:assert";
import * as client from "openid-client";
import { authorizeOverHttp } from "../../support/oidc-browser.ts";
import { httpClient, startTestServer } from "../../support/server.ts";

const REDIRECT = "https://rp.example.test/cb";
const USER = { email: "plain@example.test", password: "plain's long password" };

Deno.test("oidc-provider: openid-client registers a client with an initial access token, then the code flow (real server)", async (t) => {
  const server = await startTestServer({
    SVC_PLUGINS: "oidc-provider",
    SVC_OIDC_REGISTRATION: "initial-token",
  });
  try {
    const http = httpClient(server.url);
    const admin = await http.signIn(server.adminEmail, server.adminPassword);
    const made = await http.call("POST", "/svc-admin/users", admin, { ...USER, displayName: "Plain" });
    assert.equal(made.status, 201, JSON.stringify(made.json));
    const userId = made.json.id as string;
    const minted = await http.call("POST", "/svc-admin/oidc/initial-access-tokens", admin, { maxUses: 2 });
    assert.equal(minted.status, 201, JSON.stringify(minted.json));
    assert.equal(minted.headers.get("Cache-Control"), "no-store");
    const token = minted.json.token as string;
    assert.match(token, /^soi_/);
    const uses = async () => {
      const read = await http.call("GET", `/svc-admin/oidc/initial-access-tokens/${minted.json.id}`, admin);
      assert.equal(read.status, 200, JSON.stringify(read.json));
      assert.ok(!JSON.stringify(read.json).includes(token), "the token is shown once");
      return read.json.uses as number;
    };
    const issuer = new URL(server.issuer);
    const metadata = {
      redirect_uris: [REDIRECT],
      client_name: "Registered RP",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_post",
    };
    const options = { execute: [client.allowInsecureRequests] };

    await t.step("a wrong initial access token is refused", async () => {
      await assert.rejects(
        client.dynamicClientRegistration(issuer, metadata, undefined, {
          ...options,
          initialAccessToken: "soi_nope",
        }),
        (error: client.WWWAuthenticateChallengeError) => {
          assert.equal(error.name, "WWWAuthenticateChallengeError", String(error));
          assert.equal(error.status, 401);
          assert.equal(error.cause[0].scheme, "bearer");
          assert.equal(error.cause[0].parameters.error, "invalid_token");
          return true;
        },
      );
      assert.equal(await uses(), 0);
    });

    await t.step(
      "registration, then code flow with PKCE through the consent page, userinfo, refresh",
      async () => {
        const config = await client.dynamicClientRegistration(issuer, metadata, undefined, {
          ...options,
          initialAccessToken: token,
        });
        assert.equal(config.serverMetadata().registration_endpoint, `${server.issuer}/oidc/register`);
        const registered = config.clientMetadata();
        assert.match(registered.client_id, /^dyn-/);
        assert.match(String(registered.client_secret), /^soc_/);
        assert.equal(registered.token_endpoint_auth_method, "client_secret_post");
        assert.equal(await uses(), 1);

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
        // The browser signs in on the hosted page, then is shown the consent page, where it allows.
        const pages: string[] = [];
        const callback = await authorizeOverHttp(url, USER.email, USER.password, REDIRECT, {
          onPage(page, html) {
            pages.push(page.pathname);
            if (page.pathname === "/oidc/consent") assert.match(html, /Registered RP asks for/);
          },
        });
        assert.deepEqual(
          pages,
          ["/account/sign-in", "/oidc/consent"],
          "a registered client asks for consent",
        );
        assert.equal(callback.searchParams.get("state"), state);
        const tokens = await client.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: verifier,
          expectedState: state,
          expectedNonce: nonce,
        });
        assert.equal(tokens.claims()!.sub, userId);
        assert.equal(tokens.claims()!.aud, registered.client_id);
        assert.equal(tokens.claims()!.iss, server.issuer);
        assert.ok(tokens.refresh_token);
        const info = await client.fetchUserInfo(config, tokens.access_token, userId);
        assert.equal(info.sub, userId);
        assert.equal(info.email, USER.email);
        const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
        assert.ok(refreshed.access_token);
        assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
        assert.equal(refreshed.claims()!.sub, userId);

        // Administrators see the client, marked as registered by itself.
        const listed = await http.call("GET", "/svc-admin/oidc/clients?limit=100", admin);
        assert.equal(listed.status, 200, JSON.stringify(listed.json));
        const row = (listed.json.items as { clientId: string; dynamicallyRegistered: boolean }[])
          .find((item) => item.clientId === registered.client_id);
        assert.equal(row?.dynamicallyRegistered, true, JSON.stringify(listed.json));
      },
    );
  } finally {
    await server.close();
  }
});
