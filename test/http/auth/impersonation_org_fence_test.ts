/**
 * Impersonation stays inside the actor's fence (issue 24): under `act`, `POST
 * /auth/switch-organization` and `POST /auth/refresh` with `orgId` answer 403
 * `impersonation_forbidden` unless the actor could impersonate the target in that organization
 * too; nothing is minted or rotated when refused. Through the full app over real storage.
 */
import { strict as assert } from "node:assert";
import { fromBase64Url } from "../../../core/encoding.ts";
import { type AdminBed, adminBed } from "../../support/admin.ts";
import { seeder } from "../../support/seed.ts";

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(new TextDecoder().decode(fromBase64Url(token.split(".")[1])));
}

function post(admin: AdminBed, path: string, body: unknown, token?: string) {
  return admin.app.request(path, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify(body),
  });
}

async function code(res: Response): Promise<string> {
  return (await res.json()).error.code;
}

Deno.test("impersonation: switching organization or refreshing into another organization stays in the actor's fence", async (t) => {
  const admin = await adminBed();
  try {
    const seed = seeder(admin.bed.database.db);
    // A member of A and B: the administrator of A impersonates them in A.
    const target = await seed.user(admin.realmId);
    await admin.bed.storage.organizations.addMember(admin.orgA, target);
    await admin.bed.storage.organizations.addMember(admin.orgB, target);
    const start = await admin.request("POST", "/svc-admin/impersonation", {
      as: "orgA",
      body: { targetUserId: target, reason: "ticket 24" },
    });
    assert.equal(start.status, 201, await start.clone().text());
    const started = await start.json();
    const { accessToken, impersonationId } = started;
    let refreshToken: string = started.refreshToken;
    const act = { sub: admin.users.orgA, imp: impersonationId };
    assert.equal(claimsOf(accessToken).org, admin.orgA);

    await t.step("switch-organization to B is refused; to A (the actor's own) is not", async () => {
      const toB = await post(admin, "/auth/switch-organization", { orgId: admin.orgB }, accessToken);
      assert.equal(toB.status, 403);
      assert.equal(await code(toB), "impersonation_forbidden");
      const toA = await post(admin, "/auth/switch-organization", { orgId: admin.orgA }, accessToken);
      assert.equal(toA.status, 200, await toA.clone().text());
      const claims = claimsOf((await toA.json()).accessToken);
      assert.equal(claims.org, admin.orgA);
      assert.deepEqual(claims.act, act);
    });

    await t.step("refresh with orgId B or null is refused and rotates nothing", async () => {
      for (const orgId of [admin.orgB, null]) {
        const res = await post(admin, "/auth/refresh", { refreshToken, orgId });
        assert.equal(res.status, 403, `orgId ${orgId}`);
        assert.equal(await code(res), "impersonation_forbidden");
      }
      // The refresh token was not spent: it still refreshes (in A), act intact.
      const plain = await post(admin, "/auth/refresh", { refreshToken, orgId: admin.orgA });
      assert.equal(plain.status, 200, await plain.clone().text());
      const body = await plain.json();
      refreshToken = body.refreshToken;
      const claims = claimsOf(body.accessToken);
      assert.equal(claims.org, admin.orgA);
      assert.deepEqual(claims.act, act);
    });

    await t.step("the target's own session still moves freely", async () => {
      const own = await admin.bed.auth.sessions.signIn({
        realmId: admin.realmId,
        userId: target,
        mfa: "Password",
        orgId: admin.orgA,
      });
      const res = await post(
        admin,
        "/auth/switch-organization",
        { orgId: admin.orgB },
        own.tokens.accessToken,
      );
      assert.equal(res.status, 200);
      const refreshed = await post(admin, "/auth/refresh", {
        refreshToken: own.tokens.refreshToken,
        orgId: null,
      });
      assert.equal(refreshed.status, 200);
    });

    await t.step("once the actor may impersonate in B too, the move is allowed, act intact", async () => {
      const role = await seed.role(
        admin.realmId,
        "impersonator-b",
        [{ pattern: "svc:org:impersonate" }],
        admin.orgB,
      );
      await admin.bed.storage.organizations.addMember(admin.orgB, admin.users.orgA);
      await seed.assign(admin.realmId, role, { kind: "User", id: admin.users.orgA }, admin.orgB);
      await admin.bed.snapshots.invalidateAll();
      const toB = await post(admin, "/auth/switch-organization", { orgId: admin.orgB }, accessToken);
      assert.equal(toB.status, 200, await toB.clone().text());
      const claims = claimsOf((await toB.json()).accessToken);
      assert.equal(claims.org, admin.orgB);
      assert.deepEqual(claims.act, act);
      const refreshed = await post(admin, "/auth/refresh", { refreshToken, orgId: admin.orgB });
      assert.equal(refreshed.status, 200, await refreshed.clone().text());
      const next = await refreshed.json();
      refreshToken = next.refreshToken;
      assert.deepEqual(claimsOf(next.accessToken).act, act);
      // Realm-wide (no organization) still needs the global permission.
      const none = await post(admin, "/auth/refresh", { refreshToken, orgId: null });
      assert.equal(none.status, 403);
      assert.equal(await code(none), "impersonation_forbidden");
    });

    await t.step(
      "a realm administrator's impersonation may move to any organization of the target",
      async () => {
        const other = await seed.user(admin.realmId);
        await admin.bed.storage.organizations.addMember(admin.orgB, other);
        const res = await admin.request("POST", "/svc-admin/impersonation", {
          body: { targetUserId: other, reason: "realm-wide" },
        });
        assert.equal(res.status, 201);
        const started = await res.json();
        const toB = await post(
          admin,
          "/auth/switch-organization",
          { orgId: admin.orgB },
          started.accessToken,
        );
        assert.equal(toB.status, 200, await toB.clone().text());
        assert.deepEqual(claimsOf((await toB.json()).accessToken).act, {
          sub: admin.users.global,
          imp: started.impersonationId,
        });
      },
    );
  } finally {
    await admin.close();
  }
});

