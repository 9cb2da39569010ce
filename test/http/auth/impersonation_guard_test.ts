/**
 * The impersonation guard (issue 12): under impersonation, every state-changing `/svc-admin`
 * request (and the webhook admin mount) and the self-service routes that change the target's
 * password, factors, passkeys, email or other sessions answer 403 `impersonation_forbidden`,
 * before the route runs; reads and the impersonation's own end stay open. The same calls with the
 * target's own token are not refused by the guard.
 */
import { strict as assert } from "node:assert";
import { refusedUnderImpersonation } from "../../../http/auth/impersonation-guard.ts";
import { adminBed } from "../../support/admin.ts";
import { seeder, uuid } from "../../support/seed.ts";

Deno.test("impersonation guard: the rule table", () => {
  const act = { actorId: uuid(), impersonationId: uuid() };
  const refused: [string, string][] = [
    ["POST", "/svc-admin/users/invite"],
    ["PATCH", "/svc-admin/anything/at/all"],
    ["DELETE", "/svc-admin/roles/x"],
    ["PUT", "/svc-admin/impersonation/consent"],
    ["POST", "/svc-admin/impersonation/consent/approve"],
    ["POST", `/svc-admin/impersonation/${uuid()}/end`],
    ["POST", "/svc-admin/break-glass/rotate"],
    ["POST", "/profile/factors/totp"],
    ["POST", "/profile/factors/totp/confirm"],
    ["DELETE", "/profile/factors/email-otp"],
    ["POST", "/profile/factors/recovery-codes"],
    ["POST", "/auth/passkey/register/options"],
    ["POST", "/auth/passkey/register"],
    ["DELETE", "/auth/passkey/abc"],
    ["PATCH", "/auth/passkey/abc"],
    ["POST", "/auth/invitation/accept"],
    ["POST", "/auth/password/reset"],
    ["POST", "/auth/email/verify/request"],
    ["POST", "/auth/email/verify"],
    ["POST", "/auth/logout-all"],
    ["DELETE", `/profile/sessions/${uuid()}`],
    ["POST", "/hooks-admin"],
  ];
  for (const [method, path] of refused) {
    assert.equal(refusedUnderImpersonation(method, path, act, ["/hooks-admin"]), true, `${method} ${path}`);
  }
  const allowed: [string, string][] = [
    ["GET", "/svc-admin/users"],
    ["GET", "/profile/factors"],
    ["GET", "/auth/passkey"],
    ["POST", "/auth/passkey/login/options"],
    ["POST", "/auth/passkey/login"],
    ["POST", "/auth/logout"],
    ["POST", "/auth/refresh"],
    ["POST", "/auth/switch-organization"],
    ["GET", "/profile/me"],
    ["POST", `/svc-admin/impersonation/${act.impersonationId}/end`],
    ["POST", `/svc-admin/impersonation/${act.impersonationId.toUpperCase()}/end`],
  ];
  for (const [method, path] of allowed) {
    assert.equal(refusedUnderImpersonation(method, path, act, ["/hooks-admin"]), false, `${method} ${path}`);
  }
});

