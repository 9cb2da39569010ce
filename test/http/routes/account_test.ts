/**
 * Account flows end to end over HTTP (spec 5.5): forgot password always 202, the reset flow
 * (single use, exactly one working password, every refresh token revoked), email verification,
 * and the invitation path from the bootstrap administrator: invite → accept → login, beside the
 * administrator's own `svc:*:*` powers (`/svc-admin/authz/inspect`).
 */
import { strict as assert } from "node:assert";
import { loginBed } from "../../support/login.ts";

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

Deno.test("account flows over HTTP", async (t) => {
  const bed = await loginBed({
    SVC_ABUSE_PER_IP_LIMIT: "1000",
    SVC_BOOTSTRAP_ADMIN_EMAIL: "root@example.test",
    SVC_BOOTSTRAP_ADMIN_PASSWORD: "bootstrap secret",
  });
  const signIn = async (email: string, password: string) => {
    const res = await bed.post("/auth/login", { email, password });
    assert.equal(res.status, 200, await res.clone().text());
    return await res.json() as { accessToken: string; refreshToken: string };
  };
  try {
    await t.step("forgot password always answers 202; only a real user gets mail", async () => {
      await bed.user("ivy@example.test", "ivy's old password");
      const known = await bed.post("/auth/password/forgot", { email: "ivy@example.test" });
      const unknown = await bed.post("/auth/password/forgot", { email: "ghost@example.test" });
      assert.equal(known.status, 202);
      assert.equal(unknown.status, 202);
      assert.deepEqual(await known.json(), await unknown.json());
      assert.ok(await bed.mail("ivy@example.test", "password_reset"));
      assert.equal(await bed.mail("ghost@example.test", "password_reset"), null);
      const bad = await bed.post("/auth/password/forgot", { mail: "x" });
      assert.equal(bad.status, 400);
    });

    await t.step("the reset replaces the password, revokes refresh tokens, and works once", async () => {
      const before = await signIn("ivy@example.test", "ivy's old password");
      const other = await signIn("ivy@example.test", "ivy's old password");
      const token = await bed.mailedToken("ivy@example.test", "password_reset");

      let res = await bed.post("/auth/password/reset", { token, password: "short" });
      assert.equal(res.status, 400, "too short, and the token is not spent");
      res = await bed.post("/auth/password/reset", { token, password: "ivy's new password" });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { status: "password_reset" });

      for (const tokens of [before, other]) {
        res = await bed.post("/auth/refresh", { refreshToken: tokens.refreshToken });
        assert.equal(res.status, 401);
        assert.equal((await res.json()).error.code, "invalid_refresh_token");
      }
      assert.equal(
        (await bed.post("/auth/login", { email: "ivy@example.test", password: "ivy's old password" })).status,
        401,
      );
      await signIn("ivy@example.test", "ivy's new password");
      const user = await bed.storage.users.findByEmail(bed.realmId, "ivy@example.test");
      assert.equal((await bed.storage.passwordCredentials.list(user!.id)).length, 1);

      res = await bed.post("/auth/password/reset", { token, password: "yet another password" });
      assert.equal(res.status, 401);
      assert.equal((await res.json()).error.code, "invalid_token");
      res = await bed.post("/auth/password/reset", {
        token: before.accessToken,
        password: "yet another password",
      });
      assert.equal((await res.json()).error.code, "invalid_token", "an access token is no reset token");
      assert.ok(
        (await bed.storage.securityEvents.listByUser(user!.id)).some((e) => e.kind === "user.password_reset"),
      );
    });

    await t.step("email verification: request when signed in, confirm once", async () => {
      const user = await bed.storage.users.create({ realmId: bed.realmId, email: "jay@example.test" });
      await bed.storage.passwordCredentials.replace(
        user.id,
        await bed.login.passwords.hash("jay's password"),
      );
      const tokens = await signIn("jay@example.test", "jay's password");
      assert.equal((await bed.post("/auth/email/verify/request", {})).status, 401);
      let res = await bed.post("/auth/email/verify/request", {}, { headers: bearer(tokens.accessToken) });
      assert.equal(res.status, 202);
      assert.deepEqual(await res.json(), { status: "sent" });
      const token = await bed.mailedToken("jay@example.test", "email_verification");
      res = await bed.post("/auth/email/verify", { token });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { userId: user.id, email: "jay@example.test", emailVerified: true });
      assert.equal((await bed.storage.users.get(user.id))?.emailVerified, true);
      assert.equal((await bed.post("/auth/email/verify", { token })).status, 401);
      res = await bed.post("/auth/email/verify/request", {}, { headers: bearer(tokens.accessToken) });
      assert.deepEqual(await res.json(), { status: "already_verified" });
    });

    let adminToken = "";
    await t.step("the bootstrap administrator holds every svc: permission, idempotently", async () => {
      const first = await bed.login.bootstrap(bed.realmId);
      assert.ok(first);
      assert.equal(first.userCreated, true);
      assert.equal(first.passwordSet, true);
      const again = await bed.login.bootstrap(bed.realmId);
      assert.deepEqual(
        { ...again, userId: again!.userId },
        {
          userId: first.userId,
          roleId: first.roleId,
          userCreated: false,
          roleCreated: false,
          grantAdded: false,
          assignmentCreated: false,
          passwordSet: false,
        },
      );
      adminToken = (await signIn("root@example.test", "bootstrap secret")).accessToken;
      const ivy = await bed.storage.users.findByEmail(bed.realmId, "ivy@example.test");
      const res = await bed.app.request("/svc-admin/authz/inspect", {
        method: "POST",
        headers: { ...bearer(adminToken), "Content-Type": "application/json" },
        body: JSON.stringify({ userId: ivy!.id, check: { permission: "docs:global:read" } }),
      });
      assert.equal(res.status, 200);
      assert.equal((await res.json()).decision, "DeniedByDefault");
      const perms = await (await bed.get("/profile/permissions", adminToken)).json();
      assert.deepEqual(perms.permissions, ["svc:*:*"]);
    });

    await t.step("invite → accept → login; the invite endpoint is fenced", async () => {
      const ivyTokens = await signIn("ivy@example.test", "ivy's new password");
      let res = await bed.post("/svc-admin/users/invite", { email: "kim@example.test" }, {
        headers: bearer(ivyTokens.accessToken),
      });
      assert.equal(res.status, 403, "ivy holds no svc: permission");
      assert.equal((await bed.post("/svc-admin/users/invite", { email: "kim@example.test" })).status, 401);

      const org = await bed.storage.organizations.create({
        realmId: bed.realmId,
        name: "kim-org",
        displayName: "Kim Org",
      });
      res = await bed.post("/svc-admin/users/invite", { email: "Kim@Example.test", orgId: org.id }, {
        headers: bearer(adminToken),
      });
      assert.equal(res.status, 201);
      const invited = await res.json();
      assert.equal(invited.email, "kim@example.test");
      assert.equal(invited.userCreated, true);
      assert.equal(await bed.storage.passwordCredentials.get(invited.userId), null, "no credential yet");
      assert.equal(await bed.storage.organizations.isMember(org.id, invited.userId), true);
      assert.equal(
        (await bed.post("/auth/login", { email: "kim@example.test", password: "anything at all" })).status,
        401,
      );

      const token = await bed.mailedToken("kim@example.test", "invitation");
      res = await bed.post("/auth/invitation/accept", {
        token,
        password: "kim's password",
        displayName: "Kim",
      });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { userId: invited.userId, email: "kim@example.test" });
      const kim = await bed.storage.users.get(invited.userId);
      assert.equal(kim?.emailVerified, true);
      assert.equal(kim?.displayName, "Kim");

      const tokens = await signIn("kim@example.test", "kim's password");
      assert.ok(tokens.accessToken);
      res = await bed.post("/auth/login", {
        email: "kim@example.test",
        password: "kim's password",
        org: org.id,
      });
      assert.equal(res.status, 200, "a member of the org of the invitation");

      res = await bed.post("/auth/invitation/accept", { token, password: "another password" });
      assert.equal(res.status, 401, "the invitation works once");
      assert.equal((await res.json()).error.code, "invalid_token");
      res = await bed.post("/svc-admin/users/invite", { email: "kim@example.test" }, {
        headers: bearer(adminToken),
      });
      assert.equal(res.status, 409, "the address already has a password");
    });
  } finally {
    await bed.close();
  }
});
