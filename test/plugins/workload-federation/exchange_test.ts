/**
 * Workload federation on real Postgres: CI tokens minted here in GitHub Actions' claim shape,
 * signed by a test key served from a local JWKS endpoint (and a policy with static keys), are
 * exchanged at `/workload/token` (RFC 8693) for a service account's access token. Then the
 * refusals (replay, wrong audience, expired, unknown issuer, claim mismatch, no jti, too long a
 * lifetime, wrong key, HS256, a disabled or deleted service account, a disabled policy), each the
 * same `invalid_grant` answer with its reason only in the event; 50 concurrent exchanges of one
 * token give exactly one access token; the admin routes' fences, validation and audit entries;
 * the OpenAPI document; and the plugin is off unless enabled.
 */
import { strict as assert } from "node:assert";
import { Validator } from "@seriousme/openapi-schema-validator";
import { createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify, SignJWT } from "jose";
import { builtinPlugins } from "../../../plugins/builtin.ts";
import { pluginBed } from "../../support/plugins.ts";
import { seeder } from "../../support/seed.ts";

const GITHUB = "https://token.actions.githubusercontent.com";
const AUDIENCE = "https://svc.example.test/workload";
const EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
const JWT_TYPE = "urn:ietf:params:oauth:token-type:jwt";
const ACCESS_TYPE = "urn:ietf:params:oauth:token-type:access_token";

const ci = await generateKeyPair("RS256");
const ciPublic = { ...await exportJWK(ci.publicKey), kid: "ci-1", alg: "RS256", use: "sig" };
let jwksHits = 0;
const jwksServer = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
  jwksHits++;
  return Response.json({ keys: [ciPublic] });
});
const JWKS_URI = `http://127.0.0.1:${jwksServer.addr.port}/.well-known/jwks`;

