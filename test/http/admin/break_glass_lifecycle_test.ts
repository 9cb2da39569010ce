/**
 * The break-glass lifecycle (issue 24), through the full app over real storage: a break-glass
 * account owns nothing that outlives rotation. It creates no API key or service credential and
 * none is created for it; it enrolls no factor; forgot/reset and email changes are refused
 * (forgot answers as for anyone and sends nothing); every use (login, refresh, organization
 * switch) sets LastUseAt and emits `breakglass.login`; rotation ends every credential of it
 * (sessions, refresh tokens, API keys, passkeys).
 */
import { strict as assert } from "node:assert";
import { createBreakGlassAccount } from "../../../core/break-glass/account.ts";
import { createApiKey } from "../../../core/credentials/api-keys.ts";
import { adminBed } from "../../support/admin.ts";

Deno.test("break-glass: nothing of it outlives rotation; every use is recorded", async (t) => {
  const admin = await adminBed();
  const { bed } = admin;
  try {
    const { account, password } = await createBreakGlassAccount({
      storage: bed.storage,
      passwords: bed.login.passwords,
      random: bed.random,
      clock: bed.clock,
    }, { realmId: admin.realmId, actor: { id: "svc:cli", kind: "System" } });
    const call = (method: string, path: string, token: string | null, body?: unknown) =>
      Promise.resolve(admin.app.request(path, {
        method,
        headers: {
          ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      }));
    const login = await call("POST", "/auth/login", null, { email: account.email, password });
    assert.equal(login.status, 200, await login.clone().text());
    const session = await login.json();
    const token: string = session.accessToken;
    let refreshToken: string = session.refreshToken;

    const refused = async (res: Response, what: string) => {
      assert.equal(res.status, 403, `${what}: ${await res.clone().text()}`);
      assert.equal((await res.json()).error.code, "break_glass_managed", what);
    };

    await t.step("its session creates no API key or service credential", async () => {
      const before = await admin.chainLength();
      await refused(
        await call("POST", "/svc-admin/api-keys", token, {
          ownerKind: "User",
          ownerId: account.userId,
          name: "k",
        }),
        "API key of its own",
      );
      await refused(
        await call("POST", "/svc-admin/api-keys", token, {
          ownerKind: "User",
          ownerId: admin.users.plain,
          name: "k",
        }),
        "API key of someone else",
      );
      await refused(
        await call("POST", "/svc-admin/service-accounts", token, { name: "robot" }),
        "service account",
      );
      await refused(
        await call("POST", "/svc-admin/oidc/clients", token, {
          clientId: "app",
          clientType: "confidential",
          redirectUris: ["https://app.example.test/cb"],
        }),
        "OIDC client",
      );
      const someId = crypto.randomUUID();
      await refused(
        await call("POST", `/svc-admin/service-accounts/${someId}/rotate-secret`, token),
        "service-account secret",
      );
      await refused(
        await call("PATCH", `/svc-admin/oidc/clients/${someId}`, token, {
          jwksUri: "https://keys.example.test/",
        }),
        "client keys",
      );
      assert.equal(await admin.chainLength(), before, "nothing was created");
      assert.deepEqual(await bed.storage.apiKeys.listByOwner("User", account.userId), []);
    });

    await t.step("nobody creates an API key owned by it", async () => {
      const res = await admin.request("POST", "/svc-admin/api-keys", {
        body: { ownerKind: "User", ownerId: account.userId, name: "for break-glass" },
      });
      await refused(res, "the realm administrator");
      assert.deepEqual(await bed.storage.apiKeys.listByOwner("User", account.userId), []);
    });

    await t.step("it enrolls no factor", async () => {
      await refused(await call("POST", "/profile/factors/totp", token), "TOTP");
      await refused(await call("POST", "/profile/factors/email-otp", token), "email OTP");
      await refused(await call("POST", "/profile/factors/recovery-codes", token), "recovery codes");
      await refused(await call("POST", "/auth/passkey/register/options", token, {}), "passkey");
      assert.equal(await bed.storage.totpEnrollments.get(account.userId), null);
    });

    await t.step("forgot password answers as for anyone and sends nothing; reset is refused", async () => {
      const mine = await call("POST", "/auth/password/forgot", null, { email: account.email });
      const ghost = await call("POST", "/auth/password/forgot", null, { email: "ghost@example.test" });
      assert.equal(mine.status, 202);
      assert.deepEqual(await mine.json(), await ghost.json());
      assert.equal(await bed.mail(account.email, "password_reset"), null);
      // A reset link minted anyway (before this change, say) does not set its password.
      const stamp = await bed.storage.users.credentialStamp(account.userId);
      const { token: reset } = await bed.auth.tokens.mint("pwreset+svc", {
        realm: admin.realmId,
        sub: account.userId,
        stamp: stamp!,
      });
      await refused(
        await call("POST", "/auth/password/reset", null, { token: reset, password: "a password I chose" }),
        "reset",
      );
      const relogin = await call("POST", "/auth/login", null, { email: account.email, password });
      assert.equal(relogin.status, 200, "the password is unchanged");
      await relogin.body?.cancel();
    });

    await t.step("its email does not change by PATCH", async () => {
      const res = await admin.request("PATCH", `/svc-admin/users/${account.userId}`, {
        body: { email: "mine-now@example.test" },
      });
      await refused(res, "admin PATCH");
      assert.equal((await bed.storage.users.get(account.userId))?.email, account.email);
    });

    await t.step(
      "a refresh and an organization switch are uses: LastUseAt and breakglass.login",
      async () => {
        for (const via of ["refresh", "switch_organization"] as const) {
          bed.clock.advance(60_000);
          bed.events.length = 0;
          if (via === "refresh") {
            const res = await call("POST", "/auth/refresh", null, { refreshToken });
            assert.equal(res.status, 200);
            refreshToken = (await res.json()).refreshToken;
          } else {
            await bed.storage.organizations.addMember(admin.orgA, account.userId);
            const res = await call("POST", "/auth/switch-organization", token, { orgId: admin.orgA });
            assert.equal(res.status, 200, await res.clone().text());
          }
          const state = await bed.storage.breakGlass.get(admin.realmId);
          assert.deepEqual(state?.lastUseAt, new Date(bed.clock.now()), via);
          // The event is published fire-and-forget after the answer: wait for it (bounded).
          let event = bed.events.find((e) => e.kind === "breakglass.login");
          for (let i = 0; event === undefined && i < 200; i++) {
            await new Promise((resolve) => setTimeout(resolve, 10));
            event = bed.events.find((e) => e.kind === "breakglass.login");
          }
          assert.ok(event, via);
          assert.equal(event.userId, account.userId);
          assert.equal(event.data.via, via);
        }
      },
    );

    await t.step("rotation ends every credential: sessions, refresh tokens, API keys, passkeys", async () => {
      // Credentials left from before these refusals existed.
      const legacy = await createApiKey(bed.storage.apiKeys, bed.random, {
        realmId: admin.realmId,
        ownerKind: "User",
        ownerId: account.userId,
        name: "minted by its session",
        expiresAt: null,
      });
      await bed.storage.passkeyCredentials.create({
        userId: account.userId,
        credentialId: new Uint8Array(16).fill(9),
        publicKey: new Uint8Array(77).fill(2),
        userVerificationCapable: true,
        transports: ["internal"],
        name: "left over",
      });
      assert.equal(
        (await call("GET", "/svc-admin/users", legacy.token)).status,
        401,
        "a key it owns never acts, rotated or not",
      );
      const rotate = await admin.request("POST", "/svc-admin/break-glass/rotate");
      assert.equal(rotate.status, 200, await rotate.clone().text());
      assert.equal((await call("GET", "/svc-admin/users", legacy.token)).status, 401, "the API key");
      assert.notEqual(
        (await bed.storage.apiKeys.get(legacy.key.id))?.revokedAt,
        null,
        "revoked by the rotation",
      );
      assert.equal((await call("GET", "/profile/me", token)).status, 401, "the access token");
      assert.equal(
        (await call("POST", "/auth/refresh", null, { refreshToken })).status,
        401,
        "the refresh token",
      );
      assert.deepEqual(await bed.storage.passkeyCredentials.listByUser(account.userId), []);
      const entry = (await bed.storage.adminAudit.head(admin.realmId))!;
      assert.equal(entry.action, "breakglass.rotate");
    });
  } finally {
    await admin.close();
  }
});
