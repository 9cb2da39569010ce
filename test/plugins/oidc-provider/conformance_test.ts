/**
 * The OIDC provider against the failures of issue 26 (openid-client 6, oauth4webapi 3 and the
 * OpenID Foundation's Basic OP, Config OP and RP-Initiated Logout items), over raw HTTP through
 * the app: authorization by POST, `prompt=login` and `max_age` bound to a time the server signed,
 * unknown scopes ignored and the default scopes of a client.
 */
import { strict as assert } from "node:assert";
import { builtinPlugins } from "../../../plugins/builtin.ts";
import { pluginBed } from "../../support/plugins.ts";

const REDIRECT = "https://app.example.test/cb";
const FORM = { "Content-Type": "application/x-www-form-urlencoded" };

Deno.test("oidc-provider: issue 26 conformance failures", async (t) => {
  const plugin = builtinPlugins().find((candidate) => candidate.name === "oidc-provider")!;
  const beds = await pluginBed([plugin], { SVC_PLUGINS: "oidc-provider" });
  try {
    const { bed, realmId, users } = beds.admin;
    const created = await beds.request("POST", "/svc-admin/oidc/clients", {
      body: { clientId: "app", clientType: "confidential", redirectUris: [REDIRECT] },
    });
    assert.equal(created.status, 201, await created.clone().text());
    const secret = (await created.json()).clientSecret as string;

    /** A browser that signed in now: its session cookie. */
    const signIn = async () => {
      const issued = await bed.auth.sessions.signIn({
        realmId,
        userId: users.plain,
        orgId: null,
        mfa: "Password",
      });
      return `svc_at=${issued.tokens.accessToken}`;
    };
    const authorizeQuery = (extra: Record<string, string> = {}) =>
      new URLSearchParams({
        response_type: "code",
        client_id: "app",
        redirect_uri: REDIRECT,
        scope: "openid",
        state: "st",
        nonce: "n",
        ...extra,
      });
    const get = (path: string, cookie: string) => beds.app.request(path, { headers: { Cookie: cookie } });
    const location = (res: Response) => {
      assert.equal(res.status, 303, `expected a redirect, got ${res.status}`);
      return new URL(res.headers.get("Location")!, "http://svc.test");
    };
    const toClient = (res: Response) => {
      const target = location(res);
      assert.equal(`${target.origin}${target.pathname}`, REDIRECT, target.href);
      return target.searchParams;
    };
    const toSignIn = (res: Response) => {
      const target = location(res);
      assert.match(target.pathname, /\/sign-in$/, target.href);
      return new URL(target.searchParams.get("returnTo")!);
    };
    const exchange = (code: string) =>
      beds.app.request("/oidc/token", {
        method: "POST",
        headers: FORM,
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code,
          redirect_uri: REDIRECT,
          client_id: "app",
          client_secret: secret,
        }).toString(),
      });

    await t.step("an authorization request by POST (form body) gives a code", async () => {
      const cookie = await signIn();
      const res = await beds.app.request("/oidc/authorize", {
        method: "POST",
        headers: { ...FORM, Cookie: cookie },
        body: authorizeQuery().toString(),
      });
      const back = toClient(res);
      assert.equal(back.get("state"), "st");
      assert.ok(back.get("code"));
      const unreadable = await beds.app.request("/oidc/authorize", {
        method: "POST",
        headers: { "Content-Type": "application/json", Cookie: cookie },
        body: JSON.stringify(Object.fromEntries(authorizeQuery())),
      });
      assert.equal(unreadable.status, 400);
    });

    await t.step("prompt=login cannot be bypassed by request parameters", async () => {
      bed.clock.advance(60_000);
      const cookie = await signIn();
      bed.clock.advance(1_000);
      for (const extra of [{ svc_auth_after: "0" }, { svc_req: "forged" }] as Record<string, string>[]) {
        toSignIn(await get(`/oidc/authorize?${authorizeQuery({ prompt: "login", ...extra })}`, cookie));
      }
      const returnTo = toSignIn(await get(`/oidc/authorize?${authorizeQuery({ prompt: "login" })}`, cookie));
      // Coming back with the old session is still not a sign-in.
      toSignIn(await get(`${returnTo.pathname}${returnTo.search}`, cookie));
      // The signed time is bound to the request: it does not carry over to another one.
      const moved = new URLSearchParams(returnTo.search);
      moved.set("state", "other");
      const fresh = await signIn();
      toSignIn(await get(`${returnTo.pathname}?${moved}`, fresh));
      const back = toClient(await get(`${returnTo.pathname}${returnTo.search}`, fresh));
      assert.ok(back.get("code"));
    });

    await t.step(
      "max_age=0 (alone and with prompt=login) is met by a sign-in after the request",
      async () => {
        for (
          const extra of [{ max_age: "0" }, { max_age: "0", prompt: "login" }] as Record<string, string>[]
        ) {
          bed.clock.advance(60_000);
          const old = await signIn();
          bed.clock.advance(1_000);
          const returnTo = toSignIn(await get(`/oidc/authorize?${authorizeQuery(extra)}`, old));
          bed.clock.advance(5_000);
          const fresh = await signIn();
          bed.clock.advance(2_000);
          const back = toClient(await get(`${returnTo.pathname}${returnTo.search}`, fresh));
          const tokens = await exchange(back.get("code")!);
          assert.equal(tokens.status, 200, await tokens.clone().text());
          const idToken = JSON.parse(
            atob((await tokens.json()).id_token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")),
          );
          assert.ok(idToken.auth_time * 1000 >= bed.clock.now() - 7_000);
        }
      },
    );

    await t.step(
      "unknown scopes are ignored; a client without allowedScopes gets profile and email",
      async () => {
        const cookie = await signIn();
        for (const scope of ["openid foo", "openid address phone", "openid profile email"]) {
          const back = toClient(await get(`/oidc/authorize?${authorizeQuery({ scope })}`, cookie));
          assert.equal(back.get("error"), null, scope);
          const tokens = await exchange(back.get("code")!);
          assert.equal(tokens.status, 200);
          assert.equal((await tokens.json()).scope, scope === "openid profile email" ? scope : "openid");
        }
        const refused = toClient(
          await get(`/oidc/authorize?${authorizeQuery({ scope: "openid offline_access" })}`, cookie),
        );
        assert.equal(refused.get("error"), "invalid_scope");
      },
    );
  } finally {
    await beds.close();
  }
});
