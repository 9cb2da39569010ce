/**
 * Client authentication of the OIDC provider against the real server (on Postgres):
 *
 * - `private_key_jwt` (RFC 7523, OIDC Core 9) driven by openid-client: a client with a registered
 *   ES256 JWK Set and one whose RS256 keys are served at a `jwksUri`, through the code flow (the
 *   provider's sign-in form driven over HTTP), refresh, introspection and revocation; then the
 *   refusals (wrong key, replayed jti, expired, too long-lived, wrong audience, `alg: none`, HS256,
 *   a client id mismatch, a secret on a key client) and 50 concurrent uses of one assertion, of
 *   which exactly one is accepted. The admin API refuses private keys and unsafe `jwksUri`s.
 * - A client created by the client-config importer (argon2id-hashed generated secret) signs a user
 *   in through /oidc with its redirect URI, scopes and consent step.
 */
import { strict as assert } from "node:assert";
import * as client from "openid-client";
import { createRemoteJWKSet, exportJWK, generateKeyPair, jwtVerify, SignJWT } from "jose";
import { authorizeOverHttp } from "../../support/oidc-browser.ts";
import { startTestServer } from "../../support/server.ts";

type Server = Awaited<ReturnType<typeof startTestServer>>;

const REDIRECT = "http://127.0.0.1:9/callback";
const ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/** The RS256 client's keys, served as a JWKS the way a client publishes them. */
const rsa = await generateKeyPair("RS256");
const rsaPublic = { ...await exportJWK(rsa.publicKey), kid: "rsa-1", alg: "RS256", use: "sig" };
let jwksHits = 0;
const keyServer = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
  jwksHits++;
  return Response.json({ keys: [rsaPublic] });
});
const JWKS_URI = `http://127.0.0.1:${keyServer.addr.port}/jwks.json`;

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

async function codeFlow(config: client.Configuration, scope: string, email: string, password: string) {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    nonce,
  });
  const callback = await authorizeOverHttp(url, email, password, REDIRECT);
  return await client.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: verifier,
    expectedState: state,
    expectedNonce: nonce,
  });
}

