/**
 * The OIDC client routes beyond their fences (those are in the fence matrix): a confidential
 * client's secret is shown once with no-store and stored only as its SHA-256; a public client has
 * none; redirect URIs must be absolute http(s) URLs in normalized form, scopes known and with
 * openid; a client id is unique in the realm; a change is audited with before and after.
 */
import { strict as assert } from "node:assert";
import { sha256Hex } from "../../../core/digest.ts";
import { adminBed } from "../../support/admin.ts";

Deno.test("admin API OIDC clients: secrets shown once, exact redirect URIs, scopes, suspension", async (t) => {
  const admin = await adminBed();
  try {
    let id = "";
    await t.step("a confidential client's secret is shown once and stored hashed", async () => {
      const res = await admin.request("POST", "/svc-admin/oidc/clients", {
        body: {
          clientId: "web",
          clientType: "confidential",
          redirectUris: ["https://app.example.test/cb"],
          allowedScopes: ["openid", "email"],
        },
      });
      assert.equal(res.status, 201);
      assert.equal(res.headers.get("Cache-Control"), "no-store");
      const body = await res.json();
      id = body.id;
      assert.match(body.clientSecret, /^soc_[A-Za-z0-9_-]{43}$/);
      const stored = await admin.bed.storage.clients.get(id);
      assert.equal(stored?.secretHash, sha256Hex(body.clientSecret));
      assert.equal(stored?.secretAlgorithm, "sha256");
      const read = await (await admin.request("GET", `/svc-admin/oidc/clients/${id}`)).json();
      assert.equal(read.clientSecret, undefined);
      assert.equal(read.hasSecret, true);
      const again = await admin.request("POST", "/svc-admin/oidc/clients", {
        body: { clientId: "web", clientType: "public", redirectUris: ["https://app.example.test/cb"] },
      });
      assert.equal(again.status, 409);
      await again.body?.cancel();
    });

    await t.step("a public client has no secret", async () => {
      const res = await admin.request("POST", "/svc-admin/oidc/clients", {
        body: { clientId: "spa", clientType: "public", redirectUris: ["http://127.0.0.1:5173/cb"] },
      });
      assert.equal(res.status, 201);
      const body = await res.json();
      assert.equal(body.clientSecret, null);
      assert.equal(body.hasSecret, false);
      // Without a list, the standard scopes (offline_access only when listed).
      assert.deepEqual(body.allowedScopes, ["openid", "profile", "email"]);
    });

    await t.step("bad redirect URIs and scopes are refused", async () => {
      const bad = [
        { redirectUris: [] },
        { redirectUris: ["/relative"] },
        { redirectUris: ["https://app.example.test/cb#fragment"] },
        { redirectUris: ["HTTPS://App.Example.test/cb"] },
        { redirectUris: ["javascript:alert(1)"] },
        { redirectUris: ["https://app.example.test/cb"], allowedScopes: ["email"] },
        { redirectUris: ["https://app.example.test/cb"], allowedScopes: ["openid", "admin"] },
      ];
      for (const [i, fields] of bad.entries()) {
        const res = await admin.request("POST", "/svc-admin/oidc/clients", {
          body: { clientId: `bad-${i}`, clientType: "confidential", ...fields },
        });
        assert.equal(res.status, 400, JSON.stringify(fields));
        await res.body?.cancel();
      }
    });

    await t.step("suspending is a change with before and after in the audit chain", async () => {
      const res = await admin.request("PATCH", `/svc-admin/oidc/clients/${id}`, {
        body: { suspended: true },
      });
      assert.equal(res.status, 200);
      assert.equal((await res.json()).suspended, true);
      assert.equal((await admin.bed.storage.clients.get(id))?.suspended, true);
      const missing = await admin.request(
        "PATCH",
        "/svc-admin/oidc/clients/00000000-0000-4000-8000-000000000000",
        {
          body: { suspended: true },
        },
      );
      assert.equal(missing.status, 404);
      await missing.body?.cancel();
    });

    await t.step("private_key_jwt: keys instead of a secret; PATCH replaces them, audited", async () => {
      const key = (x: string) => ({ kty: "OKP", crv: "Ed25519", x, kid: x.slice(0, 4) });
      const created = await admin.request("POST", "/svc-admin/oidc/clients", {
        body: {
          clientId: "keyed",
          clientType: "confidential",
          redirectUris: ["https://app.example.test/cb"],
          tokenEndpointAuthMethod: "private_key_jwt",
          jwks: { keys: [key("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo")] },
        },
      });
      assert.equal(created.status, 201);
      const body = await created.json();
      assert.equal(body.clientSecret, null);
      assert.equal(body.tokenEndpointAuthMethod, "private_key_jwt");
      const stored = (await admin.bed.storage.clients.get(body.id))!;
      assert.equal(stored.secretHash, null);
      assert.equal(stored.jwks?.keys.length, 1);

      const chain = await admin.chainLength();
      const rotated = await admin.request("PATCH", `/svc-admin/oidc/clients/${body.id}`, {
        body: { jwks: { keys: [key("22qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo")] } },
      });
      assert.equal(rotated.status, 200);
      assert.equal((await rotated.json()).jwks.keys[0].kid, "22qY");
      assert.equal(await admin.chainLength(), chain + 1);
      const toUri = await admin.request("PATCH", `/svc-admin/oidc/clients/${body.id}`, {
        body: { jwksUri: "https://keys.example.test/jwks.json" },
      });
      const uriView = await toUri.json();
      assert.equal(uriView.jwksUri, "https://keys.example.test/jwks.json");
      assert.equal(uriView.jwks, null);

      const secretClient = await admin.request("PATCH", `/svc-admin/oidc/clients/${id}`, {
        body: { jwks: { keys: [key("33qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo")] } },
      });
      assert.equal(secretClient.status, 400);
      await secretClient.body?.cancel();
      const both = await admin.request("PATCH", `/svc-admin/oidc/clients/${body.id}`, {
        body: {
          jwks: { keys: [key("44qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo")] },
          jwksUri: "https://k.example.test/",
        },
      });
      assert.equal(both.status, 400);
      await both.body?.cancel();
      const loopback = await admin.request("PATCH", `/svc-admin/oidc/clients/${body.id}`, {
        body: { jwksUri: "https://127.0.0.1/jwks.json" },
      });
      assert.equal(loopback.status, 400);
      await loopback.body?.cancel();
    });
  } finally {
    await admin.close();
  }
});
