/**
 * Impersonation over the full app (issue 12): reason required, the fence evaluated against the
 * target, the `act` claim and the capped `exp`, the banner, one current per actor, consent (realm
 * and organization) with a single-use consent token and a one-time token fetch, ending (the token
 * stops), lists, and every start and end in the admin chain and the target's security events.
 */
import { strict as assert } from "node:assert";
import { fromBase64Url } from "../../../core/encoding.ts";
import { type AdminBed, adminBed } from "../../support/admin.ts";
import { seeder } from "../../support/seed.ts";

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(new TextDecoder().decode(fromBase64Url(token.split(".")[1])));
}

async function memberOfA(admin: AdminBed, email?: string): Promise<string> {
  const userId = email
    ? (await admin.bed.storage.users.create({ realmId: admin.realmId, email, emailVerified: true })).id
    : await seeder(admin.bed.database.db).user(admin.realmId);
  await admin.bed.storage.organizations.addMember(admin.orgA, userId);
  return userId;
}

async function bearer(admin: AdminBed, method: string, path: string, token: string, body?: unknown) {
  return await admin.app.request(path, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function errorCode(res: Response): Promise<string> {
  return (await res.json()).error.code;
}

Deno.test("impersonation: start, token, banner, fence, one per actor, end", async (t) => {
  const admin = await adminBed();
  try {
    const target = await memberOfA(admin);

    await t.step("reason is mandatory (400), and so is a real target", async () => {
      for (const body of [{ targetUserId: target }, { targetUserId: target, reason: "   " }]) {
        const res = await admin.request("POST", "/svc-admin/impersonation", { body });
        assert.equal(res.status, 400);
        assert.equal(await errorCode(res), "invalid_request");
      }
      const tooLong = await admin.request("POST", "/svc-admin/impersonation", {
        body: { targetUserId: target, reason: "x", durationSeconds: 7200 },
      });
      assert.equal(tooLong.status, 400, "beyond the configured window");
    });

    await t.step("the fence is evaluated against the target", async () => {
      const memberOfB = await seeder(admin.bed.database.db).user(admin.realmId);
      await admin.bed.storage.organizations.addMember(admin.orgB, memberOfB);
      const other = await admin.request("POST", "/svc-admin/impersonation", {
        as: "orgA",
        body: { targetUserId: memberOfB, reason: "not mine" },
      });
      assert.equal(other.status, 404, "an org admin never reaches another organization's member");
      const plain = await admin.request("POST", "/svc-admin/impersonation", {
        as: "plain",
        body: { targetUserId: target, reason: "no permission" },
      });
      assert.equal(plain.status, 403);
      const self = await admin.request("POST", "/svc-admin/impersonation", {
        as: "orgA",
        body: { targetUserId: admin.users.orgA, reason: "me" },
      });
      assert.equal(self.status, 403);
      assert.equal((await self.json()).error.details.reason, "self");
      // A member of A holding a realm-wide svc: permission the org admin lacks.
      const seed = seeder(admin.bed.database.db);
      const privileged = await memberOfA(admin);
      const role = await seed.role(admin.realmId, "auditor", [{ pattern: "svc:global:audit-read" }]);
      await seed.assign(admin.realmId, role, { kind: "User", id: privileged });
      await admin.bed.snapshots.invalidateAll();
      const up = await admin.request("POST", "/svc-admin/impersonation", {
        as: "orgA",
        body: { targetUserId: privileged, reason: "escalate" },
      });
      assert.equal(up.status, 403);
      assert.equal((await up.json()).error.details.reason, "privileged_target");
      const byGlobal = await admin.request("POST", "/svc-admin/impersonation", {
        body: { targetUserId: privileged, reason: "allowed: the realm admin holds it", durationSeconds: 60 },
      });
      assert.equal(byGlobal.status, 201, await byGlobal.clone().text());
      const { impersonationId } = await byGlobal.json();
      assert.equal(
        (await admin.request("POST", `/svc-admin/impersonation/${impersonationId}/end`)).status,
        200,
      );
    });

    let accessToken = "";
    let impersonationId = "";
    await t.step("201: a token of the target carrying act, exp capped at the end", async () => {
      const start = admin.bed.clock.now();
      const res = await admin.request("POST", "/svc-admin/impersonation", {
        as: "orgA",
        body: { targetUserId: target, reason: "ticket 4711", durationSeconds: 120 },
      });
      assert.equal(res.status, 201, await res.clone().text());
      assert.equal(res.headers.get("Cache-Control"), "no-store");
      const body = await res.json();
      ({ accessToken, impersonationId } = body);
      const claims = claimsOf(accessToken);
      assert.equal(claims.sub, target);
      assert.deepEqual(claims.act, { sub: admin.users.orgA, imp: impersonationId });
      assert.equal(claims.exp, Math.floor((start + 120_000) / 1000), "capped below the 10-minute lifetime");
      assert.equal(body.expiresAt, new Date(start + 120_000).toISOString());
      assert.equal(claims.org, admin.orgA);
    });

    await t.step("the banner: who acts, until when", async () => {
      const me = await (await bearer(admin, "GET", "/profile/me", accessToken)).json();
      assert.equal(me.id, target);
      assert.equal(me.impersonation.impersonationId, impersonationId);
      assert.equal(me.impersonation.actor.id, admin.users.orgA);
      assert.ok(me.impersonation.expiresAt);
    });

    await t.step("one current impersonation per actor: a second start is 409", async () => {
      const res = await admin.request("POST", "/svc-admin/impersonation", {
        as: "orgA",
        body: { targetUserId: await memberOfA(admin), reason: "second" },
      });
      assert.equal(res.status, 409);
      assert.equal(await errorCode(res), "impersonation_in_progress");
    });

    await t.step("lists: current and past, realm-wide and per target, fenced", async () => {
      const current =
        await (await admin.request("GET", `/svc-admin/impersonation?targetUserId=${target}&state=current`))
          .json();
      assert.deepEqual(current.items.map((i: { id: string }) => i.id), [impersonationId]);
      assert.equal(current.items[0].reason, "ticket 4711");
      const orgB = await admin.request("GET", `/svc-admin/impersonation?targetUserId=${target}`, {
        as: "orgB",
      });
      assert.equal(orgB.status, 404);
      const realmWide = await (await admin.request("GET", "/svc-admin/impersonation?state=past")).json();
      assert.ok(realmWide.total >= 1, "the ended one");
      const orgBList = await (await admin.request("GET", "/svc-admin/impersonation", { as: "orgB" })).json();
      assert.equal(orgBList.total, 0, "org B sees only its members' impersonations");
    });

    await t.step("end: 200, the token stops at once, listed as past; ending twice is 409", async () => {
      assert.equal((await bearer(admin, "GET", "/profile/me", accessToken)).status, 200);
      const res = await admin.request("POST", `/svc-admin/impersonation/${impersonationId}/end`, {
        as: "orgA",
      });
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal((await res.json()).status, "Ended");
      const after = await bearer(admin, "GET", "/profile/me", accessToken);
      assert.equal(after.status, 401);
      const again = await admin.request("POST", `/svc-admin/impersonation/${impersonationId}/end`, {
        as: "orgA",
      });
      assert.equal(again.status, 409);
      const past =
        await (await admin.request("GET", `/svc-admin/impersonation?targetUserId=${target}&state=past`))
          .json();
      assert.ok(
        past.items.some((i: { id: string; current: boolean }) => i.id === impersonationId && !i.current),
      );
    });

    await t.step("the impersonation's own token may end it (and nothing else)", async () => {
      const res = await admin.request("POST", "/svc-admin/impersonation", {
        as: "orgA",
        body: { targetUserId: target, reason: "ticket 4712" },
      });
      const own = await res.json();
      const other = await admin.request("POST", "/svc-admin/impersonation", {
        body: { targetUserId: await memberOfA(admin), reason: "another" },
      });
      const otherId = (await other.json()).impersonationId;
      const refused = await bearer(admin, "POST", `/svc-admin/impersonation/${otherId}/end`, own.accessToken);
      assert.equal(refused.status, 403);
      assert.equal(await errorCode(refused), "impersonation_forbidden");
      const ended = await bearer(
        admin,
        "POST",
        `/svc-admin/impersonation/${own.impersonationId}/end`,
        own.accessToken,
      );
      assert.equal(ended.status, 200, await ended.clone().text());
      assert.equal((await bearer(admin, "GET", "/profile/me", own.accessToken)).status, 401);
      const entry = (await admin.bed.storage.adminAudit.head(admin.realmId))!;
      assert.deepEqual([entry.action, entry.actorId, entry.onBehalfOf], [
        "impersonation.end",
        admin.users.orgA,
        target,
      ]);
      await admin.request("POST", `/svc-admin/impersonation/${otherId}/end`);
    });

    await t.step(
      "every start and end: in the admin chain (actor, target, reason) and the target's events",
      async () => {
        const entries = await admin.bed.storage.adminAudit.list(admin.realmId, { limit: 1000 });
        const mine = entries.filter((e) =>
          (e.after as { impersonationId?: string } | null)?.impersonationId === impersonationId
        );
        assert.deepEqual(mine.map((e) => e.action).sort(), ["impersonation.end", "impersonation.start"]);
        for (const entry of mine) {
          assert.equal(entry.actorId, admin.users.orgA);
          assert.equal(entry.actorKind, "User");
          assert.equal(entry.target, target);
          assert.equal((entry.after as { reason: string }).reason, "ticket 4711");
        }
        const events = await admin.bed.storage.securityEvents.listByUser(target, { limit: 100 });
        const kinds = events.filter((e) =>
          (e.data as { impersonationId?: string } | null)?.impersonationId === impersonationId
        )
          .map((e) => e.kind).sort();
        assert.deepEqual(kinds, ["impersonation.ended", "impersonation.started"]);
        assert.equal((await admin.bed.storage.adminAudit.verify(admin.realmId)).valid, true);
      },
    );

    await t.step("refreshing never passes the end", async () => {
      const res = await admin.request("POST", "/svc-admin/impersonation", {
        as: "orgA",
        body: { targetUserId: target, reason: "refresh", durationSeconds: 60 },
      });
      assert.equal(res.status, 201);
      const body = await res.json();
      const early = await admin.app.request("/auth/refresh", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ refreshToken: body.refreshToken }),
      });
      assert.equal(early.status, 200, "within the window");
      const next = await early.json();
      assert.ok(claimsOf(next.accessToken).exp as number <= Math.floor(admin.bed.clock.now() / 1000) + 60);
      body.refreshToken = next.refreshToken;
      admin.bed.clock.advance(61_000);
      const refreshed = await admin.app.request("/auth/refresh", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ refreshToken: body.refreshToken }),
      });
      assert.equal(refreshed.status, 401, "expired impersonation: no new token");
    });
  } finally {
    await admin.close();
  }
});