Deno.test("impersonation guard: refused over HTTP across the routes, before the route runs", async () => {
  const admin = await adminBed();
  try {
    const target = await seeder(admin.bed.database.db).user(admin.realmId);
    const start = await admin.request("POST", "/svc-admin/impersonation", {
      body: { targetUserId: target, reason: "guard test" },
    });
    assert.equal(start.status, 201);
    const { accessToken, impersonationId } = await start.json();
    const own =
      (await admin.bed.auth.sessions.signIn({ realmId: admin.realmId, userId: target, mfa: "Password" }))
        .tokens.accessToken;
    const mount = admin.bed.config.webhooks.mountPath;
    const calls: [string, string, unknown?][] = [
      ["POST", "/svc-admin/users/invite", { email: "new@example.test" }],
      ["POST", mount, { url: "https://hooks.example.com/x", eventPatterns: ["user.*"] }],
      ["POST", "/svc-admin/audit/retention", { auditPayloadsOlderThanDays: 3650 }],
      ["PUT", "/svc-admin/impersonation/consent", { consentRequired: true }],
      ["POST", "/svc-admin/impersonation", { targetUserId: admin.users.plain, reason: "chain" }],
      ["POST", "/svc-admin/break-glass/rotate"],
      ["POST", "/profile/factors/totp"],
      ["DELETE", "/profile/factors/totp"],
      ["POST", "/profile/factors/email-otp"],
      ["POST", "/profile/factors/recovery-codes"],
      ["POST", "/auth/passkey/register/options"],
      ["DELETE", `/auth/passkey/${uuid()}`],
      ["PATCH", `/auth/passkey/${uuid()}`, { name: "renamed" }],
      ["POST", "/auth/invitation/accept", { token: "x" }],
      ["POST", "/auth/password/reset", { token: "x", password: "new password 123" }],
      ["POST", "/auth/email/verify/request"],
      ["POST", "/auth/logout-all"],
      ["DELETE", `/profile/sessions/${uuid()}`],
    ];
    const before = await admin.chainLength();
    for (const [method, path, body] of calls) {
      const init = (token: string) => ({
        method,
        headers: {
          Authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const res = await admin.app.request(path, init(accessToken));
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.equal((await res.json()).error.code, "impersonation_forbidden", `${method} ${path}`);
      // (logout-all with the target's own token would end the impersonation session too.)
      if ((path.startsWith("/profile/") || path.startsWith("/auth/")) && path !== "/auth/logout-all") {
        const mine = await admin.app.request(path, init(own));
        const code = mine.status === 403 ? (await mine.json()).error.code : null;
        assert.notEqual(code, "impersonation_forbidden", `the target's own token: ${method} ${path}`);
      }
    }
    assert.equal(await admin.chainLength(), before, "nothing was changed");
    const me = await admin.app.request("/profile/me", {
      headers: { Authorization: `Bearer ${accessToken}` },
    });
    assert.equal(me.status, 200, "reads stay open");
    const end = await admin.app.request(`/svc-admin/impersonation/${impersonationId}/end`, {
      method: "POST",
      headers: { Authorization: `Bearer ${accessToken}` },
    });
    assert.equal(end.status, 200, "its own end stays open");
  } finally {
    await admin.close();
  }
});

Deno.test("impersonation guard: renaming one of the target's passkeys is refused, the name stays", async () => {
  const admin = await adminBed();
  try {
    const target = await seeder(admin.bed.database.db).user(admin.realmId);
    const passkey = await admin.bed.storage.passkeyCredentials.create({
      userId: target,
      credentialId: new Uint8Array(16).fill(7),
      publicKey: new Uint8Array(77).fill(1),
      userVerificationCapable: true,
      transports: ["internal"],
      name: "Laptop",
    });
    const start = await admin.request("POST", "/svc-admin/impersonation", {
      body: { targetUserId: target, reason: "rename test" },
    });
    assert.equal(start.status, 201);
    const { accessToken } = await start.json();
    const rename = (token: string) =>
      admin.app.request(`/auth/passkey/${passkey.id}`, {
        method: "PATCH",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ name: "Renamed by someone else" }),
      });
    const res = await rename(accessToken);
    assert.equal(res.status, 403);
    assert.equal((await res.json()).error.code, "impersonation_forbidden");
    assert.equal((await admin.bed.storage.passkeyCredentials.get(passkey.id))?.name, "Laptop");
    // The target's own session renames it (the guard refuses the borrowed session only).
    const own =
      (await admin.bed.auth.sessions.signIn({ realmId: admin.realmId, userId: target, mfa: "Password" }))
        .tokens.accessToken;
    const mine = await rename(own);
    assert.equal(mine.status, 200, await mine.clone().text());
    assert.equal(
      (await admin.bed.storage.passkeyCredentials.get(passkey.id))?.name,
      "Renamed by someone else",
    );
  } finally {
    await admin.close();
  }
});
