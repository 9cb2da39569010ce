/**
 * Password login end to end over HTTP (spec 5.2): the token response, one 401 body for an
 * unknown user and a wrong password (with the dummy argon2id verification), the abuse gate's
 * refusals, legacy hashes rehashed to argon2id, TOTP, email OTP step-up forced by the risk
 * gate (IP reputation fixture with a known device), recovery codes, the cookie transport and
 * the audience check.
 */
import { strict as assert } from "node:assert";
import { TestCaptchaProvider } from "../../../core/abuse/captcha.ts";
import { KnownDevices } from "../../../core/devices/known-devices.ts";
import { ListIpReputation } from "../../../core/risk/providers.ts";
import { type LoginBed, loginBed } from "../../support/login.ts";

const REPUTATION = await Deno.readTextFile(new URL("../../fixtures/risk/ip-reputation.txt", import.meta.url));
/** 192.0.2.66 is listed with no score (100): the IP reputation signal (50) fires. */
const BAD_IP = "192.0.2.66";

const withoutRequestId = (body: { error: Record<string, unknown> }) => {
  const { requestId: _, ...rest } = body.error;
  return rest;
};

async function tokensOf(res: Response): Promise<{ accessToken: string; refreshToken: string }> {
  assert.equal(res.status, 200, await res.clone().text());
  const body = await res.json();
  assert.deepEqual(Object.keys(body).sort(), ["accessToken", "expiresIn", "refreshToken", "tokenType"]);
  assert.equal(body.tokenType, "Bearer");
  return body;
}

async function me(bed: LoginBed, token: string): Promise<Record<string, unknown>> {
  const res = await bed.get("/profile/me", token);
  assert.equal(res.status, 200);
  return await res.json();
}

async function enrollTotp(bed: LoginBed, accessToken: string): Promise<string> {
  const auth = { Authorization: `Bearer ${accessToken}` };
  let res = await bed.post("/profile/factors/totp", {}, { headers: auth });
  assert.equal(res.status, 200);
  const started = await res.json();
  assert.match(started.uri, /^otpauth:\/\/totp\//);
  res = await bed.post("/profile/factors/totp/confirm", { code: "000000" }, { headers: auth });
  assert.equal(res.status, 401);
  res = await bed.post("/profile/factors/totp/confirm", { code: bed.totp(started.secret) }, {
    headers: auth,
  });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { totp: "confirmed" });
  // The confirming code's step is spent: the next code comes with the next step.
  bed.clock.advance(30_000);
  return started.secret;
}

