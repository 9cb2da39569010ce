/**
 * The OIDC provider plugin against the real server, driven by relying-party libraries nobody
 * here wrote: openid-client (v6) for discovery, the code flow with PKCE (sign-in in Chromium
 * through the hosted sign-in page, with its TOTP step for an enrolled user), `max_age=0` (alone
 * and with `prompt=login`: a signed-in browser signs in exactly once more, and `auth_time` is after
 * the request), refresh rotation, userinfo, introspection, revocation and client_credentials;
 * oauth4webapi for a public client's code flow; every token verified with jose against the
 * published JWKS. Then the refusals: redirect URI mismatch, PKCE missing or wrong, a reused code
 * (and the revocation it causes), a wrong secret, state and nonce checks, prompt=none, a suspended
 * client and a suspended user.
 */
import { strict as assert } from "node:assert";
import * as client from "openid-client";
import * as oauth from "oauth4webapi";
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import type { Browser, Page, Request } from "playwright-core";
import { checkPage } from "../../support/axe.ts";
import { launchChromium } from "../../support/browser.ts";
import { startTestServer } from "../../support/server.ts";
import { base32, totpCodes } from "../../support/totp.ts";

const trace = (what: string) => {
  if (Deno.env.get("OIDC_TEST_TRACE")) console.error(`trace ${new Date().toISOString()} ${what}`);
};

/** The relying party's callback: a local server that records the URLs it is sent to. */
const rpHits: string[] = [];
const rp = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
  if (new URL(req.url).pathname === "/callback") rpHits.push(req.url);
  return new Response("callback");
});
const RP = `http://127.0.0.1:${rp.addr.port}`;
const REDIRECT = `${RP}/callback`;

type Server = Awaited<ReturnType<typeof startTestServer>>;

async function api(server: Server, method: string, path: string, token: string | null, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, json: await res.json().catch(() => null) };
}

/** Waits until the page has arrived at the relying party, so the next navigation does not interrupt one. */
async function settle(page: Page): Promise<void> {
  for (let i = 0; !page.url().startsWith(RP) && i < 100; i++) await new Promise((r) => setTimeout(r, 50));
  await page.waitForLoadState("domcontentloaded").catch(() => {});
}

/**
 * Runs the browser part of an authorization: signs in on the hosted sign-in page when sent there
 * (the second factor too, when `totp` is given); answers the callback URL.
 */
async function authorizeInBrowser(
  page: Page,
  url: URL,
  credentials: { email: string; password: string; totp?: () => Promise<string> },
  onStep?: (step: "sign-in" | "second-factor") => Promise<void>,
): Promise<URL> {
  trace("goto");
  const seen = rpHits.length;
  let callback: string | null = null;
  const arrived = () => {
    if (rpHits.length > seen) callback = rpHits[seen];
    return callback !== null;
  };
  await page.goto(url.href, { waitUntil: "domcontentloaded" });
  trace(`at ${page.url()}`);
  if (!arrived() && new URL(page.url()).pathname === "/account/sign-in") {
    // The hosted page: it goes back to the authorization request once every factor is done.
    await page.waitForSelector("#password");
    await onStep?.("sign-in");
    await page.fill("#email", credentials.email);
    await page.fill("#password", credentials.password);
    await page.click("button[type=submit]", { noWaitAfter: true });
    if (credentials.totp) {
      await page.waitForSelector("#code");
      await onStep?.("second-factor");
      await page.fill("#code", await credentials.totp());
      await page.click("button[type=submit]", { noWaitAfter: true });
    }
    for (let i = 0; !arrived() && i < 300; i++) await new Promise((r) => setTimeout(r, 100));
  }
  trace(`callback ${callback}`);
  await settle(page);
  if (callback === null) assert.fail(`no callback; the page is at ${page.url()}: ${await page.content()}`);
  return new URL(callback);
}

