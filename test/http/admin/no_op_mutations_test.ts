/**
 * An admin request that changes nothing writes no audit entry and emits no event, on every route
 * alike (issue 24, finding 9): suspending a suspended user with nothing left to end, reactivating
 * an active user, ending the sessions of a user who has none, resetting factors a user does not
 * have, disabling a disabled service account, revoking a revoked API key, verifying a verified
 * domain, an identical organization update, setting the consent mode it already has. Each answers what it answered before
 * (the unchanged resource, an all-zero report, 204), and the chain still verifies.
 */
import { strict as assert } from "node:assert";
import { createApiKey } from "../../../core/credentials/api-keys.ts";
import { createServiceAccount } from "../../../core/credentials/service-accounts.ts";
import { EMAIL_DOMAIN } from "../../../core/storage/organizations.ts";
import { adminBed } from "../../support/admin.ts";
import { memberOfA } from "./cases/users.ts";

Deno.test("admin no-ops write no audit entry and emit no event", async (t) => {
  const admin = await adminBed();
  const { storage } = admin.bed;
  try {
    /** Calls as the realm administrator; asserts the status, no new entry and no new event. */
    const noOp = async (method: string, path: string, status: number, body?: unknown) => {
      const chain = await admin.chainLength();
      const events = admin.bed.events.length;
      const res = await admin.request(method, path, { body });
      const text = await res.text();
      assert.equal(res.status, status, text);
      assert.equal(await admin.chainLength(), chain, `${method} ${path}: no audit entry`);
      assert.deepEqual(admin.bed.events.slice(events), [], `${method} ${path}: no event`);
      return text === "" ? null : JSON.parse(text);
    };

    await t.step("suspend a suspended user with no session or key left", async () => {
      const userId = await memberOfA(admin);
      await storage.users.update(userId, { status: "Suspended" });
      const report = await noOp("POST", `/svc-admin/users/${userId}/suspend`, 200, { reason: "again" });
      assert.deepEqual(report, {
        userId,
        wasSuspended: true,
        sessionsEnded: 0,
        refreshTokensRevoked: 0,
        apiKeysRevoked: 0,
      });
      assert.equal((await storage.users.get(userId))?.status, "Suspended");
    });

    await t.step("a suspended user's session found on a repeat is ended, and that is audited", async () => {
      const userId = await memberOfA(admin);
      await admin.bed.auth.sessions.signIn({ realmId: admin.realmId, userId, mfa: "Password" });
      await storage.users.update(userId, { status: "Suspended" });
      const chain = await admin.chainLength();
      const res = await admin.request("POST", `/svc-admin/users/${userId}/suspend`, {
        body: { reason: "sweep" },
      });
      assert.equal(res.status, 200);
      const report = await res.json();
      assert.equal(report.wasSuspended, true);
      assert.equal(report.sessionsEnded, 1);
      assert.equal(await admin.chainLength(), chain + 1);
    });

    await t.step("reactivate an active user", async () => {
      const userId = await memberOfA(admin);
      const before = (await storage.users.get(userId))!;
      const user = await noOp("POST", `/svc-admin/users/${userId}/reactivate`, 200, {});
      assert.equal(user.status, "Active");
      assert.equal((await storage.users.get(userId))?.version, before.version, "the user was not written");
    });

    await t.step("end the sessions of a user who has none", async () => {
      const userId = await memberOfA(admin);
      const report = await noOp("DELETE", `/svc-admin/users/${userId}/sessions`, 200);
      assert.deepEqual(report, { userId, sessionsEnded: 0, refreshTokensRevoked: 0 });
    });

    await t.step("reset factors a user does not have (no mail either)", async () => {
      const userId = await memberOfA(admin);
      const mail = (await admin.bed.database.db.selectFrom("mail_outbox").select("id").execute()).length;
      const report = await noOp("POST", `/svc-admin/users/${userId}/factors/reset`, 200, {
        reason: "lost phone",
      });
      assert.deepEqual(report.removed, { totp: false, emailOtp: false, passkeys: 0, recoveryCodes: 0 });
      const after = (await admin.bed.database.db.selectFrom("mail_outbox").select("id").execute()).length;
      assert.equal(after, mail, "no mail");
    });

    await t.step("disable a disabled service account; revoke a revoked API key", async () => {
      const { account } = await createServiceAccount(storage.serviceAccounts, admin.bed.random, {
        realmId: admin.realmId,
        key: `noop-${crypto.randomUUID().slice(0, 8)}`,
        displayName: "No-op",
      });
      await storage.serviceAccounts.setDisabled(account.id, true);
      const view = await noOp("POST", `/svc-admin/service-accounts/${account.id}/disable`, 200);
      assert.equal(view.disabled, true);
      const { key } = await createApiKey(storage.apiKeys, admin.bed.random, {
        realmId: admin.realmId,
        ownerKind: "ServiceAccount",
        ownerId: account.id,
        name: "ci",
      });
      await storage.apiKeys.revoke(key.id);
      await noOp("POST", `/svc-admin/api-keys/${key.id}/revoke`, 204);
    });

    await t.step("verify a verified domain (override)", async () => {
      const domain = await storage.organizations.addDomain({
        orgId: admin.orgA,
        kind: EMAIL_DOMAIN,
        value: `noop-${crypto.randomUUID().slice(0, 8)}.example`,
        verificationToken: "token",
      });
      await storage.organizations.setDomainVerified(domain.id, true);
      const view = await noOp(
        "POST",
        `/svc-admin/organizations/${admin.orgA}/domains/${domain.id}/verify`,
        200,
        { override: true, reason: "again" },
      );
      assert.equal(view.verified, true);
    });

    await t.step("identical updates: organization, consent mode", async () => {
      const org = (await storage.organizations.get(admin.orgA))!;
      await noOp("PATCH", `/svc-admin/organizations/${admin.orgA}`, 200, { displayName: org.displayName });
      assert.equal((await storage.organizations.get(admin.orgA))!.version, org.version);
      const consent = await storage.impersonations.consentSetting(admin.realmId, null);
      await noOp("PUT", "/svc-admin/impersonation/consent", 200, {
        consentRequired: consent.consentRequired,
      });
    });

    await t.step("the chain verifies", async () => {
      const report = await storage.adminAudit.verify(admin.realmId);
      assert.equal(report.valid, true, JSON.stringify(report.firstBad));
    });
  } finally {
    await admin.close();
  }
});
