/**
 * Suspension through the admin API refuses every way in: the existing access token, password
 * login, the completion of an MFA login started before, passkey login, refresh, an API key and
 * an organization switch. Reactivation lets the user sign in again (API keys stay revoked).
 */
import { strict as assert } from "node:assert";
import { createApiKey } from "../../../core/credentials/api-keys.ts";
import { CeremonyKinds } from "../../../core/passkeys/service.ts";
import { adminBed } from "../../support/admin.ts";
import { bearer, T0 } from "../../support/auth.ts";
import { recorded } from "../../core/passkeys/fixtures.ts";

const EMAIL = "walker@example.test";
const PASSWORD = "walker's password";

Deno.test("a suspended user is refused on every login path, and signs in again once reactivated", async (t) => {
  // The recorded passkey responses were made on this origin, for this user id.
  const admin = await adminBed({ SVC_BASE_URL: recorded.origin, SVC_ABUSE_PER_IP_LIMIT: "1000" });
  const { bed } = admin;
  try {
    const { userId, registration, assertions } = recorded.userVerifying;
    await bed.database.db.insertInto("users").values({
      id: userId,
      realm_id: admin.realmId,
      email: EMAIL,
      email_verified: true,
      display_name: "Walker",
      status: "Active",
      attributes: "{}",
      is_break_glass: false,
      anonymized_at: null,
      created_at: new Date(T0),
      updated_at: new Date(T0),
    }).execute();
    await bed.storage.passwordCredentials.replace(userId, await bed.login.passwords.hash(PASSWORD));
    await bed.storage.organizations.addMember(admin.orgA, userId);
    await bed.storage.organizations.addMember(admin.orgB, userId);

    const login = () => bed.post("/auth/login", { email: EMAIL, password: PASSWORD });
    const first = await (await login()).json();
    assert.equal(typeof first.accessToken, "string", JSON.stringify(first));

    // A passkey, through the routes.
    const registering = await bed.storage.passkeyCeremonies.create({
      kind: CeremonyKinds.registration,
      challenge: registration.challenge,
      realmId: admin.realmId,
      userId,
    });
    const registered = await admin.app.request("/auth/passkey/register", {
      method: "POST",
      headers: { "Content-Type": "application/json", ...bearer(first.accessToken) },
      body: JSON.stringify({ ceremonyId: registering.id, response: registration.response, name: "Phone" }),
    });
    assert.equal(registered.status, 201, await registered.text());
    const passkeyLogin = async (index: number) => {
      const ceremony = await bed.storage.passkeyCeremonies.create({
        kind: CeremonyKinds.login,
        challenge: assertions[index].challenge,
        realmId: admin.realmId,
      });
      return await admin.app.request("/auth/passkey/login", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ ceremonyId: ceremony.id, response: assertions[index].response }),
      });
    };

    // TOTP, so that a password login stops at the MFA hand-off.
    const auth = { headers: bearer(first.accessToken) };
    const started = await (await bed.post("/profile/factors/totp", {}, auth)).json();
    const confirmed = await bed.post(
      "/profile/factors/totp/confirm",
      { code: bed.totp(started.secret) },
      auth,
    );
    assert.equal(confirmed.status, 200, await confirmed.text());
    bed.clock.advance(30_000);
    const pending = await (await login()).json();
    assert.equal(pending.mfaRequired, true, JSON.stringify(pending));

    const { token: apiKey } = await createApiKey(bed.storage.apiKeys, bed.random, {
      realmId: admin.realmId,
      ownerKind: "User",
      ownerId: userId,
      name: "ci",
    });
    assert.equal((await bed.get("/profile/permissions", apiKey)).status, 200);

    await t.step("suspend through the admin API", async () => {
      const res = await admin.request("POST", `/svc-admin/users/${userId}/suspend`, {
        body: { reason: "left the company" },
      });
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal((await res.json()).apiKeysRevoked, 1);
    });

    await t.step("every path is refused", async () => {
      assert.equal((await bed.get("/profile/me", first.accessToken)).status, 401, "access token");
      assert.equal((await login()).status, 401, "password");
      const mfa = await bed.post("/auth/mfa/verify", {
        mfaToken: pending.mfaToken,
        factor: "totp",
        code: bed.totp(started.secret),
      });
      assert.equal(mfa.status, 401, "MFA completion");
      assert.equal((await passkeyLogin(0)).status, 401, "passkey");
      assert.equal(
        (await bed.post("/auth/refresh", { refreshToken: first.refreshToken })).status,
        401,
        "refresh",
      );
      assert.equal((await bed.get("/profile/permissions", apiKey)).status, 401, "API key");
      const switched = await bed.post("/auth/switch-organization", { orgId: admin.orgB }, {
        headers: bearer(first.accessToken),
      });
      assert.equal(switched.status, 401, "switch organization");
      // A session opened in a race with the suspension (past the login gates, not swept): the
      // switch itself checks the account.
      const raced = await bed.auth.sessions.signIn({
        realmId: admin.realmId,
        userId,
        orgId: admin.orgA,
        mfa: "Password",
      });
      const racedSwitch = await bed.post("/auth/switch-organization", { orgId: admin.orgB }, {
        headers: bearer(raced.tokens.accessToken),
      });
      assert.ok([401, 403].includes(racedSwitch.status), `switch on a raced session: ${racedSwitch.status}`);
      assert.equal(
        (await bed.post("/auth/refresh", { refreshToken: raced.tokens.refreshToken })).status,
        401,
      );
    });

    await t.step("reactivated: the user signs in again; the API key stays revoked", async () => {
      const res = await admin.request("POST", `/svc-admin/users/${userId}/reactivate`);
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal((await res.json()).status, "Active");
      bed.clock.advance(30_000);
      const again = await (await login()).json();
      assert.equal(again.mfaRequired, true);
      const mfa = await bed.post("/auth/mfa/verify", {
        mfaToken: again.mfaToken,
        factor: "totp",
        code: bed.totp(started.secret),
      });
      assert.equal(mfa.status, 200, await mfa.text());
      assert.equal((await passkeyLogin(1)).status, 200, "passkey");
      assert.equal((await bed.get("/profile/permissions", apiKey)).status, 401, "API key");
    });
  } finally {
    await admin.close();
  }
});