Deno.test("workload federation: token exchange under trust policies", async (t) => {
  // The built-in registration (SVC_PLUGINS=workload-federation enables this one).
  const plugin = builtinPlugins().find((candidate) => candidate.name === "workload-federation")!;
  const beds = await pluginBed([plugin], {
    SVC_PLUGINS: "workload-federation",
    SVC_WEBHOOK_ALLOW_PRIVATE_RECEIVERS: "127.0.0.1",
  }, { postgres: true });
  try {
    const { admin } = beds;
    const { bed, realmId, users } = admin;
    const seed = seeder(bed.database.db);
    const manager = await seed.role(realmId, "workload-manager", [{ pattern: "workload:global:*" }]);
    await seed.assign(realmId, manager, { kind: "User", id: users.global });
    const reader = await seed.role(realmId, "workload-reader", [{
      pattern: "workload:global:policies-read",
    }]);
    await seed.assign(realmId, reader, { kind: "User", id: users.orgB });
    await bed.snapshots.invalidateAll();

    const json = async (res: Response) => ({
      status: res.status,
      headers: res.headers,
      body: await res.json(),
    });
    const account = await json(
      await beds.request("POST", "/svc-admin/service-accounts", {
        body: { key: "deployer", displayName: "Deploy" },
      }),
    );
    assert.equal(account.status, 201, JSON.stringify(account.body));
    const accountId = account.body.id as string;

    const nowSeconds = () => Math.floor(bed.clock.now() / 1000);
    let runs = 0;
    const ciToken = async (
      claims: Record<string, unknown> = {},
      options: { key?: CryptoKey; alg?: string; kid?: string } = {},
    ) => {
      const now = nowSeconds();
      runs++;
      return await new SignJWT({
        jti: crypto.randomUUID(),
        sub: "repo:acme/deploy:ref:refs/heads/main",
        aud: AUDIENCE,
        ref: "refs/heads/main",
        sha: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4",
        repository: "acme/deploy",
        repository_owner: "acme",
        repository_visibility: "private",
        run_id: String(1000 + runs),
        run_attempt: "1",
        actor: "octocat",
        workflow: "deploy",
        event_name: "push",
        ref_type: "branch",
        environment: "production",
        job_workflow_ref: "acme/deploy/.github/workflows/deploy.yml@refs/heads/main",
        iss: GITHUB,
        nbf: now - 5,
        iat: now,
        exp: now + 300,
        ...claims,
      }).setProtectedHeader({ alg: options.alg ?? "RS256", kid: options.kid ?? "ci-1", typ: "JWT" })
        .sign(options.key ?? ci.privateKey);
    };
    const exchange = async (form: Record<string, string>) => {
      const res = await beds.request("POST", "/workload/token", {
        as: null,
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(form).toString(),
      });
      return await json(res);
    };
    const exchangeToken = (token: string, extra: Record<string, string> = {}) =>
      exchange({ grant_type: EXCHANGE, subject_token: token, subject_token_type: JWT_TYPE, ...extra });
    /** The data of the next `kind` event after `seen` events (events are announced after their transaction). */
    const nextEvent = async (kind: string, seen: number) => {
      for (let i = 0; i < 500; i++) {
        const found = bed.events.slice(seen).find((event) => event.kind === kind);
        if (found !== undefined) return found.data as Record<string, unknown>;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return undefined;
    };
    const refusedBecause = async (token: string, reason: string) => {
      const before = bed.events.length;
      const res = await exchangeToken(token);
      assert.equal(res.status, 400, reason);
      assert.deepEqual(res.body, {
        error: "invalid_grant",
        error_description: "the subject token was not accepted",
      });
      assert.equal(res.headers.get("Cache-Control"), "no-store");
      assert.equal((await nextEvent("workload.exchange_refused", before))?.reason, reason);
      for (const event of bed.events.slice(before)) assert.ok(!JSON.stringify(event).includes(token));
    };

    let policyId = "";
    await t.step("admin: fences (401, 403, 404), validation, audit entries", async () => {
      const body = {
        name: "github-deploy",
        issuer: GITHUB,
        jwksUri: JWKS_URI,
        audience: AUDIENCE,
        requiredClaims: { repository: "acme/deploy", ref: "refs/heads/main", environment: "production" },
        serviceAccountId: accountId,
      };
      assert.equal((await beds.request("GET", "/svc-admin/workload/policies", { as: null })).status, 401);
      assert.equal(
        (await beds.request("POST", "/svc-admin/workload/policies", { as: null, body })).status,
        401,
      );
      assert.equal((await beds.request("GET", "/svc-admin/workload/policies", { as: "plain" })).status, 403);
      assert.equal(
        (await beds.request("POST", "/svc-admin/workload/policies", { as: "orgB", body })).status,
        403,
      );
      assert.equal((await beds.request("GET", "/svc-admin/workload/policies", { as: "orgB" })).status, 200);

      const invalid = async (patch: Record<string, unknown>, message: RegExp) => {
        const res = await json(
          await beds.request("POST", "/svc-admin/workload/policies", { body: { ...body, ...patch } }),
        );
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.match(res.body.error.message, message);
      };
      const privateKey = await exportJWK((await generateKeyPair("ES256", { extractable: true })).privateKey);
      await invalid({ jwksUri: null, jwks: { keys: [privateKey] } }, /private member/);
      await invalid({ jwks: { keys: [ciPublic] } }, /either jwks or jwksUri/);
      await invalid({ jwksUri: "http://keys.example.com/jwks" }, /must be https/);
      await invalid({ serviceAccountId: crypto.randomUUID() }, /no service account/);
      await invalid({ requiredClaims: { aud: "x" } }, /not iss, aud/);
      await invalid({ issuer: "not a url" }, /absolute URL/);
      await invalid({ name: "bad\u0000name" }, /U\+0000|NUL|null character/i);

      const chain = await admin.chainLength();
      const created = await json(await beds.request("POST", "/svc-admin/workload/policies", { body }));
      assert.equal(created.status, 201, JSON.stringify(created.body));
      policyId = created.body.id;
      assert.equal(await admin.chainLength(), chain + 1);
      assert.deepEqual(created.body.requiredClaims, body.requiredClaims);
      const again = await json(await beds.request("POST", "/svc-admin/workload/policies", { body }));
      assert.equal(again.status, 409);
      assert.equal(again.body.error.code, "workload_policy_name_taken");
      assert.equal(await admin.chainLength(), chain + 1);

      const item = `/svc-admin/workload/policies/${policyId}`;
      assert.equal((await beds.request("GET", item, { as: null })).status, 401);
      assert.equal((await beds.request("GET", item, { as: "plain" })).status, 403);
      assert.equal((await beds.request("PATCH", item, { as: "orgB", body: { enabled: false } })).status, 403);
      assert.equal((await beds.request("DELETE", item, { as: "orgB" })).status, 403);
      const missing = `/svc-admin/workload/policies/${crypto.randomUUID()}`;
      assert.equal((await beds.request("GET", missing)).status, 404);
      assert.equal((await beds.request("PATCH", missing, { body: { enabled: false } })).status, 404);
      assert.equal((await beds.request("DELETE", missing)).status, 404);
      assert.equal((await beds.request("GET", "/svc-admin/workload/policies/not-a-uuid")).status, 404);
      const read = await json(await beds.request("GET", item, { as: "orgB" }));
      assert.equal(read.body.name, "github-deploy");
      const list = await json(await beds.request("GET", "/svc-admin/workload/policies?limit=5"));
      assert.equal(list.body.total, 1);
      assert.equal(await admin.chainLength(), chain + 1);
    });

    let accessToken = "";
    await t.step("a CI token is exchanged for the service account's access token", async () => {
      const token = await ciToken();
      const res = await exchangeToken(token, { requested_token_type: ACCESS_TYPE, scope: "deploy.write" });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.headers.get("Cache-Control"), "no-store");
      assert.equal(res.body.issued_token_type, ACCESS_TYPE);
      assert.equal(res.body.token_type, "Bearer");
      assert.equal(res.body.expires_in, bed.config.tokens.accessTokenTtlSeconds);
      assert.equal(res.body.scope, "deploy.write");
      accessToken = res.body.access_token;
      const jwks = await (await beds.app.request("/.well-known/jwks.json")).json();
      const verified = await jwtVerify(accessToken, createLocalJWKSet(jwks), {
        issuer: bed.auth.tokens.issuer,
        audience: bed.auth.tokens.issuer,
        typ: "at+jwt",
        currentDate: new Date(bed.clock.now()),
      });
      assert.equal(verified.payload.sub, accountId);
      assert.equal(verified.payload.client_id, "deployer");
      assert.equal(verified.payload.scope, "deploy.write");
      assert.ok(jwksHits >= 1, "the policy's remote JWKS was fetched");
      const event = (await nextEvent("workload.token_exchanged", 0))!;
      assert.equal(event.serviceAccountId, accountId);
      assert.equal(event.policyId, policyId);
      assert.equal(event.subject, "repo:acme/deploy:ref:refs/heads/main");
      assert.ok(!JSON.stringify(event).includes(token));

      // The same token again: refused.
      await refusedBecause(token, "replayed");
    });

    await t.step("refusals are one answer; the event names the reason", async () => {
      const other = await generateKeyPair("RS256");
      await refusedBecause(await ciToken({ aud: "https://elsewhere.example" }), "audience");
      await refusedBecause(
        await ciToken({ iat: nowSeconds() - 900, nbf: nowSeconds() - 900, exp: nowSeconds() - 60 }),
        "expired",
      );
      await refusedBecause(await ciToken({ iss: "https://gitlab.example.com" }), "unknown_issuer");
      await refusedBecause(await ciToken({ ref: "refs/heads/feature" }), "claim_mismatch");
      await refusedBecause(await ciToken({ repository: "evil/deploy" }), "claim_mismatch");
      await refusedBecause(await ciToken({ environment: undefined }), "claim_mismatch");
      await refusedBecause(await ciToken({ jti: undefined }), "no_jti");
      await refusedBecause(await ciToken({ exp: nowSeconds() + 7200 }), "lifetime_too_long");
      await refusedBecause(await ciToken({ nbf: nowSeconds() + 600 }), "not_yet_valid");
      await refusedBecause(await ciToken({}, { key: other.privateKey }), "signature");
      await refusedBecause(
        await ciToken(
          {},
          { key: new TextEncoder().encode("a shared secret of at least 32 bytes"), alg: "HS256" } as never,
        ),
        "algorithm",
      );
      await refusedBecause("not-a-jwt", "malformed_token");
    });

    await t.step("malformed requests say what is wrong (they are not policy checks)", async () => {
      const token = await ciToken();
      assert.equal(
        (await exchange({
          grant_type: "client_credentials",
          subject_token: token,
          subject_token_type: JWT_TYPE,
        })).body.error,
        "unsupported_grant_type",
      );
      assert.equal(
        (await exchange({ grant_type: EXCHANGE, subject_token_type: JWT_TYPE })).body.error,
        "invalid_request",
      );
      assert.equal(
        (await exchangeToken(token, { subject_token_type: ACCESS_TYPE })).body.error,
        "invalid_request",
      );
      assert.equal(
        (await exchangeToken(token, {
          requested_token_type: "urn:ietf:params:oauth:token-type:refresh_token",
        })).body.error,
        "invalid_request",
      );
      assert.equal(
        (await exchangeToken(token, { audience: "https://other.example" })).body.error,
        "invalid_target",
      );
      assert.equal((await exchangeToken(token, { scope: "openid" })).body.error, "invalid_scope");
      const asJson = await beds.request("POST", "/workload/token", {
        as: null,
        body: { grant_type: EXCHANGE, subject_token: token, subject_token_type: JWT_TYPE },
      });
      assert.equal(asJson.status, 400);
      assert.equal((await asJson.json()).error, "invalid_request");
      // None of these consumed the token.
      assert.equal((await exchangeToken(token, { audience: bed.auth.tokens.issuer })).status, 200);
    });

    await t.step("a disabled or deleted service account, a disabled policy: refused", async () => {
      const disabled = await beds.request("POST", `/svc-admin/service-accounts/${accountId}/disable`);
      assert.equal(disabled.status, 200);
      await refusedBecause(await ciToken(), "service_account_unavailable");
      assert.equal(
        (await beds.request("POST", `/svc-admin/service-accounts/${accountId}/enable`)).status,
        200,
      );
      assert.equal((await exchangeToken(await ciToken())).status, 200);

      const chain = await admin.chainLength();
      const off = await json(
        await beds.request("PATCH", `/svc-admin/workload/policies/${policyId}`, { body: { enabled: false } }),
      );
      assert.equal(off.status, 200);
      assert.equal(off.body.enabled, false);
      assert.equal(await admin.chainLength(), chain + 1);
      await refusedBecause(await ciToken(), "unknown_issuer");
      await beds.request("PATCH", `/svc-admin/workload/policies/${policyId}`, { body: { enabled: true } });

      const temp = await json(
        await beds.request("POST", "/svc-admin/service-accounts", {
          body: { key: "temp", displayName: "Temp" },
        }),
      );
      const ec = await generateKeyPair("ES256");
      const staticPolicy = await json(
        await beds.request("POST", "/svc-admin/workload/policies", {
          body: {
            name: "cluster",
            issuer: "https://kubernetes.default.svc.cluster.local",
            jwks: { keys: [{ ...await exportJWK(ec.publicKey), kid: "k8s" }] },
            audience: "svc",
            requiredClaims: { sub: "system:serviceaccount:ci:runner" },
            serviceAccountId: temp.body.id,
          },
        }),
      );
      assert.equal(staticPolicy.status, 201, JSON.stringify(staticPolicy.body));
      const clusterToken = () =>
        ciToken({
          iss: "https://kubernetes.default.svc.cluster.local",
          aud: "svc",
          sub: "system:serviceaccount:ci:runner",
        }, { key: ec.privateKey, alg: "ES256", kid: "k8s" });
      const ok = await exchangeToken(await clusterToken());
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(
        (await jwtVerify(
          ok.body.access_token,
          createLocalJWKSet(
            await (await beds.app.request("/.well-known/jwks.json")).json(),
          ),
          { currentDate: new Date(bed.clock.now()) },
        )).payload.sub,
        temp.body.id,
      );
      assert.equal((await beds.request("DELETE", `/svc-admin/service-accounts/${temp.body.id}`)).status, 204);
      await refusedBecause(await clusterToken(), "service_account_unavailable");
      const chain2 = await admin.chainLength();
      assert.equal(
        (await beds.request("DELETE", `/svc-admin/workload/policies/${staticPolicy.body.id}`)).status,
        204,
      );
      assert.equal(await admin.chainLength(), chain2 + 1);
      await refusedBecause(await clusterToken(), "unknown_issuer");
    });

    await t.step("50 concurrent exchanges of one token on Postgres: exactly one succeeds", async () => {
      const token = await ciToken();
      const results = await Promise.all(Array.from({ length: 50 }, () => exchangeToken(token)));
      assert.equal(results.filter((r) => r.status === 200).length, 1);
      assert.equal(results.filter((r) => r.status === 400 && r.body.error === "invalid_grant").length, 49);
    });

    await t.step("the routes are in the OpenAPI document, which stays valid", async () => {
      const doc = await (await beds.app.request("/openapi.json")).json();
      const result = await new Validator().validate(structuredClone(doc));
      assert.equal(result.valid, true, JSON.stringify(result.errors));
      assert.ok(doc.paths["/workload/token"].post);
      assert.ok(doc.paths["/svc-admin/workload/policies"].get);
      assert.ok(doc.paths["/svc-admin/workload/policies"].post);
      for (const method of ["get", "patch", "delete"]) {
        assert.ok(doc.paths["/svc-admin/workload/policies/{policyId}"][method], method);
      }
      assert.deepEqual(doc.paths["/svc-admin/workload/policies"].post["x-svc-permissions"], [
        "workload:global:policies-manage",
      ]);
    });

    await t.step("without the plugin there is no such route", async () => {
      const res = await admin.app.request("/workload/token", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: EXCHANGE }).toString(),
      });
      assert.equal(res.status, 404);
      await res.body?.cancel();
      assert.equal((await admin.request("GET", "/svc-admin/workload/policies")).status, 404);
    });
  } finally {
    await beds.close();
    await jwksServer.shutdown();
  }
});