Deno.test("oidc-provider: openid-client and oauth4webapi against the real server", async (t) => {
  // A fixed 127.0.0.1 issuer: Chromium here does not resolve "localhost".
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  const server = await startTestServer({
    SVC_PLUGINS: "oidc-provider",
    SVC_HOST: "127.0.0.1",
    SVC_PORT: String(port),
    SVC_BASE_URL: `http://127.0.0.1:${port}`,
  });
  let browser: Browser | null = null;
  try {
    const issuer = new URL(server.issuer);
    const adminLogin = await api(server, "POST", "/auth/login", null, {
      email: server.adminEmail,
      password: server.adminPassword,
    });
    const admin = adminLogin.json.accessToken as string;
    const root = { email: server.adminEmail, password: server.adminPassword };

    const created = await api(server, "POST", "/svc-admin/oidc/clients", admin, {
      clientId: "web-app",
      clientType: "confidential",
      redirectUris: [REDIRECT],
      postLogoutRedirectUris: [`${RP}/signed-out`],
      allowedScopes: ["openid", "email", "profile", "offline_access"],
    });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    assert.equal(created.headers.get("Cache-Control"), "no-store");
    const secret = created.json.clientSecret as string;
    assert.match(secret, /^soc_/);
    const clientRowId = created.json.id as string;
    const read = await api(server, "GET", `/svc-admin/oidc/clients/${clientRowId}`, admin);
    assert.equal(read.json.hasSecret, true);
    assert.ok(!JSON.stringify(read.json).includes(secret));

    const config = await client.discovery(issuer, "web-app", secret, client.ClientSecretBasic(secret), {
      execute: [client.allowInsecureRequests],
    });
    const metadata = config.serverMetadata();
    const jwks = createRemoteJWKSet(new URL(metadata.jwks_uri!));
    trace("launch");
    browser = await launchChromium();
    const context = await browser.newContext();
    // One page for the whole test: opening and closing pages can stall a loaded Chromium.
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    trace("launched");

    const start = async (extra: Record<string, string> = {}) => {
      const verifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const nonce = client.randomNonce();
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT,
        scope: "openid email offline_access",
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256",
        state,
        nonce,
        ...extra,
      });
      return { verifier, state, nonce, url };
    };

    let refreshToken = "";
    let accessToken = "";
    let sub = "";
    await t.step("discovery, then the code flow with PKCE (sign-in in Chromium)", async () => {
      assert.equal(metadata.issuer, server.issuer);
      assert.deepEqual(metadata.code_challenge_methods_supported, ["S256"]);
      const flow = await start();
      const callback = await authorizeInBrowser(page, flow.url, root);
      trace("exchange");
      const tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
      });
      trace("exchanged");
      const claims = tokens.claims()!;
      sub = claims.sub;
      assert.equal(claims.email, server.adminEmail);
      assert.equal(claims.nonce, flow.nonce);
      assert.ok(tokens.refresh_token?.startsWith("srt_"), "offline_access gives a refresh token");
      refreshToken = tokens.refresh_token!;
      accessToken = tokens.access_token;
      // Both tokens verify against the published key set.
      const id = await jwtVerify(tokens.id_token!, jwks, { issuer: server.issuer, audience: "web-app" });
      assert.equal(id.payload.sub, sub);
      const at = await jwtVerify(accessToken, jwks, { issuer: server.issuer, audience: "web-app" });
      assert.equal(at.protectedHeader.typ, "at+svc");
      assert.equal(at.payload.sub, sub);
    });

    await t.step("single sign-on outlives the access-token cookie (Chromium)", async () => {
      // The access-token cookie runs out after 10 minutes: gone, the session (svc_rt) remains.
      await context.clearCookies({ name: "svc_at" });
      const flow = await start();
      const callback = await authorizeInBrowser(page, flow.url, root, () => {
        throw new Error("a live session must not be sent to sign-in");
      });
      const tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
      });
      assert.equal(tokens.claims()!.sub, sub);
      // Both cookies gone (no session): the hosted sign-in page.
      await context.clearCookies({ name: "svc_at" });
      await context.clearCookies({ name: "svc_rt" });
      const again = await start();
      let signedIn = false;
      const back = await authorizeInBrowser(page, again.url, root, (step) => {
        if (step === "sign-in") signedIn = true;
        return Promise.resolve();
      });
      assert.ok(signedIn, "without a session the browser signs in");
      assert.ok(back.searchParams.get("code"));
    });

    await t.step(
      "max_age=0, alone and with prompt=login: one sign-in in Chromium gives a code, auth_time after the request",
      async () => {
        // The browser's session is live (the steps before): without max_age nothing asks to sign in.
        const plain = await start();
        const plainBack = await authorizeInBrowser(page, plain.url, root, () => {
          throw new Error("a live session must not be sent to sign-in");
        });
        let previous = (await client.authorizationCodeGrant(config, plainBack, {
          pkceCodeVerifier: plain.verifier,
          expectedState: plain.state,
          expectedNonce: plain.nonce,
        })).claims()!.auth_time!;
        assert.equal(typeof previous, "number");
        // Every document the browser loads from the sign-in page's path (a loop back there shows twice).
        const signInLoads: string[] = [];
        const onRequest = (request: Request) => {
          if (
            request.isNavigationRequest() && request.frame() === page.mainFrame() &&
            new URL(request.url()).pathname === "/account/sign-in"
          ) signInLoads.push(request.url());
        };
        page.on("request", onRequest);
        try {
          for (
            const extra of [{ max_age: "0" }, { max_age: "0", prompt: "login" }] as Record<string, string>[]
          ) {
            // A new second, so that the session's sign-in time and a new one cannot share one.
            while (Math.floor(Date.now() / 1000) <= previous) {
              await new Promise((r) => setTimeout(r, 100));
            }
            const flow = await start(extra);
            const requestedAt = Math.floor(Date.now() / 1000);
            signInLoads.length = 0;
            const steps: string[] = [];
            const callback = await authorizeInBrowser(page, flow.url, root, (step) => {
              steps.push(step);
              return Promise.resolve();
            });
            const what = JSON.stringify(extra);
            assert.deepEqual(steps, ["sign-in"], `${what}: the live session is sent to sign in`);
            assert.equal(
              signInLoads.length,
              1,
              `${what}: one sign-in page, no loop: ${signInLoads.join(" ")}`,
            );
            assert.ok(callback.searchParams.get("code"), `${what}: ${callback.href}`);
            assert.equal(callback.searchParams.get("state"), flow.state);
            // openid-client checks auth_time against max_age itself.
            const tokens = await client.authorizationCodeGrant(config, callback, {
              pkceCodeVerifier: flow.verifier,
              expectedState: flow.state,
              expectedNonce: flow.nonce,
              maxAge: 0,
            });
            const id = await jwtVerify(tokens.id_token!, jwks, {
              issuer: server.issuer,
              audience: "web-app",
            });
            const authTime = id.payload.auth_time as number;
            assert.ok(
              authTime >= requestedAt,
              `${what}: auth_time ${authTime} before the request ${requestedAt}`,
            );
            assert.ok(authTime > previous, `${what}: auth_time ${authTime} is the old sign-in's ${previous}`);
            assert.equal(id.payload.sub, sub);
            previous = authTime;
          }
        } finally {
          page.off("request", onRequest);
        }
      },
    );

    await t.step("a TOTP-enrolled user signs in through the hosted page's TOTP step", async () => {
      const made = await api(server, "POST", "/svc-admin/users", admin, {
        email: "grace@example.test",
        password: "grace's long password",
        displayName: "Grace",
      });
      assert.equal(made.status, 201, JSON.stringify(made.json));
      const own = await api(server, "POST", "/auth/login", null, {
        email: "grace@example.test",
        password: "grace's long password",
      });
      const enrolled = await api(server, "POST", "/profile/factors/totp", own.json.accessToken, {});
      assert.equal(enrolled.status, 200, JSON.stringify(enrolled.json));
      const codes = totpCodes(base32(new URL(enrolled.json.uri).searchParams.get("secret")!));
      const confirmed = await api(server, "POST", "/profile/factors/totp/confirm", own.json.accessToken, {
        code: await codes(),
      });
      assert.equal(confirmed.status, 200, JSON.stringify(confirmed.json));

      const other = await browser!.newContext({ locale: "en-US" });
      try {
        const otherPage = await other.newPage();
        otherPage.setDefaultTimeout(20_000);
        const flow = await start({ login_hint: "grace@example.test" });
        const steps: string[] = [];
        const callback = await authorizeInBrowser(
          otherPage,
          flow.url,
          { email: "grace@example.test", password: "grace's long password", totp: codes },
          async (step) => {
            steps.push(step);
            const at = new URL(otherPage.url());
            assert.equal(at.origin + at.pathname, `${server.issuer}/account/sign-in`);
            const back = new URL(at.searchParams.get("returnTo")!);
            assert.equal(back.origin + back.pathname, `${server.issuer}/oidc/authorize`);
            assert.equal(back.searchParams.get("state"), flow.state);
            if (step === "sign-in") {
              assert.equal(await otherPage.inputValue("#email"), "grace@example.test", "login_hint");
            }
            await checkPage(otherPage, `oidc-${step}`);
          },
        );
        assert.deepEqual(steps, ["sign-in", "second-factor"]);
        assert.ok(callback.searchParams.get("code"));
        const tokens = await client.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: flow.verifier,
          expectedState: flow.state,
          expectedNonce: flow.nonce,
        });
        const id = await jwtVerify(tokens.id_token!, jwks, { issuer: server.issuer, audience: "web-app" });
        assert.equal(id.payload.sub, made.json.id);
      } finally {
        await other.close();
      }
    });

    await t.step("userinfo and introspection", async () => {
      const info = await client.fetchUserInfo(config, accessToken, sub);
      assert.equal(info.email, server.adminEmail);
      const introspected = await client.tokenIntrospection(config, accessToken);
      assert.equal(introspected.active, true);
      assert.equal(introspected.client_id, "web-app");
      assert.equal(introspected.scope, "openid email offline_access");
    });

    await t.step("refresh rotates; replaying a used refresh token revokes the family", async () => {
      const next = await client.refreshTokenGrant(config, refreshToken);
      assert.ok(next.refresh_token && next.refresh_token !== refreshToken);
      await jwtVerify(next.id_token!, jwks, { issuer: server.issuer, audience: "web-app" });
      const invalidGrant = (err: unknown) => (err as { error?: string }).error === "invalid_grant";
      await assert.rejects(() => client.refreshTokenGrant(config, refreshToken), invalidGrant);
      await assert.rejects(
        () => client.refreshTokenGrant(config, next.refresh_token!),
        invalidGrant,
      );
      const info = await fetch(metadata.userinfo_endpoint!, {
        headers: { Authorization: `Bearer ${next.access_token}` },
      });
      assert.equal(info.status, 401);
      await info.body?.cancel();
    });

    await t.step("revocation (RFC 7009) ends the refresh token and the access token", async () => {
      const flow = await start();
      const callback = await authorizeInBrowser(page, flow.url, root);
      const tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
      });
      await client.tokenRevocation(config, tokens.refresh_token!);
      assert.equal((await client.tokenIntrospection(config, tokens.refresh_token!)).active, false);
      assert.equal((await client.tokenIntrospection(config, tokens.access_token)).active, false);
      await assert.rejects(() => client.refreshTokenGrant(config, tokens.refresh_token!));
    });

    await t.step("without offline_access there is no refresh token", async () => {
      const flow = await start({ scope: "openid" });
      const callback = await authorizeInBrowser(page, flow.url, root);
      const tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
      });
      assert.equal(tokens.refresh_token, undefined);
      assert.equal(tokens.claims()!.email, undefined);
    });

    const tokenRequest = (body: Record<string, string>, auth = `Basic ${btoa(`web-app:${secret}`)}`) =>
      fetch(metadata.token_endpoint!, {
        method: "POST",
        headers: { Authorization: auth, "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(body),
      }).then(async (res) => ({ status: res.status, json: await res.json() }));

    await t.step("a reused code is refused and revokes what it issued", async () => {
      const flow = await start();
      const callback = await authorizeInBrowser(page, flow.url, root);
      const code = callback.searchParams.get("code")!;
      const body = {
        grant_type: "authorization_code",
        code,
        redirect_uri: REDIRECT,
        code_verifier: flow.verifier,
      };
      const first = await tokenRequest(body);
      assert.equal(first.status, 200, JSON.stringify(first.json));
      const again = await tokenRequest(body);
      assert.equal(again.status, 400);
      assert.equal(again.json.error, "invalid_grant");
      assert.match(again.json.error_description, /already used/);
      const info = await fetch(metadata.userinfo_endpoint!, {
        headers: { Authorization: `Bearer ${first.json.access_token}` },
      });
      assert.equal(info.status, 401, "the access token issued from the code is revoked");
      await info.body?.cancel();
      assert.equal(
        (await tokenRequest({ grant_type: "refresh_token", refresh_token: first.json.refresh_token })).status,
        400,
      );
      const unknown = await tokenRequest({ ...body, code: "not-a-code" });
      assert.match(unknown.json.error_description, /unknown/);
    });

    await t.step("PKCE: a missing or wrong verifier is refused", async () => {
      for (const verifier of [undefined, client.randomPKCECodeVerifier()]) {
        const flow = await start();
        const callback = await authorizeInBrowser(page, flow.url, root);
        const res = await tokenRequest({
          grant_type: "authorization_code",
          code: callback.searchParams.get("code")!,
          redirect_uri: REDIRECT,
          ...(verifier ? { code_verifier: verifier } : {}),
        });
        assert.equal(res.status, 400);
        assert.equal(res.json.error, "invalid_grant");
      }
    });

    await t.step("state and nonce: the provider echoes them, so a mismatch is caught", async () => {
      const flow = await start();
      const callback = await authorizeInBrowser(page, flow.url, root);
      assert.equal(callback.searchParams.get("state"), flow.state);
      assert.equal(callback.searchParams.get("iss"), server.issuer);
      await assert.rejects(() =>
        client.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: flow.verifier,
          expectedState: "another state",
          expectedNonce: flow.nonce,
        })
      );
      const second = await start();
      const callback2 = await authorizeInBrowser(page, second.url, root);
      await assert.rejects(
        () =>
          client.authorizationCodeGrant(config, callback2, {
            pkceCodeVerifier: second.verifier,
            expectedState: second.state,
            expectedNonce: "another nonce",
          }),
        /unexpected JWT claim value/,
      );
    });

    await t.step("a redirect URI that is not registered exactly is never redirected to", async () => {
      for (const redirect of [`${REDIRECT}/`, `${REDIRECT}?x=1`, "https://evil.example.test/callback"]) {
        const flow = await start({ redirect_uri: redirect });
        const res = await fetch(flow.url, { redirect: "manual" });
        assert.equal(res.status, 400);
        assert.equal(res.headers.get("Location"), null);
        await res.body?.cancel();
      }
    });

    await t.step("a wrong client secret is invalid_client", async () => {
      const wrong = await client.discovery(
        issuer,
        "web-app",
        "soc_wrong",
        client.ClientSecretBasic("soc_wrong"),
        {
          execute: [client.allowInsecureRequests],
        },
      );
      await assert.rejects(
        () => client.refreshTokenGrant(wrong, "srt_x"),
        /invalid_client|WWW-Authenticate/,
      );
      const res = await tokenRequest(
        { grant_type: "client_credentials" },
        `Basic ${btoa("web-app:soc_wrong")}`,
      );
      assert.equal(res.status, 401);
      assert.equal(res.json.error, "invalid_client");
    });

    await t.step("prompt=none without a session answers login_required", async () => {
      const flow = await start({ prompt: "none" });
      let res = await fetch(flow.url, { redirect: "manual" });
      assert.equal(res.status, 303);
      // Without an access-token cookie the browser first goes through the session-resume hop.
      const hop = new URL(res.headers.get("Location")!);
      assert.equal(hop.pathname, "/auth/refresh/oidc-resume");
      await res.body?.cancel();
      res = await fetch(hop, { redirect: "manual" });
      assert.equal(res.status, 303);
      const location = new URL(res.headers.get("Location")!);
      assert.equal(location.origin + location.pathname, REDIRECT);
      assert.equal(location.searchParams.get("error"), "login_required");
      assert.equal(location.searchParams.get("state"), flow.state);
    });

    await t.step(
      "oauth4webapi: a public client's code flow (PKCE required), none authentication",
      async () => {
        const made = await api(server, "POST", "/svc-admin/oidc/clients", admin, {
          clientId: "spa",
          clientType: "public",
          redirectUris: [REDIRECT],
        });
        assert.equal(made.status, 201);
        assert.equal(made.json.clientSecret, null);
        const as = await oauth.processDiscoveryResponse(
          issuer,
          await oauth.discoveryRequest(issuer, { [oauth.allowInsecureRequests]: true }),
        );
        const spa: oauth.Client = { client_id: "spa" };
        const verifier = oauth.generateRandomCodeVerifier();
        const state = oauth.generateRandomState();
        const url = new URL(as.authorization_endpoint!);
        url.search = new URLSearchParams({
          client_id: "spa",
          redirect_uri: REDIRECT,
          response_type: "code",
          scope: "openid",
          state,
          code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
          code_challenge_method: "S256",
        }).toString();
        const callback = await authorizeInBrowser(page, url, root);
        const params = oauth.validateAuthResponse(as, spa, callback, state);
        const response = await oauth.authorizationCodeGrantRequest(
          as,
          spa,
          oauth.None(),
          params,
          REDIRECT,
          verifier,
          {
            [oauth.allowInsecureRequests]: true,
          },
        );
        const result = await oauth.processAuthorizationCodeResponse(as, spa, response);
        assert.equal(result.token_type, "bearer");
        const id = await jwtVerify(result.id_token!, jwks, { issuer: server.issuer, audience: "spa" });
        assert.equal(id.payload.sub, sub);

        // Without PKCE a public client is refused (at the redirect URI, which is registered).
        const bare = new URL(url);
        bare.searchParams.delete("code_challenge");
        bare.searchParams.delete("code_challenge_method");
        const refused = await fetch(bare, { redirect: "manual" });
        assert.equal(new URL(refused.headers.get("Location")!).searchParams.get("error"), "invalid_request");
        await refused.body?.cancel();
      },
    );

    await t.step("client_credentials for a service account (openid-client and oauth4webapi)", async () => {
      const account = await api(server, "POST", "/svc-admin/service-accounts", admin, {
        key: "billing-backend",
        displayName: "Billing",
      });
      assert.equal(account.status, 201);
      const machine = await client.discovery(issuer, "billing-backend", account.json.secret, undefined, {
        execute: [client.allowInsecureRequests],
      });
      const tokens = await client.clientCredentialsGrant(machine, { scope: "invoices.read" });
      assert.equal(tokens.scope, "invoices.read");
      const verified = await jwtVerify(tokens.access_token, jwks, { issuer: server.issuer, typ: "at+jwt" });
      assert.equal(verified.payload.sub, account.json.id);
      assert.equal(verified.payload.client_id, "billing-backend");
      assert.equal(decodeProtectedHeader(tokens.access_token).typ, "at+jwt");

      const as = await oauth.processDiscoveryResponse(
        issuer,
        await oauth.discoveryRequest(issuer, { [oauth.allowInsecureRequests]: true }),
      );
      const response = await oauth.clientCredentialsGrantRequest(
        as,
        { client_id: "billing-backend" },
        oauth.ClientSecretPost(account.json.secret),
        new URLSearchParams(),
        { [oauth.allowInsecureRequests]: true },
      );
      const result = await oauth.processClientCredentialsResponse(
        as,
        { client_id: "billing-backend" },
        response,
      );
      await jwtVerify(result.access_token, jwks, { issuer: server.issuer });
    });

    await t.step("RP-initiated logout ends the browser session and its client sessions", async () => {
      const flow = await start();
      const callback = await authorizeInBrowser(page, flow.url, root);
      const tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
      });
      const end = client.buildEndSessionUrl(config, {
        id_token_hint: tokens.id_token!,
        post_logout_redirect_uri: `${RP}/signed-out`,
        state: "bye",
      });
      const res = await fetch(end, { redirect: "manual" });
      assert.equal(res.status, 303);
      assert.equal(res.headers.get("Location"), `${RP}/signed-out?state=bye`);
      assert.equal((await client.tokenIntrospection(config, tokens.access_token)).active, false);
      // The browser must sign in again.
      const next = await start({ prompt: "none" });
      await page.goto(next.url.href, { waitUntil: "domcontentloaded" });
      const location = page.url();
      assert.equal(new URL(location).searchParams.get("error"), "login_required");
    });

    await t.step(
      "a client that requires consent: prompt=none answers consent_required, then Allow in Chromium",
      async () => {
        const made = await api(server, "POST", "/svc-admin/oidc/clients", admin, {
          clientId: "consenting-app",
          clientType: "confidential",
          redirectUris: [REDIRECT],
          allowedScopes: ["openid", "email"],
          requireConsent: true,
        });
        assert.equal(made.status, 201);
        // Signed out by the step before: sign in again (through web-app, which needs no consent).
        await authorizeInBrowser(page, (await start()).url, root);
        const consenting = await client.discovery(
          issuer,
          "consenting-app",
          made.json.clientSecret,
          client.ClientSecretPost(made.json.clientSecret),
          { execute: [client.allowInsecureRequests] },
        );
        const verifier = client.randomPKCECodeVerifier();
        const state = client.randomState();
        const params = {
          redirect_uri: REDIRECT,
          scope: "openid email",
          code_challenge: await client.calculatePKCECodeChallenge(verifier),
          code_challenge_method: "S256",
          state,
        };
        {
          const seen = rpHits.length;
          await page.goto(client.buildAuthorizationUrl(consenting, { ...params, prompt: "none" }).href, {
            waitUntil: "domcontentloaded",
          });
          for (let i = 0; rpHits.length === seen && i < 100; i++) {
            await new Promise((r) => setTimeout(r, 100));
          }
          assert.equal(new URL(rpHits[seen]).searchParams.get("error"), "consent_required");
          await settle(page);

          await page.goto(client.buildAuthorizationUrl(consenting, params).href, {
            waitUntil: "domcontentloaded",
          });
          assert.match(page.url(), /\/oidc\/consent\?/);
          assert.equal(await page.locator("script").count(), 0);
          const before = rpHits.length;
          await page.click("button[value=allow]", { noWaitAfter: true });
          for (let i = 0; rpHits.length === before && i < 300; i++) {
            await new Promise((r) => setTimeout(r, 100));
          }
          const callback = new URL(rpHits[before]);
          await settle(page);
          const tokens = await client.authorizationCodeGrant(consenting, callback, {
            pkceCodeVerifier: verifier,
            expectedState: state,
          });
          assert.equal(tokens.claims()!.email, server.adminEmail);
        }
        // Consent is remembered: the next authorization goes straight to the client.
        const again = await authorizeInBrowser(
          page,
          client.buildAuthorizationUrl(consenting, params),
          root,
        );
        assert.ok(again.searchParams.get("code"));
      },
    );

    await t.step("a suspended client is refused at authorization and at the token endpoint", async () => {
      const patched = await api(server, "PATCH", `/svc-admin/oidc/clients/${clientRowId}`, admin, {
        suspended: true,
      });
      assert.equal(patched.status, 200);
      const flow = await start();
      const res = await fetch(flow.url, { redirect: "manual" });
      assert.equal(res.status, 400);
      await res.body?.cancel();
      assert.equal((await tokenRequest({ grant_type: "refresh_token", refresh_token: "srt_x" })).status, 401);
      await api(server, "PATCH", `/svc-admin/oidc/clients/${clientRowId}`, admin, { suspended: false });
    });

    await t.step("a suspended user: their tokens stop and refresh is refused", async () => {
      const user = await api(server, "POST", "/svc-admin/users", admin, {
        email: "ada@example.test",
        password: "ada's long password",
        displayName: "Ada",
      });
      assert.equal(user.status, 201, JSON.stringify(user.json));
      const other = await browser!.newContext();
      const otherPage = await other.newPage();
      otherPage.setDefaultTimeout(20_000);
      const flow = await start({ scope: "openid profile offline_access" });
      const callback = await authorizeInBrowser(otherPage, flow.url, {
        email: "ada@example.test",
        password: "ada's long password",
      });
      await other.close();
      const tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
      });
      assert.equal(tokens.claims()!.name, "Ada");
      const suspended = await api(server, "POST", `/svc-admin/users/${user.json.id}/suspend`, admin, {
        reason: "test",
      });
      assert.equal(suspended.status, 200);
      await assert.rejects(() => client.fetchUserInfo(config, tokens.access_token, user.json.id));
      await assert.rejects(() => client.refreshTokenGrant(config, tokens.refresh_token!));
    });
  } finally {
    await browser?.close();
    await server.close();
    await rp.shutdown();
  }
});
