/**
 * Break-glass over HTTP (issue 12): the login goes through `POST /auth/login` with no MFA step-up
 * and no risk block but the abuse gate; it sets LastUseAt and emits `breakglass.login` and
 * `breakglass.rotation_required`; its session's `mfa` is `BreakGlass`, so its admin mutations
 * carry actor kind `BreakGlass`; status, drill (right and wrong password) and rotation (clears
 * rotation_required, ends the account's sessions); its limiter (issue 25): failures lock out only
 * the address they came from (strangers cannot lock the emergency account out), drills share it,
 * and a rotation resets it; `/readyz` with `break_glass_drill` in both modes, its details for an
 * administrator only, a new account not overdue until one window has passed.
 */
import { checkedSink } from "../../support/events.ts";
import { strict as assert } from "node:assert";
import { createBreakGlassAccount } from "../../../core/break-glass/account.ts";
import { BreakGlassMonitor, DAY_MS } from "../../../core/break-glass/monitor.ts";
import { ListIpReputation } from "../../../core/risk/providers.ts";
import { fromBase64Url } from "../../../core/encoding.ts";
import { EventPublisher } from "../../../core/events/publisher.ts";
import { createApp } from "../../../http/app.ts";
import { breakGlassReadinessCheck } from "../../../http/admin/break-glass.ts";
import { readinessDetailsForAdmins } from "../../../http/admin/readiness-details.ts";
import { adminBed } from "../../support/admin.ts";

const REPUTATION = await Deno.readTextFile(new URL("../../fixtures/risk/ip-reputation.txt", import.meta.url));
/** Listed with score 100: with a new device, a risk block for anyone else. */
const BAD_IP = "192.0.2.66";

