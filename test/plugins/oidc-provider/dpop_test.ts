/**
 * DPoP (RFC 9449) at the OIDC provider, against the real server on Postgres:
 *
 * - openid-client 6 with a DPoP handle: code flow, `token_type: DPoP`, `cnf.jkt`, userinfo with
 *   the DPoP scheme, a public client's refresh bound to its key (another key or none refused);
 * - raw HTTP: a bound token as Bearer is refused with a `WWW-Authenticate: DPoP` challenge, a
 *   replayed proof and a proof for another endpoint are `invalid_dpop_proof`, a client registered
 *   with `dpopBoundAccessTokens` is refused without a proof, a confidential client's refresh
 *   token is not bound, introspection shows `cnf`, and discovery lists the algorithms;
 * - oauth4webapi 3 with its `DPoP()` handle against a server requiring nonces: `use_dpop_nonce`
 *   at the token endpoint and at userinfo, retried with the `DPoP-Nonce` the server gave.
 */
import { strict as assert } from "node:assert";
import * as client from "openid-client";
import * as oauth from "oauth4webapi";
import { decodeJwt } from "jose";
import { startTestServer } from "../../support/server.ts";
import { authorizeOverHttp } from "../../support/oidc-browser.ts";
import { dpopKey, dpopKeyOf, dpopProof } from "../../support/dpop.ts";

type Server = Awaited<ReturnType<typeof startTestServer>>;

const REDIRECT = "http://127.0.0.1:9/callback";

async function api(server: Server, method: string, path: string, token: string | null, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, json: await res.json().catch(() => null) };
}

async function registerClients(server: Server) {
  const login = await api(server, "POST", "/auth/login", null, {
    email: server.adminEmail,
    password: server.adminPassword,
  });
  const admin = login.json.accessToken as string;
  const register = async (body: Record<string, unknown>) => {
    const res = await api(server, "POST", "/svc-admin/oidc/clients", admin, {
      redirectUris: [REDIRECT],
      allowedScopes: ["openid", "email", "offline_access"],
      ...body,
    });
    assert.equal(res.status, 201, JSON.stringify(res.json));
    return res.json;
  };
  return {
    spa: await register({ clientId: "dpop-spa", clientType: "public" }),
    web: await register({ clientId: "dpop-web", clientType: "confidential" }),
    strict: await register({ clientId: "dpop-strict", clientType: "public", dpopBoundAccessTokens: true }),
  };
}

async function codeFlow(
  server: Server,
  config: client.Configuration,
  options: { DPoP?: client.DPoPHandle } = {},
  extra: Record<string, string> = {},
  exchanges: { DPoP?: client.DPoPHandle }[] = [],
) {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: "openid email offline_access",
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    ...extra,
  });
  const callback = await authorizeOverHttp(url, server.adminEmail, server.adminPassword, REDIRECT);
  // Earlier exchanges that must fail (and leave the code usable).
  for (const attempt of exchanges) {
    await assert.rejects(
      client.authorizationCodeGrant(
        config,
        callback,
        { pkceCodeVerifier: verifier, expectedState: state },
        undefined,
        attempt,
      ),
      (error: unknown) => {
        assert.equal((error as { error?: string }).error, "invalid_grant");
        return true;
      },
    );
  }
  return await client.authorizationCodeGrant(
    config,
    callback,
    { pkceCodeVerifier: verifier, expectedState: state },
    undefined,
    options,
  );
}

