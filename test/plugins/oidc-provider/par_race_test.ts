/**
 * A pushed authorization request gives one code under concurrency (RFC 9126 single use): 20
 * concurrent authorization requests with the same `request_uri`, on real Postgres connections,
 * give exactly one code; the others are refused (`invalid_request_uri` at the client, or the
 * error page once the request is gone).
 */
import { strict as assert } from "node:assert";
import { builtinPlugins } from "../../../plugins/builtin.ts";
import { pluginBed } from "../../support/plugins.ts";

const REDIRECT = "https://app.example.test/cb";

Deno.test("oidc-provider: 20 concurrent uses of one request_uri give one code (Postgres)", async () => {
  const plugin = builtinPlugins().find((candidate) => candidate.name === "oidc-provider")!;
  const beds = await pluginBed([plugin], { SVC_PLUGINS: "oidc-provider" }, { postgres: true });
  try {
    const { bed, realmId, users } = beds.admin;
    const created = await beds.request("POST", "/svc-admin/oidc/clients", {
      body: { clientId: "par-race", clientType: "confidential", redirectUris: [REDIRECT] },
    });
    assert.equal(created.status, 201, await created.clone().text());
    const secret = (await created.json()).clientSecret as string;
    const issued = await bed.auth.sessions.signIn({
      realmId,
      userId: users.plain,
      orgId: null,
      mfa: "Password",
    });
    const cookie = `svc_at=${issued.tokens.accessToken}`;
    for (let round = 0; round < 3; round++) {
      const pushed = await beds.app.request("/oidc/par", {
        method: "POST",
        headers: {
          "Content-Type": "application/x-www-form-urlencoded",
          Authorization: `Basic ${btoa(`par-race:${secret}`)}`,
        },
        body: new URLSearchParams({
          response_type: "code",
          client_id: "par-race",
          redirect_uri: REDIRECT,
          scope: "openid",
          state: `round-${round}`,
        }).toString(),
      });
      assert.equal(pushed.status, 201);
      const { request_uri } = await pushed.json();
      const query = new URLSearchParams({ client_id: "par-race", request_uri });
      const answers = await Promise.all(
        Array.from(
          { length: 20 },
          () => beds.app.request(`/oidc/authorize?${query}`, { headers: { Cookie: cookie } }),
        ),
      );
      const codes: string[] = [];
      let refused = 0;
      for (const res of answers) {
        if (res.status === 400) {
          refused++;
          await res.body?.cancel();
          continue;
        }
        assert.equal(res.status, 303);
        const target = new URL(res.headers.get("Location")!);
        assert.equal(`${target.origin}${target.pathname}`, REDIRECT);
        const code = target.searchParams.get("code");
        if (code !== null) codes.push(code);
        else {
          assert.equal(target.searchParams.get("error"), "invalid_request_uri");
          refused++;
        }
      }
      assert.equal(codes.length, 1, `round ${round}: one code`);
      assert.equal(refused, 19);
    }
  } finally {
    await beds.close();
  }
});
