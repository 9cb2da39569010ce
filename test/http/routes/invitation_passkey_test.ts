/**
 * Accepting an invitation with a passkey (issue 14), over HTTP on Postgres: the options for the
 * invited account only (validation, U+0000 refused, a spent or forged token, an account that has
 * a password), a failed registration that leaves the invitation usable, and the acceptance
 * working once when attempts race over real Postgres connections (the losers' passkeys removed).
 * The WebAuthn ceremony itself runs in Chromium in the hosted-pages browser test.
 */
import { strict as assert } from "node:assert";
import { adminBed } from "../../support/admin.ts";

Deno.test("invitation accepted with a passkey: options, refusals, and once under concurrency", async (t) => {
  const admin = await adminBed({}, { postgres: true });
  const { bed } = admin;
  const post = (path: string, body: unknown) => admin.request("POST", path, { as: null, body });
  try {
    const invited = await admin.request("POST", "/svc-admin/users/invite", {
      body: { email: "pat@example.test" },
      headers: { "Accept-Language": "fr" },
    });
    assert.equal(invited.status, 201);
    const userId = (await invited.json()).userId as string;
    const token = await bed.mailedToken("pat@example.test", "invitation");
    // Written in the inviter's language (their request's Accept-Language).
    assert.match((await bed.mail("pat@example.test", "invitation"))!.subject, /Vous êtes invité/);

    await t.step("options: a registration for the invited account, never cached", async () => {
      const res = await post("/auth/invitation/passkey/options", { token });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("Cache-Control"), "no-store");
      const body = await res.json();
      assert.equal(typeof body.ceremonyId, "string");
      assert.equal(body.options.user.name, "pat@example.test");
    });

    await t.step("bodies are validated; U+0000 is refused; a forged token is invalid_token", async () => {
      for (
        const bad of [{}, { token: "a\u0000b" }, { token: 3 }, { token, extra: 1 }, { token: "" }]
      ) {
        const res = await post("/auth/invitation/passkey/options", bad);
        assert.equal(res.status, 400, JSON.stringify(bad));
        await res.body?.cancel();
      }
      const forged = await post("/auth/invitation/passkey/options", { token: "e30.e30.sig" });
      assert.equal(forged.status, 401);
      assert.equal((await forged.json()).error.code, "invalid_token");
      const noResponse = await post("/auth/invitation/passkey", { token, ceremonyId: "c" });
      assert.equal(noResponse.status, 400);
      await noResponse.body?.cancel();
    });

    await t.step("a registration that fails leaves the invitation usable", async () => {
      const started = await (await post("/auth/invitation/passkey/options", { token })).json();
      const junk = {
        id: "AAAA",
        rawId: "AAAA",
        type: "public-key",
        response: { clientDataJSON: "AAAA", attestationObject: "AAAA" },
        clientExtensionResults: {},
      };
      const res = await post("/auth/invitation/passkey", {
        token,
        ceremonyId: started.ceremonyId,
        response: junk,
      });
      assert.equal(res.status, 400);
      assert.equal((await res.json()).error.code, "passkey_registration_failed");
      assert.equal((await post("/auth/invitation/passkey/options", { token })).status, 200, "still usable");
    });

    await t.step("an account with a password accepts signed in, not with a passkey (409)", async () => {
      await bed.user("has.password@example.test", "a long password");
      const org = await bed.storage.organizations.create({
        realmId: bed.realmId,
        name: "pw-org",
        displayName: "Pw Org",
      });
      const res = await admin.request("POST", "/svc-admin/users/invite", {
        body: { email: "has.password@example.test", orgId: org.id },
      });
      assert.equal(res.status, 201);
      const other = await bed.mailedToken("has.password@example.test", "invitation");
      const refused = await post("/auth/invitation/passkey/options", { token: other });
      assert.equal(refused.status, 409);
      assert.equal(
        (await refused.json()).error.details?.reason ?? "invitation_accepted",
        "invitation_accepted",
      );
    });

    await t.step("racing acceptances: exactly one wins; the losers' passkeys are removed", async () => {
      let n = 0;
      const attempts = await Promise.allSettled(
        Array.from(
          { length: 8 },
          () =>
            bed.login.accounts.acceptInvitationWithPasskey(token, "Pat", async (user) => {
              const credential = await bed.storage.passkeyCredentials.create({
                userId: user.id,
                credentialId: new Uint8Array([1, 2, 3, n++]),
                publicKey: new Uint8Array([9]),
                userVerificationCapable: true,
              });
              return {
                undo: async () => void await bed.storage.passkeyCredentials.delete(user.id, credential.id),
              };
            }),
        ),
      );
      const won = attempts.filter((a) => a.status === "fulfilled");
      assert.equal(won.length, 1, JSON.stringify(attempts.map((a) => a.status)));
      for (const lost of attempts.filter((a) => a.status === "rejected")) {
        assert.equal((lost as PromiseRejectedResult).reason.code, "invalid_token");
      }
      assert.equal((await bed.storage.passkeyCredentials.listByUser(userId)).length, 1);
      const user = await bed.storage.users.get(userId);
      assert.equal(user?.emailVerified, true);
      assert.equal(user?.displayName, "Pat");
      assert.equal(await bed.storage.passwordCredentials.get(userId), null, "a passkey-only account");
      const spent = await post("/auth/invitation/passkey/options", { token });
      assert.equal(spent.status, 401, "the link works once");
      await spent.body?.cancel();
    });
  } finally {
    await admin.close();
  }
});
