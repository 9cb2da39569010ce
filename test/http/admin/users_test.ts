/**
 * The admin user routes (`http/admin/users.ts`) beyond the fence matrix: what each route does,
 * the organization admin's reach, `If-Match`, re-verification of a changed email, sessions,
 * factor resets, and the erasure route's conventions. The `If-Match` race runs on Postgres.
 */
import { strict as assert } from "node:assert";
import { createApiKey } from "../../../core/credentials/api-keys.ts";
import { type AdminBed, adminBed } from "../../support/admin.ts";
import { bearer } from "../../support/auth.ts";
import { seeder } from "../../support/seed.ts";
import { memberOfA } from "./cases/users.ts";

async function ok(res: Response, status = 200) {
  const text = await res.text();
  assert.equal(res.status, status, text);
  return text === "" ? null : JSON.parse(text);
}

async function refused(res: Response, status: number, code?: string) {
  const body = await res.json();
  assert.equal(res.status, status, JSON.stringify(body));
  if (code !== undefined) assert.equal(body.error.code, code);
}

const entries = async (admin: AdminBed) =>
  await admin.bed.storage.adminAudit.list(admin.realmId, { limit: 1000 });

Deno.test("admin user routes", async (t) => {
  const admin = await adminBed();
  const { bed } = admin;
  try {
    await t.step("create with a password: one argon2id credential, and the user signs in", async () => {
      const created = await ok(
        await admin.request("POST", "/svc-admin/users", {
          body: {
            email: " New.User@Example.TEST ",
            displayName: "New User",
            password: "correct horse",
            emailVerified: true,
            attributes: { department: "eng" },
          },
        }),
        201,
      );
      assert.equal(created.email, "new.user@example.test");
      assert.equal(created.emailVerified, true);
      assert.deepEqual(created.attributes, { department: "eng" });
      assert.equal(created.version, 1);
      assert.equal(created.password, undefined);
      const credential = await bed.storage.passwordCredentials.get(created.id);
      assert.equal(credential?.algorithm, "argon2id");
      const login = await bed.post("/auth/login", {
        email: "new.user@example.test",
        password: "correct horse",
      });
      assert.equal(typeof (await ok(login)).accessToken, "string");
      const [entry] = (await entries(admin)).filter((e) =>
        e.action === "user.create" && e.target === created.id
      );
      assert.equal(
        JSON.stringify(entry.after).includes("correct horse"),
        false,
        "no secret in the audit entry",
      );
      assert.ok(bed.events.some((e) => e.kind === "user.created" && e.userId === created.id));
    });

    await t.step("create: the password rules, a taken email, an unknown organization", async () => {
      await refused(
        await admin.request("POST", "/svc-admin/users", {
          body: { email: "short@example.test", password: "1234567" },
        }),
        400,
        "invalid_request",
      );
      await refused(
        await admin.request("POST", "/svc-admin/users", {
          body: { email: "long@example.test", password: "x".repeat(1025) },
        }),
        400,
        "invalid_request",
      );
      await refused(
        await admin.request("POST", "/svc-admin/users", { body: { email: "NEW.USER@example.test" } }),
        409,
        "user_email_taken",
      );
      await refused(
        await admin.request("POST", "/svc-admin/users", {
          body: { email: "nowhere@example.test", orgId: crypto.randomUUID() },
        }),
        404,
      );
    });

    await t.step("create without a password: password-less, and the invitation flow works", async () => {
      const created = await ok(
        await admin.request("POST", "/svc-admin/users", { body: { email: "invitee@example.test" } }),
        201,
      );
      assert.equal(await bed.storage.passwordCredentials.get(created.id), null);
      await ok(
        await admin.request("POST", "/svc-admin/users/invite", { body: { email: "invitee@example.test" } }),
        201,
      );
      const token = await bed.mailedToken("invitee@example.test", "invitation");
      await ok(await bed.post("/auth/invitation/accept", { token, password: "chosen password" }));
      const login = await bed.post("/auth/login", {
        email: "invitee@example.test",
        password: "chosen password",
      });
      assert.equal(login.status, 200);
    });

    await t.step(
      "creating users is realm-wide: an org admin invites instead (no address leaks)",
      async () => {
        // A 409 for an address taken elsewhere in the realm would tell an organization admin that
        // it exists outside their organization; invitations answer alike (issue 19, item 8).
        for (
          const body of [{ email: "a-member@example.test" }, {
            email: "b-member@example.test",
            orgId: admin.orgB,
          }]
        ) {
          await refused(await admin.request("POST", "/svc-admin/users", { as: "orgA", body }), 403);
        }
        assert.equal(await bed.storage.users.findByEmail(admin.realmId, "a-member@example.test"), null);
        assert.equal(await bed.storage.users.findByEmail(admin.realmId, "b-member@example.test"), null);
      },
    );

    await t.step("list: search, status, paging; an org admin lists its members only", async () => {
      for (const name of ["Zed Alpha", "Zed Beta", "Zora"]) {
        await ok(
          await admin.request("POST", "/svc-admin/users", {
            body: { email: `${name.toLowerCase().replace(" ", ".")}@list.test`, displayName: name },
          }),
          201,
        );
      }
      const zed = await ok(await admin.request("GET", "/svc-admin/users?q=zed&limit=1"));
      assert.equal(zed.total, 2);
      assert.equal(zed.items.length, 1);
      // Pages follow (createdAt, id): the two Zeds come one per page, whichever id sorts first.
      const next = await ok(await admin.request("GET", "/svc-admin/users?q=ZED&limit=1&offset=1"));
      assert.deepEqual(
        [...zed.items, ...next.items].map((u: { displayName: string }) => u.displayName).sort(),
        ["Zed Alpha", "Zed Beta"],
      );
      const byEmail = await ok(await admin.request("GET", "/svc-admin/users?q=zora@"));
      assert.equal(byEmail.total, 1);
      const all = await ok(await admin.request("GET", "/svc-admin/users?limit=200"));
      const ids = all.items.map((u: { id: string }) => u.id);
      assert.equal(all.total, ids.length);
      assert.ok(ids.includes(admin.users.orgB));
      const orgA = await ok(await admin.request("GET", "/svc-admin/users?limit=200", { as: "orgA" }));
      for (const user of orgA.items) {
        assert.equal(await bed.storage.organizations.isMember(admin.orgA, user.id), true);
      }
      assert.ok(!orgA.items.some((u: { id: string }) => u.id === admin.users.orgB));
      await refused(await admin.request("GET", `/svc-admin/users?orgId=${admin.orgB}`, { as: "orgA" }), 404);
      await refused(await admin.request("GET", "/svc-admin/users?status=Gone"), 400);
      await refused(await admin.request("GET", "/svc-admin/users?limit=0"), 400);
    });

    await t.step("read: ETag, organizations; 404 for what the caller may not see", async () => {
      const userId = await memberOfA(admin);
      await bed.storage.organizations.addMember(admin.orgB, userId);
      const res = await admin.request("GET", `/svc-admin/users/${userId}?expand=organizations`);
      const user = await ok(res);
      assert.equal(res.headers.get("ETag"), `"${user.version}"`);
      assert.deepEqual(
        user.organizations.map((o: { id: string }) => o.id).sort(),
        [admin.orgA, admin.orgB].sort(),
      );
      const asA = await ok(
        await admin.request("GET", `/svc-admin/users/${userId}?expand=organizations`, { as: "orgA" }),
      );
      assert.deepEqual(asA.organizations.map((o: { id: string }) => o.id), [admin.orgA]);
      await refused(await admin.request("GET", `/svc-admin/users/${admin.users.orgB}`, { as: "orgA" }), 404);
      await refused(await admin.request("GET", "/svc-admin/users/not-a-uuid"), 404);
      await refused(await admin.request("GET", `/svc-admin/users/${crypto.randomUUID()}`), 404);
      const elsewhere = await seeder(bed.database.db).user(await seeder(bed.database.db).realm());
      await refused(await admin.request("GET", `/svc-admin/users/${elsewhere}`), 404);
    });

    await t.step("update: If-Match, version, attributes replaced, snapshots evicted", async () => {
      const userId = await memberOfA(admin);
      await bed.storage.users.update(userId, { attributes: { level: 1, team: "x" } });
      const before = await bed.snapshots.get(userId, null);
      assert.deepEqual(before?.snapshot.attributes, { level: 1, team: "x" });
      const read = await admin.request("GET", `/svc-admin/users/${userId}`);
      const tag = read.headers.get("ETag")!;
      const res = await admin.request("PATCH", `/svc-admin/users/${userId}`, {
        body: { displayName: "Changed", attributes: { level: 2 } },
        headers: { "If-Match": tag },
      });
      const changed = await ok(res);
      assert.equal(changed.displayName, "Changed");
      assert.deepEqual(changed.attributes, { level: 2 }, "the bag is replaced");
      assert.equal(res.headers.get("ETag"), `"${changed.version}"`);
      assert.notEqual(res.headers.get("ETag"), tag);
      assert.deepEqual((await bed.snapshots.get(userId, null))?.snapshot.attributes, { level: 2 });
      await refused(
        await admin.request("PATCH", `/svc-admin/users/${userId}`, {
          body: { displayName: "Stale" },
          headers: { "If-Match": tag },
        }),
        412,
        "precondition_failed",
      );
      await refused(await admin.request("PATCH", `/svc-admin/users/${userId}`, { body: {} }), 400);
      await refused(
        await admin.request("PATCH", `/svc-admin/users/${userId}`, {
          body: { email: "new.user@example.test" },
        }),
        409,
        "user_email_taken",
      );
      const [entry] = (await entries(admin)).filter((e) => e.action === "user.update" && e.target === userId);
      assert.deepEqual([
        (entry.before as { displayName: unknown }).displayName,
        (entry.after as { displayName: unknown }).displayName,
      ], [null, "Changed"]);
    });

    await t.step("update email: unverified, a verification link goes to the new address", async () => {
      const userId = await memberOfA(admin);
      const changed = await ok(
        await admin.request("PATCH", `/svc-admin/users/${userId}`, { body: { email: "Moved@Example.test" } }),
      );
      assert.deepEqual([changed.email, changed.emailVerified], ["moved@example.test", false]);
      const token = await bed.mailedToken("moved@example.test", "email_verification");
      await ok(await bed.post("/auth/email/verify", { token }));
      assert.equal((await bed.storage.users.get(userId))?.emailVerified, true);
    });

    await t.step("an org admin does not manage users who reach beyond its organization", async () => {
      const shared = await memberOfA(admin);
      await bed.storage.organizations.addMember(admin.orgB, shared);
      await refused(
        await admin.request("PATCH", `/svc-admin/users/${shared}`, {
          as: "orgA",
          body: { email: "x@evil.test" },
        }),
        403,
        "user_outside_organization",
      );
      const powerful = await memberOfA(admin);
      const seed = seeder(bed.database.db);
      const role = await seed.role(admin.realmId, "realm-reader", [{ pattern: "docs:global:read" }]);
      await seed.assign(admin.realmId, role, { kind: "User", id: powerful });
      await bed.snapshots.invalidateUser(powerful);
      await refused(
        await admin.request("POST", `/svc-admin/users/${powerful}/factors/reset`, {
          as: "orgA",
          body: { reason: "takeover" },
        }),
        403,
        "user_outside_organization",
      );
      await refused(
        await admin.request("POST", `/svc-admin/users/${admin.users.global}/suspend`, {
          as: "orgA",
          body: { reason: "takeover" },
        }),
        404,
      );
    });

    await t.step("suspend and reactivate: audited with the reason; no self-suspension", async () => {
      const userId = await memberOfA(admin);
      const { tokens } = await bed.auth.sessions.signIn({ realmId: admin.realmId, userId, mfa: "Password" });
      await refused(await admin.request("POST", `/svc-admin/users/${userId}/suspend`, { body: {} }), 400);
      const report = await ok(
        await admin.request("POST", `/svc-admin/users/${userId}/suspend`, { body: { reason: "fraud" } }),
      );
      assert.equal(report.sessionsEnded, 1);
      assert.equal((await bed.get("/profile/me", tokens.accessToken)).status, 401);
      const [entry] = (await entries(admin)).filter((e) =>
        e.action === "user.suspend" && e.target === userId
      );
      assert.equal((entry.after as { reason: string }).reason, "fraud");
      const list = await ok(await admin.request("GET", "/svc-admin/users?status=Suspended&limit=200"));
      assert.ok(list.items.some((u: { id: string }) => u.id === userId));
      const back = await ok(
        await admin.request("POST", `/svc-admin/users/${userId}/reactivate`, { body: { reason: "cleared" } }),
      );
      assert.equal(back.status, "Active");
      assert.ok(bed.events.some((e) => e.kind === "user.reactivated" && e.userId === userId));
      await refused(
        await admin.request("POST", `/svc-admin/users/${admin.users.global}/suspend`, {
          body: { reason: "oops" },
        }),
        409,
        "cannot_suspend_self",
      );
    });

    await t.step("sessions: list, end one (its token stops at once), end all", async () => {
      const userId = await memberOfA(admin);
      const one = await bed.auth.sessions.signIn({ realmId: admin.realmId, userId, mfa: "Password" });
      const two = await bed.auth.sessions.signIn({ realmId: admin.realmId, userId, mfa: "MultiFactor" });
      const listed = await ok(
        await admin.request("GET", `/svc-admin/users/${userId}/sessions`, { as: "orgA" }),
      );
      assert.equal(listed.total, 2);
      assert.deepEqual(
        listed.items.map((s: { id: string }) => s.id).sort(),
        [one.session.id, two.session.id].sort(),
      );
      assert.equal(
        await ok(await admin.request("DELETE", `/svc-admin/users/${userId}/sessions/${one.session.id}`), 204),
        null,
      );
      assert.equal((await bed.get("/profile/me", one.tokens.accessToken)).status, 401);
      assert.equal((await bed.post("/auth/refresh", { refreshToken: one.tokens.refreshToken })).status, 401);
      assert.equal((await bed.get("/profile/me", two.tokens.accessToken)).status, 200);
      await refused(
        await admin.request("DELETE", `/svc-admin/users/${userId}/sessions/${one.session.id}`),
        404,
      );
      const other = await memberOfA(admin);
      await refused(
        await admin.request("DELETE", `/svc-admin/users/${other}/sessions/${two.session.id}`),
        404,
      );
      const all = await ok(await admin.request("DELETE", `/svc-admin/users/${userId}/sessions`));
      assert.deepEqual([all.sessionsEnded, all.refreshTokensRevoked], [1, 1]);
      assert.equal((await bed.get("/profile/me", two.tokens.accessToken)).status, 401);
      assert.ok(bed.events.some((e) => e.kind === "user.sessions_ended" && e.userId === userId));
    });

    await t.step("factor reset: the named factors, audited with the reason, ledger and mail", async () => {
      const email = "factors@example.test";
      const userId = await bed.user(email, "factors password");
      const { storage } = bed;
      await storage.totpEnrollments.begin(userId, new Uint8Array(16));
      await storage.emailOtpEnrollments.enroll(userId);
      await storage.recoveryCodes.replace(userId, [
        { id: crypto.randomUUID(), codeHash: "a".repeat(64) },
        { id: crypto.randomUUID(), codeHash: "b".repeat(64) },
      ]);
      const only = await ok(
        await admin.request("POST", `/svc-admin/users/${userId}/factors/reset`, {
          body: { factors: ["totp"], reason: "lost phone" },
        }),
      );
      assert.deepEqual(only, {
        userId,
        factors: ["totp"],
        removed: { totp: true, emailOtp: false, passkeys: 0, recoveryCodes: 0 },
      });
      assert.equal(await storage.totpEnrollments.get(userId), null);
      assert.notEqual(await storage.emailOtpEnrollments.enrolledAt(userId), null);
      const all = await ok(
        await admin.request("POST", `/svc-admin/users/${userId}/factors/reset`, {
          body: { reason: "new start" },
        }),
      );
      assert.deepEqual(all.factors, ["totp", "email_otp", "passkeys", "recovery_codes"]);
      assert.deepEqual(all.removed, { totp: false, emailOtp: true, passkeys: 0, recoveryCodes: 2 });
      assert.equal(await storage.recoveryCodes.countRemaining(userId), 0);
      assert.notEqual(await storage.passwordCredentials.get(userId), null, "the password stays");
      const audited = (await entries(admin)).filter((e) =>
        e.action === "user.factors.reset" && e.target === userId
      );
      assert.deepEqual(audited.map((e) => (e.after as { reason: string }).reason), [
        "lost phone",
        "new start",
      ]);
      const ledger = await storage.securityEvents.listByUser(userId);
      assert.equal(ledger.filter((e) => e.kind === "user.factors_reset").length, 2);
      const mail = await bed.mail(email, "factors_reset");
      assert.ok(mail?.text.includes("recovery codes"), mail?.text);
      assert.equal(mail?.text.includes("new start"), false, "the reason stays in the audit entry");
      await refused(
        await admin.request("POST", `/svc-admin/users/${userId}/factors/reset`, {
          body: { factors: ["password"], reason: "x" },
        }),
        400,
      );
      await refused(
        await admin.request("POST", `/svc-admin/users/${userId}/factors/reset`, { body: { factors: [] } }),
        400,
      );
    });

    await t.step("under impersonation every mutation is refused, erasure included", async () => {
      const target = await memberOfA(admin);
      const { tokens } = await bed.auth.sessions.signIn({
        realmId: admin.realmId,
        userId: admin.users.global,
        mfa: "Password",
        impersonation: {
          actorId: admin.users.plain,
          impersonationId: crypto.randomUUID(),
          expiresAt: new Date(bed.clock.now() + 600_000),
        },
      });
      const as = { as: null, headers: bearer(tokens.accessToken) };
      const before = await admin.chainLength();
      await refused(
        await admin.request("POST", `/svc-admin/users/${target}/suspend`, { ...as, body: { reason: "x" } }),
        403,
        "impersonation_forbidden",
      );
      await refused(
        await admin.request("POST", `/svc-admin/users/${target}/erase`, as),
        403,
        "impersonation_forbidden",
      );
      await refused(
        await admin.request("POST", "/svc-admin/users", { ...as, body: { email: "imp@example.test" } }),
        403,
        "impersonation_forbidden",
      );
      assert.equal(await admin.chainLength(), before);
      assert.equal((await bed.storage.users.get(target))?.status, "Active");
    });

    await t.step("erasure evicts the user's snapshots", async () => {
      const target = await memberOfA(admin);
      const { token } = await createApiKey(bed.storage.apiKeys, bed.random, {
        realmId: admin.realmId,
        ownerKind: "User",
        ownerId: target,
        name: "k",
      });
      assert.equal((await bed.snapshots.get(target, null))?.status, "Active");
      await ok(await admin.request("POST", `/svc-admin/users/${target}/erase`));
      assert.equal((await bed.snapshots.get(target, null))?.status, "Suspended");
      assert.equal((await bed.get("/profile/permissions", token)).status, 401);
    });

    await t.step("the chain verifies", async () => {
      assert.equal((await bed.storage.adminAudit.verify(admin.realmId)).valid, true);
    });
  } finally {
    await admin.close();
  }
});

