/**
 * The refresh grace window through `/oidc/token`, per client: a client registered with
 * `refreshTokenGraceSeconds` gets the same successor for a rotated token presented again within
 * the window, and reuse detection after it; a client without one keeps reuse detection at once;
 * another client presenting the token is refused without touching the family; registration
 * bounds the setting.
 */
import { strict as assert } from "node:assert";
import { oidcProviderPlugin } from "../../../plugins/oidc-provider/mod.ts";
import { oidcAuthorizationCode, pluginBed } from "../../support/plugins.ts";

const REDIRECT = "https://app.example.test/cb";
const FORM = { "Content-Type": "application/x-www-form-urlencoded" };

Deno.test("oidc-provider: refresh grace window per client", async (t) => {
  const beds = await pluginBed([oidcProviderPlugin({ backchannelWorker: false })], {
    SVC_PLUGINS: "oidc-provider",
  });
  try {
    const { bed, realmId } = beds.admin;
    const secrets: Record<string, string> = {};
    for (const [clientId, grace] of [["tabs", 30], ["strict", undefined]] as const) {
      const res = await beds.request("POST", "/svc-admin/oidc/clients", {
        body: {
          clientId,
          clientType: "confidential",
          redirectUris: [REDIRECT],
          allowedScopes: ["openid", "offline_access"],
          ...(grace !== undefined ? { refreshTokenGraceSeconds: grace } : {}),
        },
      });
      assert.equal(res.status, 201, await res.clone().text());
      const body = await res.json();
      assert.equal(body.refreshTokenGraceSeconds, grace ?? 0);
      secrets[clientId] = body.clientSecret;
    }
    const user = await bed.storage.users.create({ realmId, email: "tabs@example.test" });
    const start = async (clientId: string) => {
      const { code } = await oidcAuthorizationCode(beds, {
        userId: user.id,
        clientId,
        redirectUri: REDIRECT,
      });
      const tokens = await token(clientId, {
        grant_type: "authorization_code",
        code,
        redirect_uri: REDIRECT,
      });
      assert.equal(tokens.status, 200);
      return (await tokens.json()).refresh_token as string;
    };
    const token = (clientId: string, fields: Record<string, string>) =>
      beds.app.request("/oidc/token", {
        method: "POST",
        headers: FORM,
        body: new URLSearchParams({ ...fields, client_id: clientId, client_secret: secrets[clientId] })
          .toString(),
      });
    const refresh = (clientId: string, refreshToken: string) =>
      token(clientId, { grant_type: "refresh_token", refresh_token: refreshToken });

    await t.step("within the window: the same successor; after it: the family is revoked", async () => {
      const first = await start("tabs");
      const a = await refresh("tabs", first);
      assert.equal(a.status, 200);
      const successor = (await a.json()).refresh_token;
      bed.clock.advance(29_000);
      const b = await refresh("tabs", first);
      assert.equal(b.status, 200, await b.clone().text());
      const again = await b.json();
      assert.equal(again.refresh_token, successor);
      assert.ok(again.access_token && again.id_token);
      // Another client presenting it is refused and changes nothing: still inside the window,
      // the right client presenting it again gets the same successor (a revoked family would not).
      const foreign = await refresh("strict", first);
      assert.equal(foreign.status, 400);
      assert.equal((await foreign.json()).error, "invalid_grant");
      const c = await refresh("tabs", first);
      assert.equal(c.status, 200, await c.clone().text());
      assert.equal((await c.json()).refresh_token, successor, "the same successor after the refusal");
      const records = await Promise.all([first, successor].map((t) => bed.auth.sessions.refreshRecord(t)));
      assert.ok(
        records.every((record) => record !== null && record.revokedAt === null),
        "the family is alive",
      );
      assert.notEqual(await bed.storage.sessions.getActive(records[0]!.sessionId), null, "its session too");
      bed.clock.advance(2_000);
      assert.equal((await refresh("tabs", first)).status, 400, "outside the window: reuse");
      assert.equal((await refresh("tabs", successor)).status, 400, "the family is revoked");
    });

    await t.step("a client without a window: reuse detection at once", async () => {
      const first = await start("strict");
      assert.equal((await refresh("strict", first)).status, 200);
      assert.equal((await refresh("strict", first)).status, 400);
    });

    await t.step("registration bounds the window", async () => {
      for (const refreshTokenGraceSeconds of [-1, 301, 1.5, "10"]) {
        const res = await beds.request("POST", "/svc-admin/oidc/clients", {
          body: {
            clientId: "bad",
            clientType: "confidential",
            redirectUris: [REDIRECT],
            refreshTokenGraceSeconds,
          },
        });
        assert.equal(res.status, 400, String(refreshTokenGraceSeconds));
      }
      const list = await (await beds.request("GET", "/svc-admin/oidc/clients")).json();
      const row = list.items.find((item: { clientId: string }) => item.clientId === "strict");
      const patched = await beds.request("PATCH", `/svc-admin/oidc/clients/${row.id}`, {
        body: { refreshTokenGraceSeconds: 5, clientName: "Strict App" },
      });
      assert.equal(patched.status, 200, await patched.clone().text());
      const view = await patched.json();
      assert.equal(view.refreshTokenGraceSeconds, 5);
      assert.equal(view.clientName, "Strict App");
      const control = await beds.request("PATCH", `/svc-admin/oidc/clients/${row.id}`, {
        body: { clientName: "a\u0000b" },
      });
      assert.equal(control.status, 400);
    });
  } finally {
    await beds.close();
  }
});
