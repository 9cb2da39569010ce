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
      assert.deepEqual(body.allowedScopes, ["openid"]);
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
  } finally {
    await admin.close();
  }
});
