/**
 * A replayed authorization code revokes what its first exchange issued even when the replay races
 * that exchange (issue 25): 30 concurrent exchanges of one code on real Postgres connections give
 * one success and 29 `invalid_grant` answers, and afterwards the winner's refresh token and access
 * token are inactive, as they are after a sequential replay. Another client's exchanges of the code,
 * racing the real client's, are refused without consuming it or revoking what it issued (issue 26).
 */
import { strict as assert } from "node:assert";
import { sha256Hex } from "../../../core/digest.ts";
import { builtinPlugins } from "../../../plugins/builtin.ts";
import { pluginBed } from "../../support/plugins.ts";

const REDIRECT = "https://app.example.test/cb";

Deno.test("oidc-provider: concurrent replays of a code revoke the winner's tokens (Postgres)", async (t) => {
  const plugin = builtinPlugins().find((candidate) => candidate.name === "oidc-provider")!;
  const beds = await pluginBed([plugin], { SVC_PLUGINS: "oidc-provider" }, { postgres: true });
  try {
    const { bed, realmId, users } = beds.admin;
    const created = await beds.request("POST", "/svc-admin/oidc/clients", {
      body: {
        clientId: "race-app",
        clientType: "confidential",
        redirectUris: [REDIRECT],
        allowedScopes: ["openid", "email", "offline_access"],
      },
    });
    assert.equal(created.status, 201, await created.clone().text());
    const secret = (await created.json()).clientSecret as string;
    const form = (path: string, fields: Record<string, string>) =>
      beds.request("POST", path, {
        as: null,
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ client_id: "race-app", client_secret: secret, ...fields }).toString(),
      });
    const active = async (token: string) => {
      const res = await form("/oidc/introspect", { token });
      assert.equal(res.status, 200);
      return (await res.json()).active as boolean;
    };
    let codes = 0;
    /** A fresh code for the user's browser session, as the authorization endpoint stores it. */
    const issueCode = async () => {
      const browser = await bed.storage.sessions.create({
        realmId,
        userId: users.plain,
        mfa: "Password",
        ipAddress: null,
        deviceDescription: null,
        impersonationId: null,
        idleTimeoutMs: 3_600_000,
        absoluteTimeoutMs: 86_400_000,
      });
      const code = `race-code-${codes++}-${crypto.randomUUID()}`;
      await bed.storage.authorizationCodes.store({
        codeHash: sha256Hex(code),
        clientId: "race-app",
        redirectUri: REDIRECT,
        realmId,
        userId: users.plain,
        sessionId: browser.id,
        scopes: ["openid", "offline_access"],
        authTime: new Date(bed.clock.now()),
        expiresAt: new Date(bed.clock.now() + 60_000),
      });
      return code;
    };
    const exchange = (code: string) =>
      form("/oidc/token", { grant_type: "authorization_code", code, redirect_uri: REDIRECT });

    await t.step("a sequential replay revokes the first exchange's tokens", async () => {
      const code = await issueCode();
      const first = await exchange(code);
      assert.equal(first.status, 200);
      const tokens = await first.json();
      assert.equal(await active(tokens.access_token), true);
      assert.equal(await active(tokens.refresh_token), true);
      const replay = await exchange(code);
      assert.equal(replay.status, 400);
      assert.equal((await replay.json()).error, "invalid_grant");
      assert.equal(await active(tokens.access_token), false);
      assert.equal(await active(tokens.refresh_token), false);
    });

    await t.step("30 concurrent exchanges: one wins, and its tokens end with the replays", async () => {
      for (let round = 0; round < 3; round++) {
        const code = await issueCode();
        const answers = await Promise.all(
          Array.from({ length: 30 }, async () => {
            const res = await exchange(code);
            return { status: res.status, body: await res.json() };
          }),
        );
        const won = answers.filter((answer) => answer.status === 200);
        assert.equal(won.length, 1, JSON.stringify(answers.map((answer) => answer.status)));
        assert.ok(answers.every((a) => a.status === 200 || a.body.error === "invalid_grant"));
        const { access_token: accessToken, refresh_token: refreshToken } = won[0].body;
        assert.equal(await active(accessToken), false, "the winner's access token is revoked");
        assert.equal(await active(refreshToken), false, "the winner's refresh token is revoked");
        const record = await bed.auth.sessions.refreshRecord(refreshToken);
        assert.notEqual(record?.revokedAt ?? null, null);
        assert.equal(await bed.storage.sessions.getActive(record!.sessionId), null);
        const refresh = await form("/oidc/token", {
          grant_type: "refresh_token",
          refresh_token: refreshToken,
        });
        assert.equal(refresh.status, 400);
        await refresh.body?.cancel();
      }
    });

    await t.step(
      "another client's concurrent exchanges neither burn the code nor revoke (issue 26)",
      async () => {
        const thief = await beds.request("POST", "/svc-admin/oidc/clients", {
          body: { clientId: "thief-app", clientType: "confidential", redirectUris: [REDIRECT] },
        });
        assert.equal(thief.status, 201);
        const thiefSecret = (await thief.json()).clientSecret as string;
        const stolen = (code: string) =>
          beds.request("POST", "/oidc/token", {
            as: null,
            headers: { "Content-Type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams({
              grant_type: "authorization_code",
              code,
              redirect_uri: REDIRECT,
              client_id: "thief-app",
              client_secret: thiefSecret,
            }).toString(),
          });
        for (let round = 0; round < 3; round++) {
          const code = await issueCode();
          // The thief races the real client, before and after its exchange.
          const [thieves, real] = await Promise.all([
            Promise.all(Array.from({ length: 20 }, () => stolen(code))),
            exchange(code),
          ]);
          assert.equal(real.status, 200, await real.clone().text());
          for (const res of thieves) {
            assert.equal(res.status, 400);
            assert.equal((await res.json()).error, "invalid_grant");
          }
          const tokens = await real.json();
          const after = await Promise.all(Array.from({ length: 10 }, () => stolen(code)));
          assert.ok(after.every((res) => res.status === 400));
          await Promise.all(after.map((res) => res.body?.cancel()));
          assert.equal(await active(tokens.access_token), true, "a stranger's replay revokes nothing");
          assert.equal(await active(tokens.refresh_token), true);
        }
      },
    );
  } finally {
    await beds.close();
  }
});
