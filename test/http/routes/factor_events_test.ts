/**
 * Second-factor changes over HTTP are in the user's security ledger (`mfa.totp_enabled`,
 * `mfa.recovery_codes_generated` with the count and no code, `mfa.totp_disabled`), and a TOTP
 * code whose step is already spent answers its own stable error, `totp_code_replayed` ("wait for
 * the next code"), at the login's second step and as a factor-change proof; a wrong code still
 * answers `invalid_mfa_code`.
 */
import assert from "node:assert/strict";
import { loginBed } from "../../support/login.ts";

Deno.test("factors over HTTP: ledger events for TOTP and recovery codes; a replayed TOTP code says to wait", async () => {
  const bed = await loginBed({ SVC_ABUSE_PER_IP_LIMIT: "1000" });
  try {
    const email = "fay@example.test";
    const password = "fay's password";
    const userId = await bed.user(email, password);
    const kinds = async () => (await bed.storage.securityEvents.listByUser(userId)).map((e) => e.kind);
    const signIn = async () => await (await bed.post("/auth/login", { email, password })).json();

    const first = await signIn();
    const auth = { Authorization: `Bearer ${first.accessToken}` };
    let res = await bed.post("/profile/factors/totp", {}, { headers: auth });
    const { secret } = await res.json();
    assert.ok(!(await kinds()).includes("mfa.totp_enabled"), "starting is no change yet");
    const confirming = bed.totp(secret);
    res = await bed.post("/profile/factors/totp/confirm", { code: confirming }, { headers: auth });
    assert.equal(res.status, 200);
    assert.equal((await kinds()).filter((k) => k === "mfa.totp_enabled").length, 1);

    // The confirming code's step is spent: as a proof it is a replay, not a wrong code.
    res = await bed.post("/profile/factors/recovery-codes", { code: confirming }, { headers: auth });
    assert.equal(res.status, 401);
    let error = (await res.json()).error;
    assert.equal(error.code, "totp_code_replayed");
    assert.match(error.message, /next code/);
    assert.ok(!(await kinds()).includes("mfa.recovery_codes_generated"), "refused: no event");

    // At the login's second step too; a wrong code is still invalid_mfa_code.
    const pending = await signIn();
    assert.equal(pending.mfaRequired, true);
    const verify = (code: string) =>
      bed.post("/auth/mfa/verify", { mfaToken: pending.mfaToken, factor: "totp", code });
    res = await verify(confirming);
    assert.equal(res.status, 401);
    error = (await res.json()).error;
    assert.equal(error.code, "totp_code_replayed");
    assert.notEqual(error.message, "The code is incorrect or expired.");
    res = await verify(confirming === "000000" ? "111111" : "000000");
    assert.equal((await res.json()).error.code, "invalid_mfa_code");
    bed.clock.advance(30_000);
    res = await verify(bed.totp(secret));
    assert.equal(res.status, 200);
    const multi = { Authorization: `Bearer ${(await res.json()).accessToken}` };

    res = await bed.post("/profile/factors/recovery-codes", {}, { headers: multi });
    assert.equal(res.status, 200);
    const { codes } = await res.json();
    const events = await bed.storage.securityEvents.listByUser(userId);
    const generated = events.filter((e) => e.kind === "mfa.recovery_codes_generated");
    assert.equal(generated.length, 1);
    assert.deepEqual(generated[0].data, { count: codes.length });
    assert.ok(!JSON.stringify(events).includes(codes[0]), "no recovery code in the ledger");

    res = await bed.app.request("/profile/factors/totp", { method: "DELETE", headers: multi });
    assert.equal(res.status, 204);
    assert.equal((await kinds()).filter((k) => k === "mfa.totp_disabled").length, 1);
    res = await bed.app.request("/profile/factors/totp", { method: "DELETE", headers: multi });
    assert.equal(res.status, 404);
    assert.equal(
      (await kinds()).filter((k) => k === "mfa.totp_disabled").length,
      1,
      "a no-op records nothing",
    );
  } finally {
    await bed.close();
  }
});
