/**
 * The OIDC provider against the failures of issue 26 (openid-client 6, oauth4webapi 3 and the
 * OpenID Foundation's Basic OP, Config OP and RP-Initiated Logout items), over raw HTTP through
 * the app: authorization by POST, `prompt=login` and `max_age` bound to a time the server signed,
 * unknown scopes ignored and the default scopes of a client, a code checked against its client
 * before it is consumed, revocation of a service account's token, and the smaller points
 * (introspection by public clients, `request_uri`, userinfo by form, `Pragma`, registered
 * client authentication methods, RFC 8414 metadata), and RP-initiated logout by GET and POST
 * with a confirmation page when there is no valid hint.
 */
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { Validator } from "@seriousme/openapi-schema-validator";
import { sha256Hex } from "../../../core/digest.ts";
import { builtinPlugins } from "../../../plugins/builtin.ts";
// After the plugins (the provider's modules import each other through mod.ts).
import { requestDigest } from "../../../plugins/oidc-provider/authorize.ts";
import { pluginBed } from "../../support/plugins.ts";

const REDIRECT = "https://app.example.test/cb";

/** The S256 PKCE challenge of a verifier. */
async function s256(verifier: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  return btoa(String.fromCharCode(...digest)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}
const BYE = "https://app.example.test/bye";
const FORM = { "Content-Type": "application/x-www-form-urlencoded" };

Deno.test("oidc-provider: issue 26 conformance failures", async (t) => {
  const plugin = builtinPlugins().find((candidate) => candidate.name === "oidc-provider")!;
  const beds = await pluginBed([plugin], { SVC_PLUGINS: "oidc-provider" });
  try {
    const { bed, realmId, users } = beds.admin;
    const created = await beds.request("POST", "/svc-admin/oidc/clients", {
      body: {
        clientId: "app",
        clientType: "confidential",
        redirectUris: [REDIRECT],
        postLogoutRedirectUris: [BYE],
      },
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

    const form = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
      beds.app.request(path, {
        method: "POST",
        headers: { ...FORM, ...headers },
        body: new URLSearchParams(fields).toString(),
      });
    const other = await beds.request("POST", "/svc-admin/oidc/clients", {
      body: { clientId: "other", clientType: "confidential", redirectUris: [REDIRECT] },
    });
    assert.equal(other.status, 201);
    const otherSecret = (await other.json()).clientSecret as string;
    let codes = 0;
    const VERIFIER = "v".repeat(43);
    /** A code for a live browser session, as the authorization endpoint stores it. */
    const issueCode = async (codeChallenge: string | null = null) => {
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
      const code = `conformance-code-${codes++}`;
      await bed.storage.authorizationCodes.store({
        codeHash: sha256Hex(code),
        clientId: "app",
        redirectUri: REDIRECT,
        realmId,
        userId: users.plain,
        sessionId: browser.id,
        scopes: ["openid"],
        authTime: new Date(bed.clock.now()),
        expiresAt: new Date(bed.clock.now() + 60_000),
        ...(codeChallenge === null ? {} : { codeChallenge, codeChallengeMethod: "S256" }),
      });
      return code;
    };

    await t.step(
      "another client's or a wrong redirect's failed exchange does not burn the code",
      async () => {
        const code = await issueCode();
        const stolen = await form("/oidc/token", {
          grant_type: "authorization_code",
          code,
          redirect_uri: REDIRECT,
          client_id: "other",
          client_secret: otherSecret,
        });
        assert.equal(stolen.status, 400);
        assert.equal((await stolen.json()).error, "invalid_grant");
        const wrongRedirect = await form("/oidc/token", {
          grant_type: "authorization_code",
          code,
          redirect_uri: "https://app.example.test/other",
          client_id: "app",
          client_secret: secret,
        });
        assert.equal(wrongRedirect.status, 400);
        const unauthenticated = await form("/oidc/token", {
          grant_type: "authorization_code",
          code,
          redirect_uri: REDIRECT,
          client_id: "app",
          client_secret: `${secret}x`,
        });
        assert.equal(unauthenticated.status, 401);
        assert.equal((await exchange(code)).status, 200);
        // Replayed by another client afterwards: refused, and the real client's tokens live on.
        assert.equal((await exchange(code)).status, 400);
      },
    );

    await t.step("a wrong PKCE verifier from the right client consumes the code", async () => {
      const code = await issueCode(await s256(VERIFIER));
      const pkce = (verifier: string) =>
        form("/oidc/token", {
          grant_type: "authorization_code",
          code,
          redirect_uri: REDIRECT,
          client_id: "app",
          client_secret: secret,
          code_verifier: verifier,
        });
      assert.equal((await pkce("w".repeat(43))).status, 400);
      assert.equal((await pkce(VERIFIER)).status, 400);
    });

    await t.step("a service account's at+jwt: revocation answers unsupported_token_type", async () => {
      const account = await beds.request("POST", "/svc-admin/service-accounts", {
        body: { key: "batch-job", displayName: "Batch" },
      });
      assert.equal(account.status, 201);
      const sas = (await account.json()).secret as string;
      const issued = await form("/oidc/token", {
        grant_type: "client_credentials",
        client_id: "batch-job",
        client_secret: sas,
      });
      assert.equal(issued.status, 200);
      const accessToken = (await issued.json()).access_token as string;
      for (const [id, key] of [["batch-job", sas], ["app", secret]]) {
        const revoked = await form("/oidc/revoke", { token: accessToken, client_id: id, client_secret: key });
        assert.equal(revoked.status, 400);
        assert.equal((await revoked.json()).error, "unsupported_token_type");
      }
      const introspected = await form("/oidc/introspect", {
        token: accessToken,
        client_id: "app",
        client_secret: secret,
      });
      assert.equal((await introspected.json()).active, true);
    });

    await t.step(
      "smaller points: metadata, introspection, request_uri, userinfo, Pragma, auth methods",
      async () => {
        const metadata = await (await beds.app.request("/.well-known/openid-configuration")).json();
        assert.ok(!metadata.introspection_endpoint_auth_methods_supported.includes("none"));
        assert.ok(metadata.claims_supported.includes("azp"));
        const rfc8414 = await beds.app.request("/.well-known/oauth-authorization-server");
        assert.equal(rfc8414.status, 200);
        assert.deepEqual(await rfc8414.json(), metadata);
        const openapi = await (await beds.app.request("/openapi.json")).json();
        const validator = new Validator();
        const validation = await validator.validate(structuredClone(openapi));
        assert.equal(validation.valid, true, JSON.stringify(validation.errors));
        for (
          const [path, methods] of Object.entries({
            "/oidc/authorize": ["get", "post"],
            "/oidc/consent": ["get", "post"],
            "/oidc/token": ["post"],
            "/oidc/userinfo": ["get", "post"],
            "/oidc/revoke": ["post"],
            "/oidc/introspect": ["post"],
            "/oidc/logout": ["get", "post"],
            "/.well-known/oauth-authorization-server": ["get"],
          })
        ) {
          for (const method of methods) assert.ok(openapi.paths[path]?.[method], `${method} ${path}`);
        }
        const huge = await form("/oidc/token", { grant_type: "x".repeat(70_000) });
        assert.equal(huge.status, 413);

        const spa = await beds.request("POST", "/svc-admin/oidc/clients", {
          body: { clientId: "spa", clientType: "public", redirectUris: [REDIRECT] },
        });
        assert.equal(spa.status, 201);
        const publicIntrospection = await form("/oidc/introspect", { token: "x", client_id: "spa" });
        assert.equal(publicIntrospection.status, 401);
        assert.equal((await publicIntrospection.json()).error, "invalid_client");

        const cookie = await signIn();
        const requestUri = toClient(
          await get(`/oidc/authorize?${authorizeQuery({ request_uri: "urn:example:1" })}`, cookie),
        );
        assert.equal(requestUri.get("error"), "request_uri_not_supported");

        const back = toClient(
          await get(`/oidc/authorize?${authorizeQuery({ scope: "openid email" })}`, cookie),
        );
        const tokens = await exchange(back.get("code")!);
        assert.equal(tokens.headers.get("Cache-Control"), "no-store");
        assert.equal(tokens.headers.get("Pragma"), "no-cache");
        const accessToken = (await tokens.json()).access_token as string;
        const byForm = await form("/oidc/userinfo", { access_token: accessToken });
        assert.equal(byForm.status, 200);
        assert.ok((await byForm.json()).email);
        const twice = await form("/oidc/userinfo", { access_token: accessToken }, {
          Authorization: `Bearer ${accessToken}`,
        });
        assert.equal(twice.status, 400);
        const none = await beds.app.request("/oidc/userinfo");
        assert.equal(none.status, 401);
        const challenge = none.headers.get("WWW-Authenticate")!;
        assert.match(challenge, /^Bearer/);
        assert.doesNotMatch(challenge, /error=/);
        const bad = await beds.app.request("/oidc/userinfo", { headers: { Authorization: "Bearer nope" } });
        assert.match(bad.headers.get("WWW-Authenticate")!, /error="invalid_token"/);

        for (const method of ["client_secret_basic", "client_secret_post"]) {
          const made = await beds.request("POST", "/svc-admin/oidc/clients", {
            body: {
              clientId: `by-${method}`,
              clientType: "confidential",
              redirectUris: [REDIRECT],
              tokenEndpointAuthMethod: method,
            },
          });
          assert.equal(made.status, 201);
          const key = (await made.json()).clientSecret as string;
          const basic = await form("/oidc/introspect", { token: "x" }, {
            Authorization: `Basic ${btoa(`by-${method}:${key}`)}`,
          });
          const post = await form("/oidc/introspect", {
            token: "x",
            client_id: `by-${method}`,
            client_secret: key,
          });
          assert.equal(basic.status, method === "client_secret_basic" ? 200 : 401, method);
          assert.equal(post.status, method === "client_secret_post" ? 200 : 401, method);
        }
        // A client registered without a method (the default) takes its secret either way.
        assert.equal(
          (await form("/oidc/introspect", { token: "x", client_id: "app", client_secret: secret })).status,
          200,
        );
        const basicDefault = await form("/oidc/introspect", { token: "x" }, {
          Authorization: `Basic ${btoa(`app:${secret}`)}`,
        });
        assert.equal(basicDefault.status, 200);
      },
    );

    await t.step("RP-initiated logout: confirmation without a valid hint; GET and POST", async () => {
      /** Whether the browser's session is alive: prompt=none gives a code. */
      const alive = async (cookie: string) => {
        let res = await get(`/oidc/authorize?${authorizeQuery({ prompt: "none" })}`, cookie);
        // Without a live access token the browser goes through the session-resume hop first.
        const hop = location(res);
        if (hop.pathname === "/auth/refresh/oidc-resume") {
          res = await get(`${hop.pathname}${hop.search}`, cookie);
        }
        return toClient(res).get("code") !== null;
      };
      /** Signs in and gets an ID token for that browser session. */
      const signedInWithIdToken = async () => {
        const cookie = await signIn();
        const back = toClient(await get(`/oidc/authorize?${authorizeQuery()}`, cookie));
        const tokens = await exchange(back.get("code")!);
        return { cookie, idToken: (await tokens.json()).id_token as string };
      };
      const confirmation = async (res: Response) => {
        assert.equal(res.status, 200);
        const csp = res.headers.get("Content-Security-Policy")!;
        assert.match(csp, /default-src 'none'/);
        assert.doesNotMatch(csp, /script-src/);
        const html = await res.text();
        assert.doesNotMatch(html, /<script/);
        assert.match(html, /<form method="post"/);
        const fields = new URLSearchParams();
        for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
          fields.set(m[1], m[2].replace(/&#(\d+);/g, (_, code) => String.fromCharCode(Number(code))));
        }
        const formCookie = res.headers.getSetCookie().map((line) => line.split(";")[0])
          .find((pair) => pair.startsWith("svc_oidc_form="));
        return { fields, formCookie: formCookie ?? "" };
      };
      const confirm = (cookie: string, formCookie: string, fields: URLSearchParams, decision = "yes") => {
        const body = new URLSearchParams(fields);
        body.set("confirm", decision);
        return beds.app.request("/oidc/logout", {
          method: "POST",
          headers: { ...FORM, Cookie: `${cookie}; ${formCookie}` },
          body: body.toString(),
        });
      };

      // client_id and a registered post_logout_redirect_uri, no hint: nothing ends before confirming.
      const first = await signIn();
      const asked = await get(
        `/oidc/logout?${new URLSearchParams({
          client_id: "app",
          post_logout_redirect_uri: BYE,
          state: "s1",
        })}`,
        first,
      );
      const { fields, formCookie } = await confirmation(asked);
      assert.equal(await alive(first), true);
      // Without the form token (a cross-site post): refused, still signed in.
      const forged = await confirm(first, "", fields);
      assert.equal(forged.status, 403);
      assert.equal(await alive(first), true);
      const stay = await confirm(first, formCookie, fields, "no");
      assert.equal(stay.status, 200);
      assert.equal(await alive(first), true);
      const confirmed = await confirm(first, formCookie, fields);
      assert.equal(location(confirmed).href, `${BYE}?state=s1`);
      assert.equal(await alive(first), false);

      // No parameters: a confirmation page; POST works the same.
      const second = await signIn();
      await confirmation(await get("/oidc/logout", second));
      const byPost = await beds.app.request("/oidc/logout", {
        method: "POST",
        headers: { ...FORM, Cookie: second },
        body: "",
      });
      const posted = await confirmation(byPost);
      assert.equal(await alive(second), true);
      const ended = await confirm(second, posted.formCookie, posted.fields);
      assert.equal(ended.status, 200);
      assert.match(await ended.text(), /Signed out/);
      assert.equal(await alive(second), false);

      // A valid hint by POST ends the session at once and redirects with state.
      const hinted = await signedInWithIdToken();
      const direct = await form("/oidc/logout", {
        id_token_hint: hinted.idToken,
        post_logout_redirect_uri: BYE,
        state: "s2",
      });
      assert.equal(location(direct).href, `${BYE}?state=s2`);
      assert.equal(await alive(hinted.cookie), false);

      // An expired hint identifies the client but needs confirmation.
      const stale = await signedInWithIdToken();
      bed.clock.advance(3_600_000);
      const cookie = await signIn();
      const expired = await get(
        `/oidc/logout?${new URLSearchParams({
          id_token_hint: stale.idToken,
          post_logout_redirect_uri: BYE,
        })}`,
        cookie,
      );
      await confirmation(expired);
      assert.equal(await alive(cookie), true);

      // Unregistered redirect, a hint that is not svc's, a client_id the hint contradicts: 400.
      const refusals: Record<string, string>[] = [
        { client_id: "app", post_logout_redirect_uri: "https://evil.example/bye" },
        { post_logout_redirect_uri: BYE },
        { id_token_hint: "not.a.jwt" },
        { id_token_hint: stale.idToken, client_id: "other" },
      ];
      for (const params of refusals) {
        const res = await get(`/oidc/logout?${new URLSearchParams(params)}`, cookie);
        assert.equal(res.status, 400, JSON.stringify(params));
      }
      assert.equal(await alive(cookie), true);
    });
  } finally {
    await beds.close();
  }
});

Deno.test("oidc-provider: svc_req is bound to every parameter but prompt (property)", () => {
  const name = fc.constantFrom("client_id", "redirect_uri", "scope", "state", "nonce", "max_age", "x", "a=b");
  const pairs = fc.uniqueArray(fc.tuple(name, fc.string({ maxLength: 8 })), {
    selector: ([key]) => key,
    minLength: 1,
    maxLength: 6,
  });
  fc.assert(fc.property(pairs, fc.string({ maxLength: 6 }), fc.nat(), (params, prompt, pick) => {
    const base = new URLSearchParams(params);
    // Reordered, with prompt and svc_req added: the same digest.
    const same = new URLSearchParams([...params].reverse());
    same.set("prompt", prompt);
    same.set("svc_req", "anything");
    assert.equal(requestDigest(same), requestDigest(base));
    // Any other parameter changed, dropped or added: another digest.
    const [key, value] = params[pick % params.length];
    const changed = new URLSearchParams(params);
    changed.set(key, `${value}!`);
    assert.notEqual(requestDigest(changed), requestDigest(base));
    const dropped = new URLSearchParams(params.filter(([other]) => other !== key));
    assert.notEqual(requestDigest(dropped), requestDigest(base));
    const added = new URLSearchParams(params);
    added.append("extra_param", value);
    assert.notEqual(requestDigest(added), requestDigest(base));
  }));
});