Deno.test("impersonation with consent: mailed single-use token, approval by the target, one token fetch", async (t) => {
  const admin = await adminBed();
  try {
    const email = "target@example.test";
    const target = await memberOfA(admin, email);
    const signIn = async (userId: string, orgId: string | null = null) =>
      (await admin.bed.auth.sessions.signIn({ realmId: admin.realmId, userId, orgId, mfa: "Password" }))
        .tokens
        .accessToken;
    const targetToken = await signIn(target);

    const consentFlow = async (as: "global" | "orgA") => {
      const res = await admin.request("POST", "/svc-admin/impersonation", {
        as,
        body: { targetUserId: target, reason: "consent please", durationSeconds: 300 },
      });
      assert.equal(res.status, 202, await res.clone().text());
      const body = await res.json();
      assert.equal(body.status, "PendingConsent");
      assert.equal(body.accessToken, undefined, "no token before consent");
      const mail = await admin.bed.storage.mailOutbox.latest({ to: email, kind: "impersonation_consent" });
      assert.ok(mail);
      assert.match(mail.text, /consent please/);
      const link = /(http\S+\/account\/impersonation-consent\?token=(\S+))/.exec(mail.text)!;
      assert.ok(link[1].startsWith(admin.bed.config.server.baseUrl));
      return { id: body.impersonationId as string, token: decodeURIComponent(link[2]) };
    };

    await t.step("realm consent mode: 202, then approve, fetch once", async () => {
      const put = await admin.request("PUT", "/svc-admin/impersonation/consent", {
        body: { consentRequired: true },
      });
      assert.equal(put.status, 200);
      const { id, token } = await consentFlow("global");
      const early = await admin.request("POST", `/svc-admin/impersonation/${id}/token`);
      assert.equal(early.status, 409, "no token while pending");

      const stranger = await signIn(await memberOfA(admin));
      const wrong = await bearer(admin, "POST", "/svc-admin/impersonation/consent/approve", stranger, {
        token,
      });
      assert.equal(wrong.status, 403, "only the target approves");

      const startOfWindow = admin.bed.clock.now() + 5_000;
      admin.bed.clock.advance(5_000);
      const approved = await bearer(admin, "POST", "/svc-admin/impersonation/consent/approve", targetToken, {
        token,
      });
      assert.equal(approved.status, 200, await approved.clone().text());
      const view = await approved.json();
      assert.equal(view.status, "Active");
      assert.equal(
        view.expiresAt,
        new Date(startOfWindow + 300_000).toISOString(),
        "the window starts at approval",
      );
      const replay = await bearer(admin, "POST", "/svc-admin/impersonation/consent/approve", targetToken, {
        token,
      });
      assert.equal(replay.status, 401, "the consent token is single use");
      assert.equal(await errorCode(replay), "invalid_token");

      const orgB = await admin.request("POST", `/svc-admin/impersonation/${id}/token`, { as: "orgB" });
      assert.equal(orgB.status, 404);
      const fetches = await Promise.all(
        [1, 2, 3].map(() => admin.request("POST", `/svc-admin/impersonation/${id}/token`)),
      );
      assert.deepEqual(
        fetches.map((r) => r.status).sort(),
        [200, 409, 409],
        "the actor fetches the token once",
      );
      const ok = await fetches.find((r) => r.status === 200)!.json();
      assert.deepEqual(claimsOf(ok.accessToken).act, { sub: admin.users.global, imp: id });
      const kinds = (await admin.bed.storage.securityEvents.listByUser(target, { limit: 100 }))
        .filter((e) => (e.data as { impersonationId?: string } | null)?.impersonationId === id).map((e) =>
          e.kind
        );
      assert.deepEqual(kinds.sort(), [
        "impersonation.approved",
        "impersonation.consent_requested",
        "impersonation.started",
      ]);
      const actions = (await admin.bed.storage.adminAudit.list(admin.realmId, { limit: 1000 }))
        .filter((e) => (e.after as { impersonationId?: string } | null)?.impersonationId === id).map((e) =>
          e.action
        );
      assert.deepEqual(actions.sort(), [
        "impersonation.approve",
        "impersonation.request",
        "impersonation.token.issue",
      ]);
      await admin.request("POST", `/svc-admin/impersonation/${id}/end`);
      await admin.request("PUT", "/svc-admin/impersonation/consent", { body: { consentRequired: false } });
    });

    await t.step("organization consent mode: the org admin sets it, members of A need consent", async () => {
      const direct = await admin.request("POST", "/svc-admin/impersonation", {
        as: "orgA",
        body: { targetUserId: target, reason: "no consent yet", durationSeconds: 60 },
      });
      assert.equal(direct.status, 201);
      await admin.request("POST", `/svc-admin/impersonation/${(await direct.json()).impersonationId}/end`);
      const put = await admin.request("PUT", `/svc-admin/impersonation/consent/organizations/${admin.orgA}`, {
        as: "orgA",
        body: { consentRequired: true },
      });
      assert.equal(put.status, 200);
      const { id, token } = await consentFlow("orgA");
      // Someone acting as the target cannot approve on their behalf.
      const imp = await admin.bed.auth.sessions.signIn({
        realmId: admin.realmId,
        userId: target,
        mfa: "Impersonation",
        impersonation: {
          actorId: admin.users.global,
          impersonationId: id,
          expiresAt: new Date(admin.bed.clock.now() + 60_000),
        },
      });
      const asImpersonator = await bearer(
        admin,
        "POST",
        "/svc-admin/impersonation/consent/approve",
        imp.tokens.accessToken,
        {
          token,
        },
      );
      assert.equal(asImpersonator.status, 403);
      assert.equal(await errorCode(asImpersonator), "impersonation_forbidden");
      const approved = await bearer(admin, "POST", "/svc-admin/impersonation/consent/approve", targetToken, {
        token,
      });
      assert.equal(approved.status, 200);
      const fetched = await admin.request("POST", `/svc-admin/impersonation/${id}/token`, { as: "orgA" });
      assert.equal(fetched.status, 200);
    });
  } finally {
    await admin.close();
  }
});
