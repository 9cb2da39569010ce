/**
 * Account flows end to end over HTTP (spec 5.5): forgot password always 202, the reset flow
 * (single use, exactly one working password, every refresh token revoked), email verification,
 * and the invitation path from the bootstrap administrator: invite → accept → login, beside the
 * administrator's own `svc:*:*` powers (`/svc-admin/authz/inspect`).
 */
import { strict as assert } from "node:assert";
import { USERS_INVITE_ORG } from "../../../core/definitions/svc-permissions.ts";
import { UUID_PATTERN } from "../../../core/ids.ts";
import { loginBed } from "../../support/login.ts";
import { seeder } from "../../support/seed.ts";

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
      assert.equal(invited.orgId, org.id);
      assert.equal(await bed.storage.passwordCredentials.get(invited.userId), null, "no credential yet");
      assert.equal(
        await bed.storage.organizations.isMember(org.id, invited.userId),
        false,
        "not before accepting",
      );
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
      assert.equal(res.status, 200, "a member of the org of the invitation, once accepted");

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

Deno.test("invitations stay inside the caller's fence; nobody joins an organization without accepting", async (t) => {
  const bed = await loginBed({
    SVC_ABUSE_PER_IP_LIMIT: "1000",
    SVC_BOOTSTRAP_ADMIN_EMAIL: "root@example.test",
    SVC_BOOTSTRAP_ADMIN_PASSWORD: "bootstrap secret",
  });
  const seed = seeder(bed.database.db);
  const tokenOf = async (userId: string, orgId: string | null = null) =>
    (await bed.auth.sessions.signIn({ realmId: bed.realmId, userId, mfa: "Password", orgId })).tokens
      .accessToken;
  try {
    const orgA =
      (await bed.storage.organizations.create({ realmId: bed.realmId, name: "a", displayName: "A" })).id;
    const orgB =
      (await bed.storage.organizations.create({ realmId: bed.realmId, name: "b", displayName: "B" })).id;
    // Anna administers invitations of organization A only.
    const anna = await bed.user("anna@example.test", "anna's password");
    await bed.storage.organizations.addMember(orgA, anna);
    const inviters = await seed.role(bed.realmId, "inviters", [{ pattern: USERS_INVITE_ORG }], orgA);
    await seed.assign(bed.realmId, inviters, { kind: "User", id: anna }, orgA);
    const annaToken = await tokenOf(anna, orgA);
    // Bob (with a password) and Pat (invited earlier, no password yet) belong to organization B.
    const bob = await bed.user("bob@example.test", "bob's password");
    await bed.storage.organizations.addMember(orgB, bob);
    const pat = (await bed.storage.users.create({ realmId: bed.realmId, email: "pat@example.test" })).id;
    await bed.storage.organizations.addMember(orgB, pat);

    const invite = (token: string, body: unknown) =>
      bed.post("/svc-admin/users/invite", body, { headers: bearer(token) });
    const answers: Record<string, Record<string, unknown>> = {};

    await t.step(
      "an org admin gets the same answer for a new address and for addresses of other orgs",
      async () => {
        for (const email of ["new@example.test", "bob@example.test", "pat@example.test"]) {
          const res = await invite(annaToken, { email, orgId: orgA });
          assert.equal(res.status, 201, `${email}: ${await res.clone().text()}`);
          answers[email] = await res.json();
        }
        const shapes = Object.values(answers).map((a) => ({
          keys: Object.keys(a).sort(),
          orgId: a.orgId,
          userId: typeof a.userId === "string" && UUID_PATTERN.test(a.userId),
          expiresAt: a.expiresAt,
        }));
        assert.deepEqual(shapes[1], shapes[0]);
        assert.deepEqual(shapes[2], shapes[0]);
        assert.deepEqual(shapes[0].keys, ["email", "expiresAt", "orgId", "userId"]);
        // The invitation events (which org A's webhooks receive) carry nothing that tells them apart.
        const invited = bed.events.filter((e) => e.kind === "user.invited");
        assert.equal(invited.length, 3);
        for (const e of invited) {
          assert.deepEqual({ orgId: e.orgId, data: e.data }, { orgId: orgA, data: { invitedBy: anna } });
        }
      },
    );

    await t.step("no one joins organization A by being invited", async () => {
      for (const userId of [bob, pat, answers["new@example.test"].userId as string]) {
        assert.equal(await bed.storage.organizations.isMember(orgA, userId), false);
      }
      assert.equal(await bed.storage.organizations.isMember(orgB, bob), true);
      assert.equal(await bed.storage.passwordCredentials.get(pat), null, "Pat's account is untouched");
    });

    await t.step("the org admin cannot invite into another organization", async () => {
      const res = await invite(annaToken, { email: "new@example.test", orgId: orgB });
      assert.equal(res.status, 404, "another organization is invisible to an org admin");
    });

    await t.step("acceptance adds the membership", async () => {
      // A new address: accepting chooses the password and joins A.
      let res = await bed.post("/auth/invitation/accept", {
        token: await bed.mailedToken("new@example.test", "invitation"),
        password: "new user's password",
      });
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(
        await bed.storage.organizations.isMember(orgA, answers["new@example.test"].userId as string),
        true,
      );

      // Pat (no password yet, member of B): the same, and Pat stays in B.
      res = await bed.post("/auth/invitation/accept", {
        token: await bed.mailedToken("pat@example.test", "invitation"),
        password: "pat's password",
      });
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(await bed.storage.organizations.isMember(orgA, pat), true);
      assert.equal(await bed.storage.organizations.isMember(orgB, pat), true);

      // Bob has a password: he accepts signed in as himself, and only then joins A.
      const bobToken = await bed.mailedToken("bob@example.test", "invitation");
      res = await bed.post("/auth/invitation/accept", { token: bobToken });
      assert.equal(res.status, 401, "an existing account accepts signed in");
      res = await bed.post("/auth/invitation/accept", { token: bobToken }, { headers: bearer(annaToken) });
      assert.equal(res.status, 403, "nobody else accepts for Bob");
      assert.equal(await bed.storage.organizations.isMember(orgA, bob), false);
      res = await bed.post("/auth/invitation/accept", { token: bobToken, password: "a new password" }, {
        headers: bearer(await tokenOf(bob)),
      });
      assert.equal(res.status, 409, "an invitation never replaces an existing password");
      res = await bed.post("/auth/invitation/accept", { token: bobToken }, {
        headers: bearer(await tokenOf(bob)),
      });
      assert.equal(res.status, 200, await res.clone().text());
      assert.deepEqual(await res.json(), { userId: bob, email: "bob@example.test" });
      assert.equal(await bed.storage.organizations.isMember(orgA, bob), true);
      assert.equal(
        (await bed.post("/auth/login", { email: "bob@example.test", password: "bob's password" })).status,
        200,
        "Bob's password is unchanged",
      );
      res = await bed.post("/auth/invitation/accept", { token: bobToken }, {
        headers: bearer(await tokenOf(bob)),
      });
      assert.equal(res.status, 401, "single use");
    });

    await t.step("inside the fence: members of A answer 409; a global admin sees the realm", async () => {
      let res = await invite(annaToken, { email: "bob@example.test", orgId: orgA });
      assert.equal(res.status, 409);
      assert.equal((await res.json()).error.details.reason, "already_member");
      await bed.login.bootstrap(bed.realmId);
      const root = await bed.storage.users.findByEmail(bed.realmId, "root@example.test");
      const rootToken = await tokenOf(root!.id);
      res = await invite(rootToken, { email: "bob@example.test" });
      assert.equal(res.status, 409, "a realm-wide invitation of an account with a password");
      assert.equal((await res.json()).error.details.reason, "user_exists");
      res = await invite(rootToken, { email: "bob@example.test", orgId: orgB });
      assert.equal(res.status, 409);
      const carl = await bed.user("carl@example.test", "carl's password");
      res = await invite(rootToken, { email: "carl@example.test", orgId: orgB });
      assert.equal(res.status, 201, "an invitation to join B");
      assert.equal(await bed.storage.organizations.isMember(orgB, carl), false);
      assert.ok(await bed.mail("carl@example.test", "invitation"));
    });
  } finally {
    await bed.close();
  }
});