Deno.test("oidc-provider: DPoP with openid-client and raw HTTP", async (t) => {
  const server = await startTestServer({ SVC_PLUGINS: "oidc-provider" });
  try {
    const clients = await registerClients(server);
    assert.equal(clients.strict.dpopBoundAccessTokens, true);
    assert.equal(clients.spa.dpopBoundAccessTokens, false);
    const issuer = new URL(server.issuer);
    const spa = await client.discovery(issuer, "dpop-spa", undefined, client.None(), {
      execute: [client.allowInsecureRequests],
    });
    const metadata = spa.serverMetadata();
    const keyPair = await client.randomDPoPKeyPair("ES256");
    const dpop = client.getDPoPHandle(spa, keyPair);
    const key = await dpopKey();
    const tokenUrl = metadata.token_endpoint!;
    const userinfoUrl = metadata.userinfo_endpoint!;

    await t.step("discovery lists the DPoP algorithms", () => {
      const algs = metadata.dpop_signing_alg_values_supported as string[];
      assert.ok(algs.includes("ES256") && algs.includes("EdDSA") && algs.includes("PS256"));
      assert.ok(!algs.some((alg) => alg.startsWith("HS") || alg === "none"));
    });

    const tokens = await codeFlow(server, spa, { DPoP: dpop });
    const jkt = (decodeJwt(tokens.access_token).cnf as { jkt: string }).jkt;

    await t.step("openid-client: a DPoP-bound code grant and userinfo", async () => {
      assert.equal(tokens.token_type, "dpop");
      assert.equal(typeof jkt, "string");
      const info = await client.fetchUserInfo(spa, tokens.access_token, client.skipSubjectCheck, {
        DPoP: dpop,
      });
      assert.equal(info.email, server.adminEmail);
    });

    await t.step("a bound token as Bearer at userinfo: 401 with a DPoP challenge", async () => {
      const res = await fetch(userinfoUrl, { headers: { Authorization: `Bearer ${tokens.access_token}` } });
      assert.equal(res.status, 401);
      assert.match(res.headers.get("WWW-Authenticate") ?? "", /^DPoP error="invalid_token"/);
      await res.body?.cancel();
      const none = await fetch(userinfoUrl);
      assert.equal(none.status, 401);
      assert.match(none.headers.get("WWW-Authenticate") ?? "", /Bearer realm="oidc".*DPoP algs=/);
      await none.body?.cancel();
    });

    await t.step("userinfo: another key's proof, a replayed proof, a proof for another URI", async () => {
      const auth = { Authorization: `DPoP ${tokens.access_token}` };
      const other = await dpopProof(key, { htm: "GET", htu: userinfoUrl, accessToken: tokens.access_token });
      let res = await fetch(userinfoUrl, { headers: { ...auth, DPoP: other } });
      assert.equal(res.status, 401);
      assert.match(res.headers.get("WWW-Authenticate") ?? "", /^DPoP error="invalid_dpop_proof"/);
      await res.body?.cancel();
      const wrongUri = await dpopProof(key, { htm: "GET", htu: tokenUrl, accessToken: tokens.access_token });
      res = await fetch(userinfoUrl, { headers: { ...auth, DPoP: wrongUri } });
      assert.equal(res.status, 401);
      await res.body?.cancel();
      // A proof of the right key, used twice.
      const own = await dpopKeyOf(keyPair);
      const proof = await dpopProof(own, { htm: "GET", htu: userinfoUrl, accessToken: tokens.access_token });
      res = await fetch(userinfoUrl, { headers: { ...auth, DPoP: proof } });
      assert.equal(res.status, 200);
      await res.body?.cancel();
      res = await fetch(userinfoUrl, { headers: { ...auth, DPoP: proof } });
      assert.equal(res.status, 401);
      assert.match(res.headers.get("WWW-Authenticate") ?? "", /^DPoP error="invalid_dpop_proof"/);
      await res.body?.cancel();
    });

    await t.step("the public client's refresh token is bound to its key", async () => {
      // Another key's proof: refused, nothing rotated.
      const proof = await dpopProof(key, { htm: "POST", htu: tokenUrl });
      let res = await fetch(tokenUrl, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", DPoP: proof },
        body: new URLSearchParams({
          grant_type: "refresh_token",
          refresh_token: tokens.refresh_token!,
          client_id: "dpop-spa",
        }),
      });
      assert.equal(res.status, 400);
      assert.equal((await res.json()).error, "invalid_grant");
      // The same proof again: a replay.
      res = await fetch(tokenUrl, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", DPoP: proof },
        body: new URLSearchParams({
          grant_type: "refresh_token",
          refresh_token: tokens.refresh_token!,
          client_id: "dpop-spa",
        }),
      });
      assert.equal(res.status, 400);
      assert.equal((await res.json()).error, "invalid_dpop_proof");
      const next = await client.refreshTokenGrant(spa, tokens.refresh_token!, undefined, { DPoP: dpop });
      assert.equal(next.token_type, "dpop");
      assert.equal((decodeJwt(next.access_token).cnf as { jkt: string }).jkt, jkt);
      // Without a proof the refresh token is taken for stolen: refused, and its family ends.
      res = await fetch(tokenUrl, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "refresh_token",
          refresh_token: next.refresh_token!,
          client_id: "dpop-spa",
        }),
      });
      assert.equal(res.status, 400);
      assert.equal((await res.json()).error, "invalid_grant");
      await assert.rejects(client.refreshTokenGrant(spa, next.refresh_token!, undefined, { DPoP: dpop }));
    });

    await t.step("dpop_jkt binds the code: another key or none cannot redeem it, nor burn it", async () => {
      const own = await dpopKeyOf(keyPair);
      const otherHandle = client.getDPoPHandle(spa, await client.randomDPoPKeyPair("ES256"));
      const bound = await codeFlow(server, spa, { DPoP: dpop }, { dpop_jkt: own.jkt }, [
        { DPoP: otherHandle },
        {},
      ]);
      assert.equal((decodeJwt(bound.access_token).cnf as { jkt: string }).jkt, own.jkt);
      const bad = new URL(metadata.authorization_endpoint!);
      bad.search = new URLSearchParams({
        client_id: "dpop-spa",
        response_type: "code",
        redirect_uri: REDIRECT,
        scope: "openid",
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        code_challenge_method: "S256",
        dpop_jkt: "not a thumbprint",
      }).toString();
      const res = await fetch(bad, { redirect: "manual" });
      assert.ok([302, 303].includes(res.status), String(res.status));
      assert.equal(new URL(res.headers.get("Location")!).searchParams.get("error"), "invalid_request");
      await res.body?.cancel();
    });

    await t.step("a client registered with dpopBoundAccessTokens must send a proof", async () => {
      const strict = await client.discovery(issuer, "dpop-strict", undefined, client.None(), {
        execute: [client.allowInsecureRequests],
      });
      await assert.rejects(codeFlow(server, strict), (error: unknown) => {
        assert.equal((error as { error?: string }).error, "invalid_dpop_proof");
        return true;
      });
      const bound = await codeFlow(server, strict, { DPoP: client.getDPoPHandle(strict, keyPair) });
      assert.equal(bound.token_type, "dpop");
      // The requirement is an admin-managed field: lifted, the client may use Bearer tokens again.
      const admin = (await api(server, "POST", "/auth/login", null, {
        email: server.adminEmail,
        password: server.adminPassword,
      })).json.accessToken;
      const patched = await api(server, "PATCH", `/svc-admin/oidc/clients/${clients.strict.id}`, admin, {
        dpopBoundAccessTokens: false,
      });
      assert.equal(patched.status, 200, JSON.stringify(patched.json));
      assert.equal(patched.json.dpopBoundAccessTokens, false);
      assert.equal((await codeFlow(server, strict)).token_type, "bearer");
    });

    await t.step(
      "a confidential client: bound access tokens, unbound refresh token, introspection",
      async () => {
        const web = await client.discovery(
          issuer,
          "dpop-web",
          clients.web.clientSecret,
          client.ClientSecretBasic(clients.web.clientSecret),
          { execute: [client.allowInsecureRequests] },
        );
        const handle = client.getDPoPHandle(web, keyPair);
        const first = await codeFlow(server, web, { DPoP: handle });
        assert.equal(first.token_type, "dpop");
        const introspected = await client.tokenIntrospection(web, first.access_token);
        assert.equal(introspected.active, true);
        assert.equal(introspected.token_type, "DPoP");
        assert.deepEqual(introspected.cnf, { jkt });
        // RFC 9449 5: a confidential client's refresh token is bound by its authentication, not a key.
        const plain = await client.refreshTokenGrant(web, first.refresh_token!);
        assert.equal(plain.token_type, "bearer");
        assert.equal(decodeJwt(plain.access_token).cnf, undefined);
        const again = await client.refreshTokenGrant(web, plain.refresh_token!, undefined, {
          DPoP: client.getDPoPHandle(web, await client.randomDPoPKeyPair("ES256")),
        });
        assert.equal(again.token_type, "dpop");
        assert.notEqual((decodeJwt(again.access_token).cnf as { jkt: string }).jkt, jkt);
      },
    );
  } finally {
    await server.close();
  }
});