Deno.test("If-Match on Postgres: of two writers holding one version, exactly one wins", async () => {
  const admin = await adminBed({}, { postgres: true });
  try {
    for (let round = 0; round < 5; round++) {
      const userId = await memberOfA(admin);
      const tag = (await admin.request("GET", `/svc-admin/users/${userId}`)).headers.get("ETag")!;
      const answers = await Promise.all(
        ["left", "right", "third"].map((name) =>
          admin.request("PATCH", `/svc-admin/users/${userId}`, {
            body: { displayName: name, attributes: { writer: name } },
            headers: { "If-Match": tag },
          })
        ),
      );
      const statuses = answers.map((res) => res.status).sort();
      assert.deepEqual(statuses, [200, 412, 412], `round ${round}`);
      const winner = await answers.find((res) => res.status === 200)!.json();
      for (const res of answers) if (res.status !== 200) await res.body?.cancel();
      const stored = await admin.bed.storage.users.get(userId);
      assert.equal(stored?.displayName, winner.displayName);
      assert.equal(stored?.version, 2);
      const updates = (await admin.bed.storage.adminAudit.list(admin.realmId, { limit: 1000 }))
        .filter((e) => e.action === "user.update" && e.target === userId);
      assert.equal(updates.length, 1);
    }
  } finally {
    await admin.close();
  }
});
