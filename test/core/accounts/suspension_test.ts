/**
 * Suspending a user (issue 19 items 2 and 15): one audited transaction sets the status, ends
 * every session (their access tokens stop at once), revokes refresh tokens and API keys; a
 * failure in any write changes nothing.
 */
import { strict as assert } from "node:assert";
import { suspendUser } from "../../../core/accounts/suspension.ts";
import { createApiKey } from "../../../core/credentials/api-keys.ts";
import type { Storage } from "../../../core/storage/storage.ts";
import { authBed, bearer } from "../../support/auth.ts";

const json = (body: unknown, headers: Record<string, string> = {}) => ({
  method: "POST",
  headers: { "Content-Type": "application/json", ...headers },
  body: JSON.stringify(body),
});

Deno.test("suspending a user", async (t) => {
  const bed = await authBed();
  const { app, seed } = bed;
  const { realmId, userId } = await bed.realmWithUser({ isDefault: true });
  await bed.auth.ensureKeys();
  const org = await seed.org(realmId, [userId]);
  const actor = { id: await seed.user(realmId), kind: "User" as const };
  const deps = { storage: bed.storage, clock: bed.clock, sessions: bed.auth.endedSessions };
  try {
    const one = await bed.signIn({ realmId, userId });
    const two = await bed.signIn({ realmId, userId });
    const { token: apiKey } = await createApiKey(bed.storage.apiKeys, bed.random, {
      realmId,
      ownerKind: "User",
      ownerId: userId,
      name: "ci",
    });
    assert.equal((await app.request("/profile/me", { headers: bearer(one.tokens.accessToken) })).status, 200);

    await t.step("a failure in the last write changes nothing", async () => {
      await assert.rejects(
        () => suspendUser({ ...deps, storage: failingKeyRevocation(bed.storage) }, realmId, userId, actor),
        /injected/,
      );
      assert.equal((await bed.storage.users.get(userId))?.status, "Active");
      assert.equal((await bed.storage.sessions.listActiveForUser(userId)).length, 2);
      assert.equal(
        (await app.request("/profile/me", { headers: bearer(one.tokens.accessToken) })).status,
        200,
      );
      assert.equal((await bed.storage.adminAudit.list(realmId)).length, 0);
    });

    await t.step("status, sessions, refresh tokens and API keys in one audited change", async () => {
      const report = await suspendUser(deps, realmId, userId, actor);
      assert.deepEqual(report, {
        userId,
        wasSuspended: false,
        sessionsEnded: 2,
        refreshTokensRevoked: 2,
        apiKeysRevoked: 1,
      });
      assert.equal((await bed.storage.users.get(userId))?.status, "Suspended");
      for (const s of [one, two]) {
        const res = await app.request("/profile/me", { headers: bearer(s.tokens.accessToken) });
        assert.equal(res.status, 401, "the access token stops at once");
        assert.equal(
          (await app.request("/auth/refresh", json({ refreshToken: s.tokens.refreshToken }))).status,
          401,
        );
        const switched = await app.request(
          "/auth/switch-organization",
          json({ orgId: org }, bearer(s.tokens.accessToken)),
        );
        assert.equal(switched.status, 401);
      }
      assert.equal((await app.request("/profile/permissions", { headers: bearer(apiKey) })).status, 401);
      const entries = await bed.storage.adminAudit.list(realmId);
      assert.deepEqual(entries.map((e) => [e.action, e.target, e.actorId]), [[
        "user.suspend",
        userId,
        actor.id,
      ]]);
    });

    await t.step("another realm's user is not found", async () => {
      const other = await seed.realm();
      await assert.rejects(() => suspendUser(deps, other, userId, actor), { code: "not_found" });
    });
  } finally {
    await bed.close();
  }
});

/** Storage whose transactions fail when revoking API keys (the last write of a suspension). */
function failingKeyRevocation(storage: Storage): Storage {
  const wrap = (s: Storage): Storage => ({
    ...s,
    apiKeys: { ...s.apiKeys, revokeAllForOwner: () => Promise.reject(new Error("injected failure")) },
    transaction: (work) => s.transaction((tx) => work(wrap(tx))),
  });
  return wrap(storage);
}