Deno.test("password login over HTTP", async (t) => {
  const bed = await loginBed({ SVC_ABUSE_PER_IP_LIMIT: "1000" }, {
    reputation: ListIpReputation.parse(REPUTATION, "ip-reputation.txt"),
  });
  try {
    await t.step("a correct password signs in (bearer), records the device and the ledger", async () => {
      const userId = await bed.user("alice@example.test", "correct horse battery");
      const tokens = await tokensOf(
        await bed.post("/auth/login", {
          email: "Alice@Example.test",
          password: "correct horse battery",
          deviceFingerprint: "alice-laptop",
        }, { headers: { "User-Agent": "TestBrowser/1.0" } }),
      );
      const profile = await me(bed, tokens.accessToken);
      assert.equal(profile.id, userId);
      assert.equal(profile.mfa, "Password");
      const ledger = await bed.storage.securityEvents.listByUser(userId);
      const succeeded = ledger.find((e) => e.kind === "login.succeeded");
      assert.ok(succeeded);
      assert.equal(succeeded.ipAddress, "203.0.113.10");
      assert.equal(succeeded.deviceDescription, "TestBrowser/1.0");
      assert.ok(ledger.some((e) => e.kind === "login.new_device"));
      assert.ok(await bed.mail("alice@example.test", "new_device_alert"), "new-device alert mailed");
      assert.match((await bed.mail("alice@example.test", "new_device_alert"))!.subject, /^New sign-in/);
      // Another device from a French browser: the alert is written in French.
      await tokensOf(
        await bed.post("/auth/login", {
          email: "alice@example.test",
          password: "correct horse battery",
          deviceFingerprint: "alice-phone",
        }, { headers: { "User-Agent": "TestBrowser/2.0", "Accept-Language": "fr-CA,fr;q=0.9" } }),
      );
      assert.match(
        (await bed.mail("alice@example.test", "new_device_alert"))!.subject,
        /^Nouvelle connexion à votre compte/,
      );
      assert.ok(bed.events.some((e) => e.kind === "risk.evaluated" && e.userId === userId));

      // The same device again: no second alert.
      const before = (await bed.storage.mailOutbox.list({ to: "alice@example.test" })).length;
      await tokensOf(
        await bed.post("/auth/login", {
          email: "alice@example.test",
          password: "correct horse battery",
          deviceFingerprint: "alice-laptop",
        }),
      );
      assert.equal((await bed.storage.mailOutbox.list({ to: "alice@example.test" })).length, before);
    });

    await t.step(
      "an unknown user and a wrong password give the same 401; the unknown one runs the dummy",
      async () => {
        await bed.user("bob@example.test", "bob's password");
        const dummies = bed.login.passwords.dummyVerifications;
        const wrong = await bed.post("/auth/login", { email: "bob@example.test", password: "nope" });
        assert.equal(bed.login.passwords.dummyVerifications, dummies, "a real verification ran");
        const unknown = await bed.post("/auth/login", { email: "nobody@example.test", password: "nope" });
        assert.equal(
          bed.login.passwords.dummyVerifications,
          dummies + 1,
          "the dummy argon2id verification ran",
        );
        assert.equal(wrong.status, 401);
        assert.equal(unknown.status, 401);
        const [a, b] = [await wrong.json(), await unknown.json()];
        assert.deepEqual(withoutRequestId(a), withoutRequestId(b));
        assert.equal(a.error.code, "invalid_credentials");
        assert.ok(
          bed.events.some((e) => e.kind === "login.failed" && e.data.reason === "invalid_credentials"),
        );

        // An invited user without a password looks the same, and runs the dummy too.
        await bed.storage.users.create({ realmId: bed.realmId, email: "nopass@example.test" });
        const none = await bed.post("/auth/login", { email: "nopass@example.test", password: "nope" });
        assert.deepEqual(withoutRequestId(await none.json()), withoutRequestId(a));
        assert.equal(bed.login.passwords.dummyVerifications, dummies + 2);
      },
    );

    await t.step("the account lockout blocks with 429 login_blocked before any password work", async () => {
      await bed.user("carol@example.test", "carol's password");
      for (let i = 0; i < 5; i++) {
        const res = await bed.post("/auth/login", { email: "carol@example.test", password: "wrong" }, {
          ip: `198.18.0.${i + 1}`,
        });
        assert.equal(res.status, 401);
      }
      const dummies = bed.login.passwords.dummyVerifications;
      const blocked = await bed.post("/auth/login", {
        email: "carol@example.test",
        password: "carol's password",
      }, {
        ip: "198.18.0.9",
      });
      assert.equal(blocked.status, 429);
      assert.equal((await blocked.json()).error.code, "login_blocked");
      assert.ok(Number(blocked.headers.get("Retry-After")) > 0);
      assert.equal(bed.login.passwords.dummyVerifications, dummies);
      bed.clock.advance(901_000);
      await tokensOf(
        await bed.post("/auth/login", { email: "carol@example.test", password: "carol's password" }),
      );
    });

    await t.step("legacy hashes verify and are rehashed to argon2id on the first login", async () => {
      const legacy = [
        {
          email: "pbkdf2@example.test",
          password: "password",
          // passlib's pbkdf2_sha256 test vector.
          hash: {
            algorithm: "pbkdf2-sha256",
            hash: "$pbkdf2-sha256$1212$4vjV83LKPjQzk31VI4E0Vw$hsYF68OiOUPdDZ1Fg.fJPeq1h/gXXY7acBp9/6c.tmQ",
          },
        },
        {
          email: "bcrypt@example.test",
          password: "U*U",
          // Openwall crypt_blowfish wrapper.c test vector.
          hash: { algorithm: "bcrypt", hash: "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW" },
        },
      ];
      for (const { email, password, hash } of legacy) {
        const userId = await bed.user(email, hash);
        assert.equal((await bed.post("/auth/login", { email, password: password + "x" })).status, 401);
        assert.equal((await bed.storage.passwordCredentials.get(userId))?.algorithm, hash.algorithm);
        await tokensOf(await bed.post("/auth/login", { email, password }));
        const rows = await bed.storage.passwordCredentials.list(userId);
        assert.equal(rows.length, 1, "exactly one credential");
        assert.equal(rows[0].algorithm, "argon2id");
        assert.match(rows[0].hash, /^\$argon2id\$v=19\$m=8192,t=1,p=1\$/);
        await tokensOf(await bed.post("/auth/login", { email, password }));
        assert.equal(
          (await bed.storage.passwordCredentials.get(userId))?.hash,
          rows[0].hash,
          "no second rehash",
        );
      }
    });

    await t.step("TOTP: enrolled users always prove it; the hand-off token completes once", async () => {
      const userId = await bed.user("dave@example.test", "dave's password");
      const first = await tokensOf(
        await bed.post("/auth/login", { email: "dave@example.test", password: "dave's password" }),
      );
      const secret = await enrollTotp(bed, first.accessToken);

      let res = await bed.post("/auth/login", { email: "dave@example.test", password: "dave's password" });
      assert.equal(res.status, 200);
      const pending = await res.json();
      assert.equal(pending.mfaRequired, true);
      assert.deepEqual(pending.factors, ["totp"]);
      assert.equal(pending.expiresIn, 300);
      assert.equal(pending.accessToken, undefined);

      res = await bed.post("/auth/mfa/verify", {
        mfaToken: pending.mfaToken,
        factor: "totp",
        code: "123456",
      });
      assert.equal(res.status, 401);
      assert.equal((await res.json()).error.code, "invalid_mfa_code");
      assert.ok((await bed.storage.securityEvents.listByUser(userId)).some((e) => e.kind === "mfa.failed"));

      const code = bed.totp(secret);
      const tokens = await tokensOf(
        await bed.post("/auth/mfa/verify", { mfaToken: pending.mfaToken, factor: "totp", code }),
      );
      assert.equal((await me(bed, tokens.accessToken)).mfa, "MultiFactor");
      res = await bed.post("/auth/mfa/verify", { mfaToken: pending.mfaToken, factor: "totp", code });
      assert.equal(res.status, 401);
      assert.equal((await res.json()).error.code, "invalid_token", "a completed login cannot complete again");

      // An access token is no hand-off token.
      res = await bed.post("/auth/mfa/verify", { mfaToken: tokens.accessToken, factor: "totp", code });
      assert.equal((await res.json()).error.code, "invalid_token");
    });

    await t.step("lost authenticator: a recovery code completes the login, once", async () => {
      const userId = await bed.user("erin@example.test", "erin's password");
      const first = await tokensOf(
        await bed.post("/auth/login", { email: "erin@example.test", password: "erin's password" }),
      );
      const secret = await enrollTotp(bed, first.accessToken);
      const auth = { Authorization: `Bearer ${first.accessToken}` };
      // TOTP is confirmed and the session had no second factor: regeneration needs a TOTP code.
      let res = await bed.post("/profile/factors/recovery-codes", {}, { headers: auth });
      assert.equal(res.status, 403);
      assert.equal((await res.json()).error.code, "second_factor_required");
      res = await bed.post("/profile/factors/recovery-codes", { code: bed.totp(secret) }, { headers: auth });
      assert.equal(res.status, 200);
      const { codes } = await res.json();
      assert.equal(codes.length, 10);
      res = await bed.get("/profile/factors", first.accessToken);
      assert.deepEqual(await res.json(), {
        totp: "confirmed",
        recoveryCodesRemaining: 10,
        emailOtp: true,
        emailOtpEnrolled: false,
      });

      res = await bed.post("/auth/login", { email: "erin@example.test", password: "erin's password" });
      const pending = await res.json();
      assert.deepEqual(pending.factors, ["totp", "recovery_code"]);
      const tokens = await tokensOf(
        await bed.post("/auth/mfa/verify", {
          mfaToken: pending.mfaToken,
          factor: "recovery_code",
          code: codes[0],
        }),
      );
      assert.equal((await me(bed, tokens.accessToken)).mfa, "MultiFactor");
      assert.equal(await bed.login.recoveryCodes.remaining(userId), 9);

      res = await bed.post("/auth/login", { email: "erin@example.test", password: "erin's password" });
      const again = await res.json();
      res = await bed.post("/auth/mfa/verify", {
        mfaToken: again.mfaToken,
        factor: "recovery_code",
        code: codes[0],
      });
      assert.equal(res.status, 401, "a recovery code works once");
      await tokensOf(
        await bed.post("/auth/mfa/verify", {
          mfaToken: again.mfaToken,
          factor: "recovery_code",
          code: codes[1],
        }),
      );

      // With a multi-factor session, TOTP can be removed without a code.
      res = await bed.app.request("/profile/factors/totp", {
        method: "DELETE",
        headers: { Authorization: `Bearer ${tokens.accessToken}` },
      });
      assert.equal(res.status, 204);
      await tokensOf(
        await bed.post("/auth/login", { email: "erin@example.test", password: "erin's password" }),
      );
    });

    await t.step("email OTP enrolled as a factor is demanded at every login, until removed", async () => {
      await bed.user("grace@example.test", "grace's password");
      const login = {
        email: "grace@example.test",
        password: "grace's password",
        deviceFingerprint: "grace-laptop",
      };
      const first = await tokensOf(await bed.post("/auth/login", login));
      const auth = { Authorization: `Bearer ${first.accessToken}` };

      let res = await bed.post("/profile/factors/email-otp", {}, { headers: auth });
      assert.equal(res.status, 202);
      res = await bed.post("/profile/factors/email-otp/confirm", { code: "not-it" }, { headers: auth });
      assert.equal(res.status, 401);
      assert.equal((await res.json()).error.code, "invalid_mfa_code");
      const enrollCode = await bed.mailedCode("grace@example.test");
      res = await bed.post("/profile/factors/email-otp/confirm", { code: enrollCode }, { headers: auth });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { emailOtp: "enrolled" });
      const factors = await (await bed.get("/profile/factors", first.accessToken)).json();
      assert.equal(factors.emailOtpEnrolled, true);

      // A known device from a good IP: the risk gate allows, the enrollment still demands the code.
      res = await bed.post("/auth/login", login);
      const pending = await res.json();
      assert.equal(pending.mfaRequired, true, JSON.stringify(pending));
      assert.deepEqual(pending.factors, ["email_otp"]);
      const code = await bed.mailedCode("grace@example.test");
      assert.notEqual(code, enrollCode);
      const tokens = await tokensOf(
        await bed.post("/auth/mfa/verify", { mfaToken: pending.mfaToken, factor: "email_otp", code }),
      );
      assert.equal((await me(bed, tokens.accessToken)).mfa, "MultiFactor");

      res = await bed.app.request("/profile/factors/email-otp", {
        method: "DELETE",
        headers: { Authorization: `Bearer ${tokens.accessToken}` },
      });
      assert.equal(res.status, 204);
      await tokensOf(await bed.post("/auth/login", login));
    });

    await t.step("email OTP step-up when the risk gate asks (bad IP reputation, known device)", async () => {
      const userId = await bed.user("frank@example.test", "frank's password");
      const login = {
        email: "frank@example.test",
        password: "frank's password",
        deviceFingerprint: "frank-phone",
      };
      await tokensOf(await bed.post("/auth/login", login)); // new device (30): allowed, device recorded

      let res = await bed.post("/auth/login", login, { ip: BAD_IP });
      assert.equal(res.status, 200);
      const pending = await res.json();
      assert.equal(pending.mfaRequired, true);
      assert.deepEqual(pending.factors, ["email_otp"]);
      const risk = bed.events.findLast((e) => e.kind === "risk.evaluated" && e.userId === userId);
      assert.equal(risk?.data.outcome, "StepUpMfa");
      assert.deepEqual((risk?.data.signals as { name: string }[]).map((s) => s.name), ["ip_reputation"]);

      const code = await bed.mailedCode("frank@example.test");
      const wrong = code === "000000" ? "111111" : "000000";
      res = await bed.post("/auth/mfa/verify", {
        mfaToken: pending.mfaToken,
        factor: "email_otp",
        code: wrong,
      }, {
        ip: BAD_IP,
      });
      assert.equal(res.status, 401);
      // TOTP is no way around it: the user has none.
      res = await bed.post("/auth/mfa/verify", { mfaToken: pending.mfaToken, factor: "totp", code }, {
        ip: BAD_IP,
      });
      assert.equal(res.status, 401);
      const tokens = await tokensOf(
        await bed.post("/auth/mfa/verify", { mfaToken: pending.mfaToken, factor: "email_otp", code }, {
          ip: BAD_IP,
        }),
      );
      const profile = await me(bed, tokens.accessToken);
      assert.equal(profile.mfa, "MultiFactor");

      // A new device from the bad IP scores 80: blocked, answered exactly as a wrong password.
      const stolen = { ...login, deviceFingerprint: "stolen" };
      const blocked = await bed.post("/auth/login", stolen, { ip: BAD_IP });
      const wrongPassword = await bed.post("/auth/login", { ...stolen, password: "not frank's" }, {
        ip: BAD_IP,
      });
      assert.equal(blocked.status, 401);
      assert.equal(blocked.status, wrongPassword.status);
      const [blockedBody, wrongBody] = [await blocked.json(), await wrongPassword.json()];
      assert.equal(blockedBody.error.code, "invalid_credentials");
      assert.deepEqual(withoutRequestId(blockedBody), withoutRequestId(wrongBody));
      const headersOf = (r: Response) => [...r.headers].filter(([name]) => name !== "x-request-id");
      assert.deepEqual(headersOf(blocked), headersOf(wrongPassword));
      // The owner learns of it: the ledger, risk.evaluated and an alert mail.
      assert.ok(
        (await bed.storage.securityEvents.listByUser(userId)).some((e) =>
          e.kind === "login.failed" && (e.data as { reason?: string })?.reason === "risk_blocked"
        ),
      );
      assert.equal(
        bed.events.findLast((e) => e.kind === "risk.evaluated" && e.userId === userId)?.data.outcome,
        "Block",
      );
      const alert = await bed.mail("frank@example.test", "login_blocked_alert");
      assert.ok(alert, "the blocked sign-in is mailed to the account");
      assert.match(alert.text, /IP address: 192\.0\.2\.66/);
    });

    await t.step("cookie transport, audience and organization", async () => {
      await bed.user("gina@example.test", "gina's password");
      let res = await bed.post("/auth/login", { email: "gina@example.test", password: "gina's password" }, {
        headers: { "X-Svc-Transport": "cookie" },
      });
      assert.equal(res.status, 200);
      assert.ok(res.headers.getSetCookie().some((c) => c.startsWith("svc_at=")));
      assert.deepEqual(Object.keys(await res.json()).sort(), ["csrfToken", "expiresIn"]);

      res = await bed.post("/auth/login", {
        email: "gina@example.test",
        password: "gina's password",
        audience: "nope",
      });
      assert.equal(res.status, 400);
      assert.equal((await res.json()).error.code, "unknown_audience");
      await bed.storage.appCatalog.register({ appKey: "billing" });
      const tokens = await tokensOf(
        await bed.post("/auth/login", {
          email: "gina@example.test",
          password: "gina's password",
          audience: "billing",
        }),
      );
      const claims = JSON.parse(atob(tokens.accessToken.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")));
      assert.equal(claims.aud, "billing");

      const org = await bed.storage.organizations.create({
        realmId: bed.realmId,
        name: "acme",
        displayName: "Acme",
      });
      res = await bed.post("/auth/login", {
        email: "gina@example.test",
        password: "gina's password",
        org: org.id,
      });
      assert.equal(res.status, 403, "not a member");
    });
  } finally {
    await bed.close();
  }
});

Deno.test("password login: the adaptive CAPTCHA is demanded under pressure", async () => {
  const captcha = new TestCaptchaProvider();
  const bed = await loginBed({ SVC_ABUSE_PER_IP_LIMIT: "4" }, { captcha });
  try {
    await bed.user("hal@example.test", "hal's password");
    const login = { email: "hal@example.test", password: "hal's password" };
    await tokensOf(await bed.post("/auth/login", login));
    await tokensOf(await bed.post("/auth/login", login));
    const res = await bed.post("/auth/login", login);
    assert.equal(res.status, 401);
    const body = await res.json();
    assert.equal(body.error.code, "captcha_required");
    assert.equal(body.error.details.siteKey, "test-site-key");
    await tokensOf(await bed.post("/auth/login", { ...login, captchaToken: "test-pass" }));
    const blocked = await bed.post("/auth/login", { ...login, captchaToken: "test-pass" });
    assert.equal(blocked.status, 429, "blocking wins over the CAPTCHA");
  } finally {
    await bed.close();
  }
});

Deno.test("known devices: a browser is recognised by its device cookie, never by a claim", async () => {
  const bed = await loginBed({ SVC_ABUSE_PER_IP_LIMIT: "1000" });
  try {
    const userId = await bed.user("ivy@example.test", "ivy's password");
    const login = { email: "ivy@example.test", password: "ivy's password" };
    const newDeviceFired = () => {
      const risk = bed.events.findLast((e) => e.kind === "risk.evaluated" && e.userId === userId);
      return (risk!.data.signals as { name: string }[]).some((s) => s.name === "new_device");
    };
    const deviceCookieOf = (res: Response) =>
      res.headers.getSetCookie().find((c) => c.startsWith("svc_device="));

    // The first sign-in without any device id: a new device, and the answer issues one.
    let res = await bed.post("/auth/login", login);
    await tokensOf(res);
    assert.equal(newDeviceFired(), true);
    const cookie = deviceCookieOf(res);
    assert.ok(cookie, "the sign-in answer sets svc_device");
    const id = /^svc_device=([^;]+)/.exec(cookie)![1];
    assert.match(id, /^[A-Za-z0-9_-]{43}$/);
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; Path=\//);
    assert.match(cookie, /; Max-Age=34560000/);
    assert.match(cookie, /; SameSite=Lax/i);
    assert.equal(res.headers.get("X-Svc-Device"), id, "a bearer client gets the id to keep");
    // Only the SHA-256 of the id is stored.
    const stored = await bed.storage.knownDevices.listByUser(userId);
    assert.deepEqual(stored.map((d) => d.fingerprintHash), [
      KnownDevices.fingerprintHash(id),
    ]);
    assert.notEqual(stored[0].fingerprintHash, id);

    // Ten ordinary logins from that browser within an hour: known, no step-up, no new cookie.
    for (let i = 0; i < 10; i++) {
      bed.clock.advance(5 * 60_000);
      res = await bed.post("/auth/login", login, { headers: { Cookie: `svc_device=${id}` } });
      await tokensOf(res);
      assert.equal(newDeviceFired(), false, `login ${i + 1}`);
      assert.equal(deviceCookieOf(res), undefined);
    }
    // The cookie transport gets it too, and keeps it.
    res = await bed.post("/auth/login", login, {
      headers: { Cookie: `svc_device=${id}`, "X-Svc-Transport": "cookie" },
    });
    assert.equal(res.status, 200);
    assert.equal(newDeviceFired(), false);

    // Without the cookie or an id: new again (and a different id is issued).
    bed.clock.advance(3_600_000);
    res = await bed.post("/auth/login", login);
    await tokensOf(res);
    assert.equal(newDeviceFired(), true);
    assert.notEqual(res.headers.get("X-Svc-Device"), id);

    // An API client keeps its issued id in X-Svc-Device: known on its next sign-in.
    const apiId = res.headers.get("X-Svc-Device")!;
    await tokensOf(await bed.post("/auth/login", login, { headers: { "X-Svc-Device": apiId } }));
    assert.equal(newDeviceFired(), false);

    // A forged id, in the header or the cookie, is a new device.
    const forged = "A".repeat(43);
    await tokensOf(await bed.post("/auth/login", login, { headers: { "X-Svc-Device": forged } }));
    assert.equal(newDeviceFired(), true);
    bed.clock.advance(3_600_000);
    await tokensOf(
      await bed.post("/auth/login", login, { headers: { Cookie: `svc_device=${"B".repeat(43)}` } }),
    );
    assert.equal(newDeviceFired(), true);

    // A client-chosen value cannot lower what the server computed from its cookie: a fingerprint
    // seen before does not make an unknown cookie known, nor does a known id in the header.
    await tokensOf(await bed.post("/auth/login", { ...login, deviceFingerprint: "ivy-laptop" }));
    bed.clock.advance(3_600_000);
    const unknownCookie = { Cookie: `svc_device=${"C".repeat(43)}` };
    await tokensOf(
      await bed.post("/auth/login", { ...login, deviceFingerprint: "ivy-laptop" }, {
        headers: { ...unknownCookie, "X-Svc-Device": apiId },
      }),
    );
    assert.equal(newDeviceFired(), true);
  } finally {
    await bed.close();
  }
});