Deno.test("break-glass: login, events, actor kind, status, drill, rotation", async (t) => {
  const admin = await adminBed({ SVC_ABUSE_ACCOUNT_LOCKOUT_LIMIT: "3", SVC_ABUSE_PER_IP_LIMIT: "1000" }, {
    reputation: ListIpReputation.parse(REPUTATION, "ip-reputation.txt"),
  });
  const { bed } = admin;
  try {
    const { account, password } = await createBreakGlassAccount({
      storage: bed.storage,
      passwords: bed.login.passwords,
      random: bed.random,
      clock: bed.clock,
    }, { realmId: admin.realmId, actor: { id: "svc:cli", kind: "System" } });
    const login = (body: unknown, ip = BAD_IP) =>
      Promise.resolve(admin.app.request("/auth/login", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      }, { clientAddress: ip }));
    const bearer = (method: string, path: string, token: string, body?: unknown) =>
      Promise.resolve(admin.app.request(path, {
        method,
        headers: {
          Authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      }));

    await t.step("a risky sign-in that blocks anyone else signs the break-glass account in", async () => {
      await bed.user("normal@example.test", "normal's password");
      const normal = await login({ email: "normal@example.test", password: "normal's password" });
      assert.equal(normal.status, 401, "the risk gate blocks an ordinary account here");
      await normal.body?.cancel();
    });

    let token = "";
    let rotatedPassword = "";
    await t.step("no MFA step-up, no risk block; mfa BreakGlass; LastUseAt set; both events", async () => {
      bed.events.length = 0;
      const res = await login({ email: account.email, password });
      assert.equal(res.status, 200, await res.clone().text());
      const body = await res.json();
      assert.equal(body.mfaRequired, undefined);
      token = body.accessToken;
      const claims = JSON.parse(new TextDecoder().decode(fromBase64Url(token.split(".")[1])));
      assert.equal(claims.mfa, "BreakGlass");
      const state = await bed.storage.breakGlass.get(admin.realmId);
      assert.deepEqual(state?.lastUseAt, new Date(bed.clock.now()));
      assert.equal(state?.rotationRequired, true);
      const kinds = bed.events.map((e) => e.kind);
      assert.ok(kinds.includes("breakglass.login"), kinds.join(","));
      assert.ok(kinds.includes("breakglass.rotation_required"), kinds.join(","));
      assert.ok(!kinds.includes("risk.evaluated"), "the risk gate never ran");
      const ledger = (await bed.storage.securityEvents.listByUser(account.userId)).map((e) => e.kind);
      assert.ok(ledger.includes("breakglass.login"));
    });

    await t.step("its admin mutations carry actor kind BreakGlass", async () => {
      // A real change (consent is not required by default; setting the default again is a no-op, unaudited).
      const res = await bearer("PUT", "/svc-admin/impersonation/consent", token, { consentRequired: true });
      assert.equal(res.status, 200, await res.clone().text());
      const entry = (await bed.storage.adminAudit.head(admin.realmId))!;
      assert.deepEqual([entry.actorKind, entry.actorId], ["BreakGlass", account.userId]);
    });

    await t.step("status reports the use and rotation required", async () => {
      const status = await (await admin.request("GET", "/svc-admin/break-glass/status")).json();
      assert.equal(status.account.userId, account.userId);
      assert.equal(status.lastUseAt, new Date(bed.clock.now()).toISOString());
      assert.equal(status.rotationRequired, true);
      assert.equal(status.drillOverdue, false, "never drilled, but created within the window");
      assert.equal(
        status.drillDueAt,
        new Date(Date.parse(status.account.createdAt) + 90 * DAY_MS).toISOString(),
      );
      assert.equal(status.drillWindowDays, 90);
    });

    await t.step(
      "drill: a wrong password records nothing (422); the right one records the drill",
      async () => {
        const before = await admin.chainLength();
        const wrong = await admin.request("POST", "/svc-admin/break-glass/drill", {
          body: { password: "nope" },
        });
        assert.equal(wrong.status, 422);
        assert.equal((await wrong.json()).error.code, "break_glass_drill_failed");
        assert.equal(await admin.chainLength(), before);
        const sessionsBefore = (await bed.storage.sessions.listActiveForUser(account.userId)).length;
        const ok = await admin.request("POST", "/svc-admin/break-glass/drill", { body: { password } });
        assert.equal(ok.status, 200);
        const status = await ok.json();
        assert.equal(status.lastDrillAt, new Date(bed.clock.now()).toISOString());
        assert.equal(status.drillOverdue, false);
        assert.equal(status.drillDueAt, new Date(bed.clock.now() + 90 * DAY_MS).toISOString());
        assert.equal(
          (await bed.storage.sessions.listActiveForUser(account.userId)).length,
          sessionsBefore,
          "no session",
        );
        assert.equal((await bed.storage.adminAudit.head(admin.realmId))!.action, "breakglass.drill");
      },
    );

    await t.step(
      "rotation: a new password once, rotation_required cleared, old sessions and password stop",
      async () => {
        const res = await admin.request("POST", "/svc-admin/break-glass/rotate");
        assert.equal(res.status, 200);
        assert.equal(res.headers.get("Cache-Control"), "no-store");
        const rotated = await res.json();
        rotatedPassword = rotated.password;
        assert.notEqual(rotated.password, password);
        assert.ok(rotated.sessionsEnded >= 1);
        assert.equal((await bed.storage.breakGlass.get(admin.realmId))?.rotationRequired, false);
        const entry = (await bed.storage.adminAudit.head(admin.realmId))!;
        assert.equal(entry.action, "breakglass.rotate");
        assert.ok(!JSON.stringify(entry.after).includes(rotated.password), "never the password in the chain");
        assert.equal((await bearer("GET", "/profile/me", token)).status, 401, "its old session ended");
        const old = await login({ email: account.email, password }, "198.51.100.8");
        assert.equal(old.status, 401);
        await old.body?.cancel();
        const fresh = await login({ email: account.email, password: rotated.password }, "198.51.100.8");
        assert.equal(fresh.status, 200);
        await fresh.body?.cancel();
      },
    );

    await t.step("no account: drill and rotate are 409", async () => {
      await bed.database.db.updateTable("users").set({ is_break_glass: false }).where(
        "id",
        "=",
        account.userId,
      )
        .execute();
      const res = await admin.request("POST", "/svc-admin/break-glass/rotate");
      assert.equal(res.status, 409);
      assert.equal((await res.json()).error.code, "break_glass_account_missing");
      await bed.database.db.updateTable("users").set({ is_break_glass: true }).where(
        "id",
        "=",
        account.userId,
      )
        .execute();
    });
    await t.step("the abuse gate still applies, per address: one address locks out only itself", async () => {
      for (let i = 0; i < 3; i++) {
        const wrong = await login({ email: account.email, password: "wrong" }, "198.51.100.7");
        assert.equal(wrong.status, 401);
        await wrong.body?.cancel();
      }
      const locked = await login({ email: account.email, password: rotatedPassword }, "198.51.100.7");
      assert.equal(locked.status, 429, "locked out even with the right password, from that address");
      await locked.body?.cancel();
      // Strangers cannot lock the emergency account out: from another address it signs in.
      const elsewhere = await login({ email: account.email, password: rotatedPassword }, "198.51.100.9");
      assert.equal(elsewhere.status, 200, await elsewhere.clone().text());
      await elsewhere.body?.cancel();
      // More wrong guesses from the first address change nothing for the others.
      for (let i = 0; i < 5; i++) {
        const again = await login({ email: account.email, password: "wrong" }, "198.51.100.7");
        assert.equal(again.status, 429);
        await again.body?.cancel();
      }
      const still = await login({ email: account.email, password: rotatedPassword }, "198.51.100.10");
      assert.equal(still.status, 200);
      await still.body?.cancel();
    });
    await t.step("drills are password checks: they share the limit of their address", async () => {
      for (let i = 0; i < 3; i++) {
        const wrong = await admin.request("POST", "/svc-admin/break-glass/drill", {
          body: { password: "nope" },
        });
        assert.equal(wrong.status, 422);
        await wrong.body?.cancel();
      }
      const before = (await bed.storage.breakGlass.get(admin.realmId))?.lastDrillAt?.getTime();
      const res = await admin.request("POST", "/svc-admin/break-glass/drill", {
        body: { password: rotatedPassword },
      });
      assert.equal(res.status, 429);
      assert.equal((await res.json()).error.code, "login_blocked");
      assert.equal((await bed.storage.breakGlass.get(admin.realmId))?.lastDrillAt?.getTime(), before);
    });
    await t.step("a rotation resets the break-glass limits", async () => {
      const res = await admin.request("POST", "/svc-admin/break-glass/rotate");
      assert.equal(res.status, 200);
      const { password: fresh } = await res.json();
      const signIn = await login({ email: account.email, password: fresh }, "198.51.100.7");
      assert.equal(signIn.status, 200, "the address that was locked out signs in with the new password");
      await signIn.body?.cancel();
      const drill = await admin.request("POST", "/svc-admin/break-glass/drill", {
        body: { password: fresh },
      });
      assert.equal(drill.status, 200);
      await drill.body?.cancel();
    });
  } finally {
    await admin.close();
  }
});

