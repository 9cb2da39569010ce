/**
 * Session and credential lifecycle over HTTP (issue 19 items 2, 3, 6, 15, 16, 18): an ended
 * session stops its access tokens at once (logout, remote logout, logout-all, refresh reuse,
 * password reset), organization switch needs a live session of an active user, a refresh replay
 * is detected before anything else about the request, any password change kills every
 * outstanding reset link, the reset is one transaction, and an API key dies with its owner.
 */
import { strict as assert } from "node:assert";
import { createApiKey } from "../../../core/credentials/api-keys.ts";
import { eraseUser } from "../../../core/audit/erasure.ts";
import type { Storage } from "../../../core/storage/storage.ts";
import { AccountFlows } from "../../../core/accounts/flows.ts";
import { loginBed } from "../../support/login.ts";

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

Deno.test("session and credential lifecycle", async (t) => {
  const bed = await loginBed({ SVC_ABUSE_PER_IP_LIMIT: "1000", SVC_ABUSE_PER_IP_ACCOUNT_LIMIT: "1000" });
  let n = 0;
  const newUser = async () => {
    const email = `user${n++}@example.test`;
    const password = `password of ${email}`;
    const id = await bed.user(email, password);
    return { id, email, password };
  };
  const signIn = async (email: string, password: string) => {
    const res = await bed.post("/auth/login", { email, password });
    assert.equal(res.status, 200, await res.clone().text());
    return await res.json() as { accessToken: string; refreshToken: string };
  };
  const me = (token: string) => bed.get("/profile/me", token);
  const post = (path: string, token: string, body: unknown = {}) =>
    bed.post(path, body, { headers: bearer(token) });
  const org = async (members: string[]) => {
    const created = await bed.storage.organizations.create({
      realmId: bed.realmId,
      name: `org-${n++}`,
      displayName: "Org",
    });
    for (const m of members) await bed.storage.organizations.addMember(created.id, m);
    return created.id;
  };

  try {
    await t.step("logout stops the session's access token at once", async () => {
      const u = await newUser();
      const a = await signIn(u.email, u.password);
      const b = await signIn(u.email, u.password);
      assert.equal((await me(a.accessToken)).status, 200, "verified and cached");
      assert.equal((await post("/auth/logout", a.accessToken)).status, 204);
      const res = await me(a.accessToken);
      assert.equal(res.status, 401);
      assert.equal((await res.json()).error.code, "invalid_token");
      assert.equal((await me(b.accessToken)).status, 200, "another session of the user lives on");
    });

    await t.step("remote logout and logout-all stop the access tokens of the sessions they end", async () => {
      const u = await newUser();
      const a = await signIn(u.email, u.password);
      const b = await signIn(u.email, u.password);
      const c = await signIn(u.email, u.password);
      const listed = await (await me(a.accessToken)).json();
      const sessions = (await (await bed.get("/profile/sessions", a.accessToken)).json()).sessions as {
        id: string;
        current: boolean;
      }[];
      assert.equal(sessions.length, 3);
      const bSession = (await (await bed.get("/profile/me", b.accessToken)).json()).sessionId;
      assert.notEqual(bSession, listed.sessionId);
      const del = await bed.app.request(`/profile/sessions/${bSession}`, {
        method: "DELETE",
        headers: bearer(a.accessToken),
      });
      assert.equal(del.status, 204);
      assert.equal((await me(b.accessToken)).status, 401);
      assert.equal((await me(c.accessToken)).status, 200);
      assert.equal((await post("/auth/logout-all", a.accessToken)).status, 200);
      assert.equal((await me(a.accessToken)).status, 401);
      assert.equal((await me(c.accessToken)).status, 401);
    });

    await t.step("switch-organization needs a live session", async () => {
      const u = await newUser();
      const orgA = await org([u.id]);
      const tokens = await signIn(u.email, u.password);
      let res = await post("/auth/switch-organization", tokens.accessToken, { orgId: orgA });
      assert.equal(res.status, 200);
      const switched = (await res.json()).accessToken as string;
      assert.equal((await post("/auth/logout", tokens.accessToken)).status, 204);
      res = await post("/auth/switch-organization", switched, { orgId: orgA });
      assert.equal(res.status, 401, "a token of an ended session mints nothing");
    });

    await t.step("a password reset ends the user's sessions: no switch, no access", async () => {
      const u = await newUser();
      const orgA = await org([u.id]);
      const tokens = await signIn(u.email, u.password);
      assert.equal((await bed.post("/auth/password/forgot", { email: u.email })).status, 202);
      const link = await bed.mailedToken(u.email, "password_reset");
      const res = await bed.post("/auth/password/reset", { token: link, password: "a brand new password" });
      assert.equal(res.status, 200);
      assert.equal((await me(tokens.accessToken)).status, 401);
      assert.notEqual(
        (await post("/auth/switch-organization", tokens.accessToken, { orgId: orgA })).status,
        200,
      );
      assert.equal((await bed.storage.sessions.listActiveForUser(u.id)).length, 0);
    });

    await t.step("switch-organization refuses a suspended user", async () => {
      const u = await newUser();
      const orgA = await org([u.id]);
      const tokens = await signIn(u.email, u.password);
      // Suspended behind svc's back (no session ended): the switch itself must look at the user.
      await bed.storage.users.update(u.id, { status: "Suspended" });
      const res = await post("/auth/switch-organization", tokens.accessToken, { orgId: orgA });
      assert.equal(res.status, 403);
    });

    await t.step(
      "a refresh replay with a foreign orgId revokes the family and ends the session",
      async () => {
        const u = await newUser();
        const foreign = await org([]);
        const first = await signIn(u.email, u.password);
        const other = await signIn(u.email, u.password);
        let res = await bed.post("/auth/refresh", { refreshToken: first.refreshToken });
        assert.equal(res.status, 200);
        const successor = await res.json() as { accessToken: string; refreshToken: string };
        const before = bed.events.filter((e) => e.kind === "token.refresh_reuse_detected").length;

        res = await bed.post("/auth/refresh", { refreshToken: first.refreshToken, orgId: foreign });
        assert.equal(res.status, 401);
        assert.equal((await res.json()).error.code, "invalid_refresh_token");
        const reported = () => bed.events.filter((e) => e.kind === "token.refresh_reuse_detected").length;
        // The event reaches the sink once its ledger write committed.
        for (let i = 0; i < 100 && reported() === before; i++) await new Promise((r) => setTimeout(r, 10));
        assert.equal(reported(), before + 1);
        res = await bed.post("/auth/refresh", { refreshToken: successor.refreshToken });
        assert.equal(res.status, 401, "the successor died with its family");
        assert.equal((await me(successor.accessToken)).status, 401, "the session ended");
        const listed = (await (await bed.get("/profile/sessions", other.accessToken)).json()).sessions;
        assert.equal(listed.length, 1, "the revoked family's session is no longer listed");
      },
    );

    await t.step("a valid refresh token with a foreign orgId is still 403 and keeps its family", async () => {
      const u = await newUser();
      const foreign = await org([]);
      const tokens = await signIn(u.email, u.password);
      let res = await bed.post("/auth/refresh", { refreshToken: tokens.refreshToken, orgId: foreign });
      assert.equal(res.status, 403);
      res = await bed.post("/auth/refresh", { refreshToken: tokens.refreshToken });
      assert.equal(res.status, 200);
    });

    await t.step("an older reset link is refused after a newer reset", async () => {
      const u = await newUser();
      await bed.post("/auth/password/forgot", { email: u.email });
      const older = await bed.mailedToken(u.email, "password_reset");
      await bed.post("/auth/password/forgot", { email: u.email });
      const newer = await bed.mailedToken(u.email, "password_reset");
      assert.notEqual(older, newer);
      assert.equal(
        (await bed.post("/auth/password/reset", { token: newer, password: "newer password" })).status,
        200,
      );
      const res = await bed.post("/auth/password/reset", { token: older, password: "older password" });
      assert.equal(res.status, 401);
      assert.equal((await res.json()).error.code, "invalid_token");
      await signIn(u.email, "newer password");
    });

    await t.step("any password change kills outstanding reset links", async () => {
      const u = await newUser();
      await bed.post("/auth/password/forgot", { email: u.email });
      const link = await bed.mailedToken(u.email, "password_reset");
      await bed.storage.passwordCredentials.replace(
        u.id,
        await bed.login.passwords.hash("changed elsewhere"),
      );
      const res = await bed.post("/auth/password/reset", { token: link, password: "attacker's choice" });
      assert.equal(res.status, 401);
      await signIn(u.email, "changed elsewhere");
    });

    await t.step(
      "the reset is one transaction: a failing second write spends and changes nothing",
      async () => {
        const u = await newUser();
        const tokens = await signIn(u.email, u.password);
        await bed.post("/auth/password/forgot", { email: u.email });
        const link = await bed.mailedToken(u.email, "password_reset");
        const failing = failingRefreshRevocation(bed.storage);
        const flows = new AccountFlows({
          storage: failing,
          passwords: bed.login.passwords,
          tokens: bed.auth.tokens,
          sessions: bed.auth.sessions,
          mail: bed.login.mail,
          messages: { passwordReset: () => ({}) } as never,
          events: {
            transaction: <T>(work: (tx: Storage, emit: () => Promise<void>) => Promise<T>) =>
              failing.transaction((tx) => work(tx, () => Promise.resolve())),
          },
          clock: bed.clock,
        });
        await assert.rejects(() => flows.resetPassword(link, "never applied password"), /injected/);
        assert.equal((await me(tokens.accessToken)).status, 200, "the session lives");
        assert.equal((await bed.post("/auth/refresh", { refreshToken: tokens.refreshToken })).status, 200);
        await signIn(u.email, u.password);
        const res = await bed.post("/auth/password/reset", { token: link, password: "applied this time" });
        assert.equal(res.status, 200, "the link was not spent");
        await signIn(u.email, "applied this time");
      },
    );

    await t.step("an erased owner's API key is refused like a bad key", async () => {
      const u = await newUser();
      const { token } = await createApiKey(bed.storage.apiKeys, bed.random, {
        realmId: bed.realmId,
        ownerKind: "User",
        ownerId: u.id,
        name: "ci",
      });
      assert.equal((await bed.get("/profile/permissions", token)).status, 200);
      const tokens = await signIn(u.email, u.password);
      const report = await eraseUser(
        { storage: bed.storage, clock: bed.clock, sessions: bed.auth.endedSessions },
        bed.realmId,
        u.id,
        { id: "dpo", kind: "User" },
      );
      assert.equal(report.apiKeysRevoked, 1);
      const res = await bed.get("/profile/permissions", token);
      assert.equal(res.status, 401);
      assert.equal((await res.json()).error.code, "invalid_token");
      assert.equal((await me(tokens.accessToken)).status, 401);
    });

    await t.step("a suspended owner's API key is refused like a bad key", async () => {
      const u = await newUser();
      const { token } = await createApiKey(bed.storage.apiKeys, bed.random, {
        realmId: bed.realmId,
        ownerKind: "User",
        ownerId: u.id,
        name: "ci",
      });
      assert.equal((await bed.get("/profile/permissions", token)).status, 200);
      // Suspended behind svc's back: the key itself is not revoked, authentication must look.
      await bed.storage.users.update(u.id, { status: "Suspended" });
      const res = await bed.get("/profile/permissions", token);
      assert.equal(res.status, 401);
      assert.equal((await res.json()).error.code, "invalid_token");
    });
  } finally {
    await bed.close();
  }
});

/** The storage whose transactions fail when revoking a user's refresh tokens (after the credential write). */
function failingRefreshRevocation(storage: Storage): Storage {
  const wrap = (s: Storage): Storage => ({
    ...s,
    refreshTokens: {
      ...s.refreshTokens,
      revokeAllForUser: () => Promise.reject(new Error("injected failure")),
    },
    transaction: (work) => s.transaction((tx) => work(wrap(tx))),
  });
  return wrap(storage);
}