Deno.test("oidc-provider: private_key_jwt and imported clients", async (t) => {
  const server = await startTestServer({
    SVC_PLUGINS: "oidc-provider",
    SVC_WEBHOOK_ALLOW_PRIVATE_RECEIVERS: "127.0.0.1",
  });
  try {
    const issuer = new URL(server.issuer);
    const login = await api(server, "POST", "/auth/login", null, {
      email: server.adminEmail,
      password: server.adminPassword,
    });
    const admin = login.json.accessToken as string;
    const ec = await generateKeyPair("ES256");
    const ecPublic = { ...await exportJWK(ec.publicKey), kid: "ec-1" };
    const tokenEndpoint = `${server.issuer}/oidc/token`;
    const introspectionEndpoint = `${server.issuer}/oidc/introspect`;

    await t.step("the admin API registers public keys only, and safe jwksUris", async () => {
      const base = {
        clientType: "confidential",
        redirectUris: [REDIRECT],
        tokenEndpointAuthMethod: "private_key_jwt",
      };
      const refused = async (body: Record<string, unknown>, message: RegExp) => {
        const res = await api(server, "POST", "/svc-admin/oidc/clients", admin, {
          ...base,
          clientId: "refused",
          ...body,
        });
        assert.equal(res.status, 400, JSON.stringify(res.json));
        assert.match(JSON.stringify(res.json), message);
      };
      const privateJwk = await exportJWK((await generateKeyPair("ES256", { extractable: true })).privateKey);
      await refused({ jwks: { keys: [privateJwk] } }, /private member/);
      await refused({ jwks: { keys: [{ kty: "oct", k: "c2VjcmV0" }] } }, /private member/);
      await refused({ jwks: { keys: [{ ...ecPublic, alg: "HS256" }] } }, /alg must be/);
      await refused({}, /either jwks or jwksUri/);
      await refused({ jwks: { keys: [ecPublic] }, jwksUri: JWKS_URI }, /either jwks or jwksUri/);
      await refused({ jwksUri: "http://keys.example.com/jwks.json" }, /must be https/);
      await refused({ jwksUri: "https://10.1.2.3/jwks.json" }, /private or loopback/);
      await refused(
        { tokenEndpointAuthMethod: "client_secret_basic", jwks: { keys: [ecPublic] } },
        /private_key_jwt/,
      );
      await refused({ clientType: "public", tokenEndpointAuthMethod: "private_key_jwt" }, /none/);
    });

    const created = await api(server, "POST", "/svc-admin/oidc/clients", admin, {
      clientId: "key-app",
      clientType: "confidential",
      redirectUris: [REDIRECT],
      allowedScopes: ["openid", "email", "offline_access"],
      tokenEndpointAuthMethod: "private_key_jwt",
      jwks: { keys: [ecPublic] },
    });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    assert.equal(created.json.clientSecret, null);
    assert.equal(created.json.hasSecret, false);
    assert.equal(created.json.tokenEndpointAuthMethod, "private_key_jwt");
    assert.deepEqual(created.json.jwks, { keys: [ecPublic] });
    const remote = await api(server, "POST", "/svc-admin/oidc/clients", admin, {
      clientId: "remote-key-app",
      clientType: "confidential",
      redirectUris: [REDIRECT],
      tokenEndpointAuthMethod: "private_key_jwt",
      jwksUri: JWKS_URI,
    });
    assert.equal(remote.status, 201, JSON.stringify(remote.json));

    await t.step("discovery advertises private_key_jwt and its algorithms", async () => {
      const metadata = await (await fetch(`${server.issuer}/.well-known/openid-configuration`)).json();
      for (const endpoint of ["token", "revocation", "introspection"]) {
        assert.ok(metadata[`${endpoint}_endpoint_auth_methods_supported`].includes("private_key_jwt"));
        assert.deepEqual(metadata[`${endpoint}_endpoint_auth_signing_alg_values_supported`], [
          "RS256",
          "PS256",
          "ES256",
          "EdDSA",
        ]);
      }
    });

    await t.step(
      "openid-client: code flow, refresh, introspection, revocation with an ES256 key",
      async () => {
        const config = await client.discovery(
          issuer,
          "key-app",
          undefined,
          client.PrivateKeyJwt(ec.privateKey),
          {
            execute: [client.allowInsecureRequests],
          },
        );
        const tokens = await codeFlow(
          config,
          "openid email offline_access",
          server.adminEmail,
          server.adminPassword,
        );
        const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri!));
        const id = await jwtVerify(tokens.id_token!, jwks, { issuer: server.issuer, audience: "key-app" });
        assert.equal(id.payload.email, server.adminEmail);
        const next = await client.refreshTokenGrant(config, tokens.refresh_token!);
        assert.ok(next.refresh_token && next.refresh_token !== tokens.refresh_token);
        const active = await client.tokenIntrospection(config, next.access_token);
        assert.equal(active.active, true);
        assert.equal(active.client_id, "key-app");
        await client.tokenRevocation(config, next.refresh_token!);
        assert.equal((await client.tokenIntrospection(config, next.refresh_token!)).active, false);
      },
    );

    await t.step("openid-client: keys fetched from the client's jwksUri (RS256)", async () => {
      const config = await client.discovery(
        issuer,
        "remote-key-app",
        undefined,
        client.PrivateKeyJwt({ key: rsa.privateKey, kid: "rsa-1" }),
        { execute: [client.allowInsecureRequests] },
      );
      const introspected = await client.tokenIntrospection(config, "not-a-token");
      assert.equal(introspected.active, false);
      assert.ok(jwksHits >= 1);
      // Authenticated at the token endpoint: the grant is what is refused, not the client.
      await assert.rejects(
        () => client.refreshTokenGrant(config, "srt_unknown"),
        (err: unknown) => (err as { error?: string }).error === "invalid_grant",
      );
    });

    const now = () => Math.floor(Date.now() / 1000);
    const assertion = (
      claims: Record<string, unknown> = {},
      key: CryptoKey = ec.privateKey,
      alg = "ES256",
    ) =>
      new SignJWT({
        iss: "key-app",
        sub: "key-app",
        aud: tokenEndpoint,
        jti: crypto.randomUUID(),
        iat: now(),
        exp: now() + 60,
        ...claims,
      }).setProtectedHeader({ alg }).sign(key);
    const introspect = async (clientAssertion: string, extra: Record<string, string> = {}) => {
      const res = await fetch(introspectionEndpoint, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", ...extra },
        body: new URLSearchParams({
          token: "anything",
          client_assertion_type: ASSERTION_TYPE,
          client_assertion: clientAssertion,
        }),
      });
      const body = await res.json();
      return { status: res.status, body };
    };

    await t.step("a valid assertion passes; the same one twice does not", async () => {
      const once = await assertion();
      assert.deepEqual(await introspect(once), { status: 200, body: { active: false } });
      const again = await introspect(once);
      assert.equal(again.status, 401);
      assert.equal(again.body.error, "invalid_client");
    });

    await t.step(
      "refusals: wrong key, expired, too long-lived, wrong aud, none, HS256, mismatches",
      async () => {
        const other = await generateKeyPair("ES256");
        const b64 = (value: unknown) =>
          btoa(JSON.stringify(value)).replaceAll("=", "").replaceAll("+", "-")
            .replaceAll("/", "_");
        const unsecured = `${b64({ alg: "none" })}.${
          b64({
            iss: "key-app",
            sub: "key-app",
            aud: tokenEndpoint,
            jti: crypto.randomUUID(),
            exp: now() + 60,
          })
        }.`;
        const hmac = await new SignJWT({
          iss: "key-app",
          sub: "key-app",
          aud: tokenEndpoint,
          jti: crypto.randomUUID(),
          exp: now() + 60,
        }).setProtectedHeader({ alg: "HS256" }).sign(
          new TextEncoder().encode("a shared secret of enough bytes!"),
        );
        const cases: [string, string][] = [
          ["wrong key", await assertion({}, other.privateKey)],
          ["expired", await assertion({ iat: now() - 600, exp: now() - 120 })],
          ["too long-lived", await assertion({ exp: now() + 3600 })],
          ["wrong aud", await assertion({ aud: "https://elsewhere.example/token" })],
          ["no exp", await assertion({ exp: undefined })],
          ["no jti", await assertion({ jti: undefined })],
          ["iss is not the client", await assertion({ iss: "remote-key-app" })],
          ["another client's name", await assertion({ iss: "remote-key-app", sub: "remote-key-app" })],
          ["alg none", unsecured],
          ["HS256", hmac],
        ];
        for (const [what, token] of cases) {
          const res = await introspect(token);
          assert.equal(res.status, 401, what);
          assert.equal(res.body.error, "invalid_client", what);
        }
        const mismatch = await fetch(introspectionEndpoint, {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({
            token: "x",
            client_id: "remote-key-app",
            client_assertion_type: ASSERTION_TYPE,
            client_assertion: await assertion(),
          }),
        });
        assert.equal(mismatch.status, 401);
        await mismatch.body?.cancel();
        const withBasic = await introspect(await assertion(), {
          Authorization: `Basic ${btoa("key-app:whatever")}`,
        });
        assert.equal(withBasic.status, 401);
        const wrongType = await fetch(introspectionEndpoint, {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({
            token: "x",
            client_assertion_type: "urn:example:other",
            client_assertion: await assertion(),
          }),
        });
        assert.equal(wrongType.status, 401);
        await wrongType.body?.cancel();
        // The issuer is an accepted audience too (what openid-client sends).
        assert.equal((await introspect(await assertion({ aud: server.issuer }))).status, 200);
      },
    );

    await t.step("EdDSA and PS256 keys of one JWK Set (chosen by kid)", async () => {
      const ed = await generateKeyPair("EdDSA");
      const ps = await generateKeyPair("PS256");
      const multi = await api(server, "POST", "/svc-admin/oidc/clients", admin, {
        clientId: "multi-key-app",
        clientType: "confidential",
        redirectUris: [REDIRECT],
        tokenEndpointAuthMethod: "private_key_jwt",
        jwks: {
          keys: [
            { ...await exportJWK(ed.publicKey), kid: "ed" },
            { ...await exportJWK(ps.publicKey), kid: "ps", alg: "PS256" },
          ],
        },
      });
      assert.equal(multi.status, 201, JSON.stringify(multi.json));
      for (
        const [alg, kid, key] of [["EdDSA", "ed", ed.privateKey], ["PS256", "ps", ps.privateKey]] as const
      ) {
        const signed = await new SignJWT({
          iss: "multi-key-app",
          sub: "multi-key-app",
          aud: server.issuer,
          jti: crypto.randomUUID(),
          exp: now() + 60,
        }).setProtectedHeader({ alg, kid }).sign(key);
        assert.equal((await introspect(signed)).status, 200, alg);
      }
    });

    await t.step("50 concurrent uses of one assertion: exactly one is accepted", async () => {
      const shared = await assertion({ aud: introspectionEndpoint });
      const results = await Promise.all(Array.from({ length: 50 }, () => introspect(shared)));
      assert.equal(results.filter((r) => r.status === 200).length, 1);
      assert.equal(results.filter((r) => r.status === 401).length, 49);
    });

    await t.step("client_credentials for a service account still issues its at+jwt", async () => {
      const account = await api(server, "POST", "/svc-admin/service-accounts", admin, {
        key: "batch-job",
        displayName: "Batch",
      });
      assert.equal(account.status, 201);
      const machine = await client.discovery(issuer, "batch-job", account.json.secret, undefined, {
        execute: [client.allowInsecureRequests],
      });
      const tokens = await client.clientCredentialsGrant(machine, { scope: "reports.read" });
      const jwks = createRemoteJWKSet(new URL(machine.serverMetadata().jwks_uri!));
      const verified = await jwtVerify(tokens.access_token, jwks, {
        issuer: server.issuer,
        audience: server.issuer,
        typ: "at+jwt",
      });
      assert.equal(verified.payload.sub, account.json.id);
      assert.equal(verified.payload.client_id, "batch-job");
      assert.equal(verified.payload.scope, "reports.read");
    });

    await t.step(
      "a client imported by the client-config importer signs a user in through /oidc",
      async () => {
        const imported = await fetch(`${server.url}/svc-admin/imports/clients`, {
          method: "POST",
          headers: { Authorization: `Bearer ${admin}`, "Content-Type": "application/json" },
          body: JSON.stringify([{
            ClientId: "imported-app",
            RedirectUris: [REDIRECT],
            AllowedScopes: ["openid", "email"],
            RequireConsent: true,
          }]),
        });
        const report = await imported.json();
        assert.equal(imported.status, 200, JSON.stringify(report));
        assert.equal(report.clients.created, 1);
        const secret = report.generatedClientSecrets["imported-app"] as string;
        assert.ok(secret);
        const config = await client.discovery(
          issuer,
          "imported-app",
          secret,
          client.ClientSecretPost(secret),
          {
            execute: [client.allowInsecureRequests],
          },
        );
        const tokens = await codeFlow(config, "openid email", server.adminEmail, server.adminPassword);
        assert.equal(tokens.claims()!.email, server.adminEmail);
        assert.equal(tokens.refresh_token, undefined);
        // Its scopes stay its own; a wrong secret is still refused.
        const wrong = await client.discovery(
          issuer,
          "imported-app",
          "not-it",
          client.ClientSecretBasic("not-it"),
          {
            execute: [client.allowInsecureRequests],
          },
        );
        await assert.rejects(
          () => client.tokenIntrospection(wrong, tokens.access_token),
          (err: unknown) => (err as { status?: number }).status === 401,
        );
        assert.equal((await client.tokenIntrospection(config, tokens.access_token)).active, true);
        const denied = client.buildAuthorizationUrl(config, {
          redirect_uri: REDIRECT,
          scope: "openid offline_access",
          code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
          code_challenge_method: "S256",
        });
        const res = await fetch(denied, { redirect: "manual" });
        assert.equal(new URL(res.headers.get("Location")!).searchParams.get("error"), "invalid_scope");
        await res.body?.cancel();
      },
    );
  } finally {
    await server.close();
    await keyServer.shutdown();
  }
});