Deno.test("impersonation: a move is refused when the target holds svc: permissions there that the actor lacks", async () => {
  const admin = await adminBed();
  try {
    const seed = seeder(admin.bed.database.db);
    const target = await seed.user(admin.realmId);
    await admin.bed.storage.organizations.addMember(admin.orgA, target);
    await admin.bed.storage.organizations.addMember(admin.orgB, target);
    // The actor may impersonate in B too (only that).
    const impersonateB = await seed.role(
      admin.realmId,
      "imp-b",
      [{ pattern: "svc:org:impersonate" }],
      admin.orgB,
    );
    await admin.bed.storage.organizations.addMember(admin.orgB, admin.users.orgA);
    await seed.assign(admin.realmId, impersonateB, { kind: "User", id: admin.users.orgA }, admin.orgB);
    await admin.bed.snapshots.invalidateAll();
    const start = await admin.request("POST", "/svc-admin/impersonation", {
      as: "orgA",
      body: { targetUserId: target, reason: "ticket 24" },
    });
    assert.equal(start.status, 201, await start.clone().text());
    const { accessToken } = await start.json();
    // The target becomes a users administrator of B (a start now would be refused as privileged).
    const adminB = await seed.role(
      admin.realmId,
      "users-b",
      [{ pattern: "svc:org:users-manage" }],
      admin.orgB,
    );
    await seed.assign(admin.realmId, adminB, { kind: "User", id: target }, admin.orgB);
    await admin.bed.snapshots.invalidateAll();
    const toB = await post(admin, "/auth/switch-organization", { orgId: admin.orgB }, accessToken);
    assert.equal(toB.status, 403);
    assert.equal(await code(toB), "impersonation_forbidden");
  } finally {
    await admin.close();
  }
});