Deno.test("oidc-provider: DPoP nonces with oauth4webapi's DPoP() handle", async () => {
  const server = await startTestServer({
    SVC_PLUGINS: "oidc-provider",
    SVC_OIDC_DPOP_NONCE_REQUIRED: "true",
  });
  try {
    await registerClients(server);
    const issuer = new URL(server.issuer);
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { [oauth.allowInsecureRequests]: true }),
    );
    const oauthClient: oauth.Client = { client_id: "dpop-spa" };
    const keyPair = await oauth.generateKeyPair("ES256");
    const dpop = oauth.DPoP(oauthClient, keyPair);
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: "dpop-spa",
      response_type: "code",
      redirect_uri: REDIRECT,
      scope: "openid email offline_access",
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
    }).toString();
    const callback = await authorizeOverHttp(url, server.adminEmail, server.adminPassword, REDIRECT);
    const params = oauth.validateAuthResponse(as, oauthClient, callback);
    const options = { DPoP: dpop, [oauth.allowInsecureRequests]: true };
    const grant = () =>
      oauth.authorizationCodeGrantRequest(as, oauthClient, oauth.None(), params, REDIRECT, verifier, options);

    // The first request has no nonce: use_dpop_nonce, and the code is not spent by it.
    let nonceErrors = 0;
    let tokens: oauth.TokenEndpointResponse;
    try {
      tokens = await oauth.processAuthorizationCodeResponse(as, oauthClient, await grant());
    } catch (error) {
      assert.ok(oauth.isDPoPNonceError(error), String(error));
      nonceErrors++;
      tokens = await oauth.processAuthorizationCodeResponse(as, oauthClient, await grant());
    }
    assert.equal(nonceErrors, 1);
    assert.equal(tokens.token_type, "dpop");

    // userinfo wants a nonce too; the handle already holds the token endpoint's (one server nonce).
    const userinfo = async () =>
      await oauth.processUserInfoResponse(
        as,
        oauthClient,
        oauth.skipSubjectCheck,
        await oauth.userInfoRequest(as, oauthClient, tokens.access_token, options),
      );
    let info;
    try {
      info = await userinfo();
    } catch (error) {
      assert.ok(oauth.isDPoPNonceError(error), String(error));
      info = await userinfo();
    }
    assert.equal(info.email, server.adminEmail);

    // A proof without a nonce at userinfo: the challenge says use_dpop_nonce and gives one.
    const key = await dpopKeyOf(keyPair);
    const res = await fetch(as.userinfo_endpoint!, {
      headers: {
        Authorization: `DPoP ${tokens.access_token}`,
        DPoP: await dpopProof(key, {
          htm: "GET",
          htu: as.userinfo_endpoint!,
          accessToken: tokens.access_token,
        }),
      },
    });
    assert.equal(res.status, 401);
    assert.match(res.headers.get("WWW-Authenticate") ?? "", /error="use_dpop_nonce"/);
    assert.ok(res.headers.get("DPoP-Nonce"));
    await res.body?.cancel();
  } finally {
    await server.close();
  }
});
