/**
 * Recovery codes are spent only by the attempt that wins the `mfa+svc` token (issue 25): one
 * token sent with 9 valid recovery codes at once, over real Postgres connections, signs in once
 * and spends exactly one code; a wrong code spends neither the token nor a code.
 */
import { strict as assert } from "node:assert";
import { normalizeRecoveryCode } from "../../../core/mfa/recovery-codes.ts";
import { hashRecoveryCode } from "../../../core/storage/recovery-codes.ts";
import { loginBed } from "../../support/login.ts";

Deno.test("MFA (postgres): concurrent recovery codes on one token spend exactly one code", async (t) => {
  const bed = await loginBed({
    SVC_ABUSE_PER_IP_LIMIT: "1000",
    SVC_ABUSE_PER_IP_ACCOUNT_LIMIT: "1000",
    SVC_ABUSE_ACCOUNT_LOCKOUT_LIMIT: "1000",
  }, { postgres: true });
  try {
    const userId = await bed.user("rita@example.test", "rita's password");
    const signIn = async () => {
      const res = await bed.post("/auth/login", { email: "rita@example.test", password: "rita's password" });
      assert.equal(res.status, 200);
      return await res.json();
    };
    const first = await signIn();
    const auth = { Authorization: `Bearer ${first.accessToken}` };
    let res = await bed.post("/profile/factors/totp", {}, { headers: auth });
    const { secret } = await res.json();
    res = await bed.post("/profile/factors/totp/confirm", { code: bed.totp(secret) }, { headers: auth });
    assert.equal(res.status, 200);
    bed.clock.advance(30_000);
    res = await bed.post("/profile/factors/recovery-codes", { code: bed.totp(secret) }, { headers: auth });
    assert.equal(res.status, 200);
    const codes = (await res.json()).codes as string[];
    assert.equal(codes.length, 10);
    const verify = (mfaToken: string, code: string) =>
      bed.post("/auth/mfa/verify", { mfaToken, factor: "recovery_code", code });

    await t.step("a wrong code spends neither the token nor a code", async () => {
      const pending = await signIn();
      assert.ok(pending.factors.includes("recovery_code"));
      res = await verify(pending.mfaToken, "AAAA-BBBB-CCCC-DDDD");
      assert.equal(res.status, 401);
      await res.body?.cancel();
      assert.equal(await bed.login.recoveryCodes.remaining(userId), 10);
      res = await verify(pending.mfaToken, codes[9]);
      assert.equal(res.status, 200, await res.clone().text());
      await res.body?.cancel();
      assert.equal(await bed.login.recoveryCodes.remaining(userId), 9);
    });

    await t.step("9 valid codes at once on one token: one sign-in, one code spent", async () => {
      for (let round = 0; round < 3; round++) {
        const fresh = await bed.login.recoveryCodes.generate(userId);
        const pending = await signIn();
        const sent = fresh.slice(0, 9);
        const statuses = await Promise.all(sent.map(async (code) => {
          const answer = await verify(pending.mfaToken, code);
          await answer.body?.cancel();
          return answer.status;
        }));
        assert.equal(statuses.filter((status) => status === 200).length, 1, statuses.join(","));
        assert.equal(statuses.filter((status) => status === 401).length, 8, JSON.stringify(statuses));
        assert.equal(await bed.login.recoveryCodes.remaining(userId), 9, "exactly one code spent");
        const stored = new Set(
          (await bed.database.db.selectFrom("recovery_codes").select("code_hash").where(
            "user_id",
            "=",
            userId,
          )
            .execute()).map((row) => row.code_hash),
        );
        const unspent = sent.filter((code) => stored.has(hashRecoveryCode(normalizeRecoveryCode(code)!)));
        assert.equal(unspent.length, 8, "the losers' codes are all still there");
      }
    });
  } finally {
    await bed.close();
  }
});
