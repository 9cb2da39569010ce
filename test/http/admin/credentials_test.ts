/**
 * The credential routes of the admin API beyond their fences (those are in the fence matrix):
 * a created service account's secret and a created API key's token work at once and are never
 * stored or audited in clear; a rotation keeps the old secret through the overlap; disabling
 * stops the account and its keys; deleting revokes its keys; revocation keeps the first time
 * and an unknown key is a no-op; a signing-key rotation keeps the old key published.
 */
import { strict as assert } from "node:assert";
import { toBase64 } from "../../../core/encoding.ts";
import { adminBed } from "../../support/admin.ts";

Deno.test("admin API credentials: service accounts, API keys, signing keys", async (t) => {
  const admin = await adminBed();
  const basic = (key: string, secret: string) => ({
    Authorization: `Basic ${toBase64(new TextEncoder().encode(`${key}:${secret}`))}`,
  });
  const whoAmI = async (headers: Record<string, string>) =>
    (await admin.app.request("/svc-admin/audit/verify", { headers })).status;
  try {
    let accountId = "";
    let secret = "";
    await t.step(
      "a created account's secret works once created, and is shown once, with no-store",
      async () => {
        const res = await admin.request("POST", "/svc-admin/service-accounts", {
          body: { key: "reporting", displayName: "Reporting" },
        });
        assert.equal(res.status, 201);
        assert.equal(res.headers.get("Cache-Control"), "no-store");
        const body = await res.json();
        accountId = body.id;
        secret = body.secret;
        assert.match(secret, /^sas_[A-Za-z0-9_-]{43}$/);
        // Authenticated (403: the account holds no permission), not refused as a bad credential (401).
        assert.equal(await whoAmI(basic("reporting", secret)), 403);
        assert.equal(await whoAmI(basic("reporting", `${secret}x`)), 401);
        const read = await (await admin.request("GET", `/svc-admin/service-accounts/${accountId}`)).json();
        assert.equal(read.secret, undefined);
        const again = await admin.request("POST", "/svc-admin/service-accounts", {
          body: { key: "reporting", displayName: "Again" },
        });
        assert.equal(again.status, 409);
        assert.equal((await again.json()).error.code, "service_account_key_taken");
        // Searched by key or display name, case-insensitive (the console's service-account picker).
        const found = await (await admin.request("GET", "/svc-admin/service-accounts?search=REPORT")).json();
        assert.deepEqual(found.items.map((a: { id: string }) => a.id), [accountId]);
        assert.equal(found.total, 1);
        const none = await (await admin.request("GET", "/svc-admin/service-accounts?search=%25")).json();
        assert.equal(none.total, 0, "% matches itself, not everything");
        assert.equal(
          (await admin.request("GET", `/svc-admin/service-accounts?search=${"x".repeat(201)}`)).status,
          400,
        );
        assert.equal((await admin.request("GET", "/svc-admin/service-accounts?search=a%00b")).status, 400);
      },
    );

    await t.step("rotation: both secrets work through the overlap, then only the new one", async () => {
      const res = await admin.request("POST", `/svc-admin/service-accounts/${accountId}/rotate-secret`, {
        body: { overlapSeconds: 60 },
      });
      assert.equal(res.status, 200);
      const rotated = await res.json();
      assert.notEqual(rotated.secret, secret);
      assert.equal(await whoAmI(basic("reporting", secret)), 403);
      assert.equal(await whoAmI(basic("reporting", rotated.secret)), 403);
      admin.bed.clock.advance(61_000);
      assert.equal(await whoAmI(basic("reporting", secret)), 401);
      assert.equal(await whoAmI(basic("reporting", rotated.secret)), 403);
      secret = rotated.secret;
      // Without a body, the default overlap (one day).
      const second = await admin.request("POST", `/svc-admin/service-accounts/${accountId}/rotate-secret`);
      const body = await second.json();
      assert.equal(Date.parse(body.previousSecretExpiresAt) - admin.bed.clock.now(), 86_400_000);
      secret = body.secret;
    });

    let token = "";
    let keyId = "";
    await t.step("an API key for the account works; disabling the account stops both", async () => {
      const res = await admin.request("POST", "/svc-admin/api-keys", {
        body: { ownerKind: "ServiceAccount", ownerId: accountId, name: "nightly" },
      });
      assert.equal(res.status, 201);
      assert.equal(res.headers.get("Cache-Control"), "no-store");
      ({ token, id: keyId } = await res.json());
      assert.equal(await whoAmI({ Authorization: `Bearer ${token}` }), 403);
      const listed = await (await admin.request(
        "GET",
        `/svc-admin/api-keys?ownerKind=ServiceAccount&ownerId=${accountId}`,
      )).json();
      assert.deepEqual(listed.items.map((k: { id: string }) => k.id), [keyId]);
      assert.ok(!JSON.stringify(listed).includes(token.slice(4)));
      assert.equal(
        (await admin.request("POST", `/svc-admin/service-accounts/${accountId}/disable`)).status,
        200,
      );
      assert.equal(await whoAmI(basic("reporting", secret)), 401);
      assert.equal(await whoAmI({ Authorization: `Bearer ${token}` }), 401);
      assert.equal(
        (await admin.request("POST", `/svc-admin/service-accounts/${accountId}/enable`)).status,
        200,
      );
      assert.equal(await whoAmI({ Authorization: `Bearer ${token}` }), 403);
    });

    await t.step("revocation keeps the first time; an unknown key is a no-op for a realm admin", async () => {
      const path = `/svc-admin/api-keys/${keyId}/revoke`;
      const before = await admin.chainLength();
      assert.equal((await admin.request("POST", path)).status, 204);
      const first = (await admin.bed.storage.apiKeys.get(keyId))!.revokedAt!;
      admin.bed.clock.advance(5_000);
      assert.equal((await admin.request("POST", path)).status, 204);
      assert.equal((await admin.bed.storage.apiKeys.get(keyId))!.revokedAt!.getTime(), first.getTime());
      assert.equal(await admin.chainLength(), before + 1, "the repeat changes nothing and appends nothing");
      assert.equal(await whoAmI({ Authorization: `Bearer ${token}` }), 401);
      const unknown = "/svc-admin/api-keys/00000000-0000-4000-8000-000000000000/revoke";
      assert.equal((await admin.request("POST", unknown)).status, 204);
      assert.equal((await admin.request("POST", unknown, { as: "orgA" })).status, 404);
      assert.equal((await admin.request("POST", "/svc-admin/api-keys/not-a-uuid/revoke")).status, 204);
    });

    await t.step(
      "deleting the account revokes its keys; nothing secret reaches the audit chain",
      async () => {
        const res = await admin.request("POST", "/svc-admin/api-keys", {
          body: { ownerKind: "ServiceAccount", ownerId: accountId, name: "second" },
        });
        const second = await res.json();
        assert.equal((await admin.request("DELETE", `/svc-admin/service-accounts/${accountId}`)).status, 204);
        assert.notEqual((await admin.bed.storage.apiKeys.get(second.id))!.revokedAt, null);
        assert.equal((await admin.request("GET", `/svc-admin/service-accounts/${accountId}`)).status, 404);
        const entries = await admin.bed.storage.adminAudit.list(admin.realmId, { limit: 1000 });
        const text = JSON.stringify(entries);
        assert.ok(!text.includes("sas_") && !text.includes("sak_"), "no secret in the chain");
        for (
          const action of [
            "service_account.create",
            "service_account.rotate_secret",
            "api_key.create",
            "api_key.revoke",
            "service_account.delete",
          ]
        ) {
          assert.ok(entries.some((e) => e.action === action), action);
        }
        assert.ok(admin.bed.events.some((e) => e.kind === "service_account.deleted"));
      },
    );

    await t.step("an org admin lists only keys of its members; creating a key is global only", async () => {
      const created = await admin.request("POST", "/svc-admin/api-keys", {
        body: { ownerKind: "User", ownerId: admin.users.plain, name: "plain's key" },
      });
      assert.equal(created.status, 201);
      const mine = await (await admin.request("GET", "/svc-admin/api-keys", { as: "orgA" })).json();
      assert.ok(
        mine.items.length >= 1 &&
          mine.items.every((k: { ownerId: string }) => k.ownerId === admin.users.plain),
      );
      const other = await (await admin.request("GET", "/svc-admin/api-keys", { as: "orgB" })).json();
      assert.equal(other.total, 0);
      assert.equal(
        (await admin.request("POST", "/svc-admin/api-keys", {
          as: "orgA",
          body: { ownerKind: "User", ownerId: admin.users.plain, name: "x" },
        })).status,
        403,
      );
    });

    await t.step(
      "a signing-key rotation keeps the old key published and tokens it signed valid",
      async () => {
        const jwks = async () =>
          (await (await admin.app.request("/.well-known/jwks.json")).json()).keys.map((k: { kid: string }) =>
            k.kid
          );
        const [old] = await jwks();
        const res = await admin.request("POST", "/svc-admin/signing-keys/rotate");
        assert.equal(res.status, 200);
        const rotation = await res.json();
        assert.equal(rotation.retiredKid, old);
        const after = await jwks();
        assert.equal(after[0], rotation.primaryKid);
        assert.ok(after.includes(old));
        assert.equal((await admin.request("GET", "/profile/me")).status, 200, "the old token still verifies");
        const listed = await (await admin.request("GET", "/svc-admin/signing-keys")).json();
        assert.deepEqual(
          listed.items.slice(0, 2).map((k: { kid: string; primary: boolean }) => [k.kid, k.primary]),
          [
            [rotation.primaryKid, true],
            [old, false],
          ],
        );
      },
    );
  } finally {
    await admin.close();
  }
});