Deno.test("/readyz with break_glass_drill: reported (200) by default, 503 when required", async () => {
  const admin = await adminBed();
  const { bed } = admin;
  try {
    const publisher = new EventPublisher({
      storage: bed.storage,
      sink: checkedSink(() => {}),
      random: bed.random,
    });
    const monitor = new BreakGlassMonitor({
      storage: bed.storage,
      clock: bed.clock,
      events: publisher,
      drillWindowMs: bed.config.breakGlass.drillWindowDays * DAY_MS,
    });
    const app = (required: boolean) =>
      createApp({
        config: bed.config,
        readinessChecks: [
          { name: "database", check: () => Promise.resolve() },
          breakGlassReadinessCheck(monitor, required),
        ],
        clock: bed.clock,
        random: bed.random,
        authenticator: bed.auth.authenticator,
        readinessDetails: readinessDetailsForAdmins(bed.snapshots),
      });
    /** `/readyz` as the bootstrap administrator (the details), or as `as` (a token, or none). */
    const readyz = async (required: boolean, as: string | null = admin.tokens.global) => {
      const res = await app(required).request("/readyz", {
        headers: as === null ? {} : { Authorization: `Bearer ${as}` },
      });
      return { status: res.status, body: await res.json() };
    };
    assert.equal(bed.config.breakGlass.drillRequiredForReadiness, false, "the default");
    assert.deepEqual(await readyz(false), {
      status: 200,
      body: {
        status: "ready",
        checks: { database: { status: "ok" }, break_glass_drill: { status: "ok", critical: false } },
      },
    });
    await createBreakGlassAccount({
      storage: bed.storage,
      passwords: bed.login.passwords,
      random: bed.random,
      clock: bed.clock,
    }, { realmId: admin.realmId, actor: { id: "svc:cli", kind: "System" } });
    assert.equal((await readyz(true)).status, 200, "an account created just now is not overdue");
    bed.clock.advance(90 * DAY_MS - 1);
    assert.equal((await readyz(true)).status, 200, "nor one millisecond before its first window ends");
    bed.clock.advance(1);
    // The bed's tokens outlive no 90 days: sign the administrator in again.
    const fresh = (await bed.auth.sessions.signIn({
      realmId: admin.realmId,
      userId: admin.users.global,
      orgId: null,
      mfa: "MultiFactor",
    })).tokens.accessToken;
    const overdue = { status: "fail", error: "break-glass drill overdue in 1 realm" };
    assert.deepEqual(await readyz(false, fresh), {
      status: 200,
      body: {
        status: "ready",
        checks: { database: { status: "ok" }, break_glass_drill: { ...overdue, critical: false } },
      },
    });
    assert.deepEqual(await readyz(true, fresh), {
      status: 503,
      body: { status: "not_ready", checks: { database: { status: "ok" }, break_glass_drill: overdue } },
    });
    // Without a token, with a bad one, or as a caller without a break-glass permission: names only.
    const plain = (await bed.auth.sessions.signIn({
      realmId: admin.realmId,
      userId: admin.users.plain,
      orgId: admin.orgA,
      mfa: "MultiFactor",
    })).tokens.accessToken;
    for (const as of [null, "not-a-token", plain]) {
      assert.deepEqual(await readyz(true, as), {
        status: 503,
        body: { status: "not_ready", checks: ["database", "break_glass_drill"] },
      });
      assert.deepEqual((await readyz(false, as)).body, {
        status: "ready",
        checks: ["database", "break_glass_drill"],
      });
    }
    await bed.storage.breakGlass.recordDrill(admin.realmId);
    assert.equal((await readyz(true, null)).status, 200);
    bed.clock.advance(90 * DAY_MS);
    assert.equal((await readyz(true, null)).status, 503, "the window passed");
    const { config } = (await import("../../../core/config/mod.ts")).loadConfig({
      env: { SVC_BREAK_GLASS_DRILL_REQUIRED_FOR_READINESS: "true", SVC_BREAK_GLASS_DRILL_WINDOW_DAYS: "30" },
    });
    assert.deepEqual(config.breakGlass, { drillWindowDays: 30, drillRequiredForReadiness: true });
  } finally {
    await admin.close();
  }
});
