/**
 * Dynamic client registration end to end through a relying-party library nobody here wrote:
 * openid-client 6 discovers svc, registers a client with an initial access token
 * (`dynamicClientRegistration`, RFC 7591), then runs the code flow with PKCE against the new
 * client (the user consents on svc's consent page, as every registered client asks), exchanges
 * the code, refreshes, and reads userinfo. A wrong initial access token is refused to the library.
 */
import { strict as assert } from "node:assert";
import * as client from "openid-client";
import { builtinPlugins } from "../../../plugins/builtin.ts";
import { type PluginBed, pluginBed } from "../../support/plugins.ts";

const REDIRECT = "https://rp.example.test/cb";
const plugin = () => builtinPlugins().find((candidate) => candidate.name === "oidc-provider")!;

/** A fetch that answers from the bed's app (the library's requests never leave the process). */
function appFetch(beds: PluginBed) {
  // deno-lint-ignore no-explicit-any
  return async (url: string, init: any): Promise<Response> => {
    const target = new URL(url);
    return await beds.app.request(`${target.pathname}${target.search}`, init as RequestInit);
  };
}

const unescape = (text: string) => text.replace(/&#(\d+);/g, (_, code) => String.fromCharCode(Number(code)));

/**
 * A browser of the bed's plain user, signed in: follows the authorization URL through svc's
 * consent page (allowing) to the client's redirect URI; answers that URL.
 */
async function authorizeWithConsent(beds: PluginBed, url: URL): Promise<URL> {
  const { bed, realmId, users } = beds.admin;
  const issued = await bed.auth.sessions.signIn({
    realmId,
    userId: users.plain,
    orgId: null,
    mfa: "Password",
  });
  const cookies = new Map([["svc_at", issued.tokens.accessToken]]);
  const cookieHeader = () => [...cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  const keep = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair.indexOf("=");
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
  };
  let res = await beds.app.request(`${url.pathname}${url.search}`, { headers: { Cookie: cookieHeader() } });
  assert.equal(res.status, 303, await res.text());
  const consent = new URL(res.headers.get("Location")!, url);
  assert.equal(consent.pathname, "/oidc/consent", "a registered client asks for consent");
  res = await beds.app.request(`${consent.pathname}${consent.search}`, {
    headers: { Cookie: cookieHeader() },
  });
  keep(res);
  const html = await res.text();
  assert.equal(res.status, 200, html);
  assert.match(html, /Registered RP asks for/);
  const field = (name: string) => unescape(new RegExp(`name="${name}" value="([^"]*)"`).exec(html)![1]);
  res = await beds.app.request("/oidc/consent", {
    method: "POST",
    headers: { Cookie: cookieHeader(), "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ request: field("request"), form: field("form"), decision: "allow" })
      .toString(),
  });
  assert.equal(res.status, 303, await res.text());
  const back = new URL(res.headers.get("Location")!, url);
  res = await beds.app.request(`${back.pathname}${back.search}`, { headers: { Cookie: cookieHeader() } });
  assert.equal(res.status, 303, await res.text());
  const callback = new URL(res.headers.get("Location")!);
  assert.equal(`${callback.origin}${callback.pathname}`, REDIRECT, callback.href);
  return callback;
}

Deno.test("oidc-provider: openid-client registers a client with an initial access token, then the code flow", async (t) => {
  const beds = await pluginBed([plugin()], {
    SVC_PLUGINS: "oidc-provider",
    SVC_OIDC_REGISTRATION: "initial-token",
  });
  try {
    const { bed, users } = beds.admin;
    const minted = await beds.request("POST", "/svc-admin/oidc/initial-access-tokens", {
      body: { maxUses: 2 },
    });
    assert.equal(minted.status, 201);
    const { token } = await minted.json();
    const issuer = new URL(bed.config.server.baseUrl);
    const fetcher = appFetch(beds);
    // The library checks times against the real clock: the bed's clock moves to now.
    bed.clock.set(Date.now());
    const metadata = {
      redirect_uris: [REDIRECT],
      client_name: "Registered RP",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_post",
    };
    const options = { execute: [client.allowInsecureRequests], [client.customFetch]: fetcher };

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
    });

    await t.step("registration, then code flow with PKCE, refresh and userinfo", async () => {
      const config = await client.dynamicClientRegistration(issuer, metadata, undefined, {
        ...options,
        initialAccessToken: token,
      });
      config[client.customFetch] = fetcher;
      const registered = config.clientMetadata();
      assert.match(registered.client_id, /^dyn-/);
      assert.match(String(registered.client_secret), /^soc_/);
      assert.equal(registered.token_endpoint_auth_method, "client_secret_post");

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
      const callback = await authorizeWithConsent(beds, url);
      const tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: verifier,
        expectedState: state,
        expectedNonce: nonce,
      });
      assert.equal(tokens.claims()!.sub, users.plain);
      assert.equal(tokens.claims()!.aud, registered.client_id);
      assert.ok(tokens.refresh_token);
      const info = await client.fetchUserInfo(config, tokens.access_token, users.plain);
      assert.equal(info.sub, users.plain);
      const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
      assert.ok(refreshed.access_token);
      assert.notEqual(refreshed.refresh_token, tokens.refresh_token);

      const row = await bed.storage.clients.getByClientId(beds.admin.realmId, registered.client_id);
      assert.equal(row?.dynamicallyRegistered, true);
    });
  } finally {
    await beds.close();
  }
});
