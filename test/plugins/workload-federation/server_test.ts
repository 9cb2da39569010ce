/**
 * Workload federation end to end through the real server (`svc start` with
 * `SVC_PLUGINS=oidc-provider,workload-federation`, on Postgres): an administrator granted the
 * plugin's permission creates a trust policy for a CI issuer whose keys a local JWKS endpoint
 * serves; a CI token in GitHub Actions' claim shape becomes the service account's access token,
 * verified with jose against the server's published JWKS; the replay is refused. The OIDC
 * provider's token endpoint serves the same grant (advertised in its discovery document).
 */
import { strict as assert } from "node:assert";
import { createRemoteJWKSet, decodeJwt, exportJWK, generateKeyPair, jwtVerify, SignJWT } from "jose";
import { startTestServer } from "../../support/server.ts";

const ci = await generateKeyPair("RS256");
const ciPublic = { ...await exportJWK(ci.publicKey), kid: "gha", alg: "RS256" };
const jwksServer = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen() {} },
  () => Response.json({ keys: [ciPublic] }),
);
const JWKS_URI = `http://127.0.0.1:${jwksServer.addr.port}/.well-known/jwks`;

Deno.test("workload federation: a CI job's token becomes a service account's token on the real server", async () => {
  const server = await startTestServer({
    SVC_PLUGINS: "oidc-provider,workload-federation",
    SVC_WEBHOOK_ALLOW_PRIVATE_RECEIVERS: "127.0.0.1",
  });
  try {
    const call = async (method: string, path: string, token: string | null, body?: unknown) => {
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers: {
          ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, json: await res.json().catch(() => null) };
    };
    const login = await call("POST", "/auth/login", null, {
      email: server.adminEmail,
      password: server.adminPassword,
    });
    const admin = login.json.accessToken as string;
    const adminId = decodeJwt(admin).sub!;

    // svc-admin holds svc:*:*, not the plugin's permissions: it must be granted them.
    const policyBody = (serviceAccountId: string) => ({
      name: "deploy-main",
      issuer: "https://token.actions.githubusercontent.com",
      jwksUri: JWKS_URI,
      audience: "https://svc.example.test",
      requiredClaims: { repository: "acme/deploy", ref: "refs/heads/main" },
      serviceAccountId,
    });
    const account = await call("POST", "/svc-admin/service-accounts", admin, {
      key: "deploy-bot",
      displayName: "Deploy",
    });
    assert.equal(account.status, 201);
    assert.equal(
      (await call("POST", "/svc-admin/workload/policies", admin, policyBody(account.json.id))).status,
      403,
    );
    const role = await call("POST", "/svc-admin/roles", admin, {
      key: "workload-admin",
      displayName: "Workload admin",
      grants: [{ pattern: "workload:global:*", effect: "Allow" }],
    });
    assert.equal(role.status, 201, JSON.stringify(role.json));
    const assigned = await call("POST", "/svc-admin/role-assignments", admin, {
      roleId: role.json.id,
      principalKind: "User",
      principalId: adminId,
    });
    assert.equal(assigned.status, 201, JSON.stringify(assigned.json));
    const policy = await call("POST", "/svc-admin/workload/policies", admin, policyBody(account.json.id));
    assert.equal(policy.status, 201, JSON.stringify(policy.json));

    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({
      iss: "https://token.actions.githubusercontent.com",
      sub: "repo:acme/deploy:ref:refs/heads/main",
      aud: "https://svc.example.test",
      repository: "acme/deploy",
      ref: "refs/heads/main",
      workflow: "release",
      jti: crypto.randomUUID(),
      iat: now,
      nbf: now,
      exp: now + 300,
    }).setProtectedHeader({ alg: "RS256", kid: "gha", typ: "JWT" }).sign(ci.privateKey);
    const exchange = () =>
      fetch(`${server.url}/workload/token`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
          subject_token: token,
          subject_token_type: "urn:ietf:params:oauth:token-type:jwt",
        }),
      });
    const res = await exchange();
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(res.headers.get("Cache-Control"), "no-store");
    assert.equal(body.issued_token_type, "urn:ietf:params:oauth:token-type:access_token");
    const verified = await jwtVerify(body.access_token, createRemoteJWKSet(new URL(server.jwksUrl)), {
      issuer: server.issuer,
      typ: "at+jwt",
    });
    assert.equal(verified.payload.sub, account.json.id);
    assert.equal(verified.payload.client_id, "deploy-bot");

    const replay = await exchange();
    assert.equal(replay.status, 400);
    assert.equal((await replay.json()).error, "invalid_grant");

    // With the OIDC provider enabled too, its token endpoint serves the same extension grant.
    const discovery = await (await fetch(`${server.url}/.well-known/openid-configuration`)).json();
    assert.ok(discovery.grant_types_supported.includes("urn:ietf:params:oauth:grant-type:token-exchange"));
    const second = await new SignJWT({
      iss: "https://token.actions.githubusercontent.com",
      sub: "repo:acme/deploy:ref:refs/heads/main",
      aud: "https://svc.example.test",
      repository: "acme/deploy",
      ref: "refs/heads/main",
      jti: crypto.randomUUID(),
      iat: now,
      exp: now + 300,
    }).setProtectedHeader({ alg: "RS256", kid: "gha" }).sign(ci.privateKey);
    const viaOidc = () =>
      fetch(discovery.token_endpoint, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
          subject_token: second,
          subject_token_type: "urn:ietf:params:oauth:token-type:jwt",
        }),
      });
    const oidcAnswer = await viaOidc();
    const oidcBody = await oidcAnswer.json();
    assert.equal(oidcAnswer.status, 200, JSON.stringify(oidcBody));
    assert.equal(oidcAnswer.headers.get("Cache-Control"), "no-store");
    const fromOidc = await jwtVerify(oidcBody.access_token, createRemoteJWKSet(new URL(server.jwksUrl)), {
      issuer: server.issuer,
      typ: "at+jwt",
    });
    assert.equal(fromOidc.payload.sub, account.json.id);
    const oidcReplay = await viaOidc();
    assert.equal(oidcReplay.status, 400);
    assert.equal((await oidcReplay.json()).error, "invalid_grant");

    const ready = await fetch(`${server.url}/readyz`);
    assert.equal(ready.status, 200);
    assert.match(await ready.text(), /plugin:workload-federation/);
  } finally {
    await server.close();
    await jwksServer.shutdown();
  }
});
