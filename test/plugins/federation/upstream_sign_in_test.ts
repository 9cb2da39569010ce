/**
 * The federation plugin against the real server, with panva's `oidc-provider` (a certified
 * OpenID provider nobody here wrote) started in the test as an organization's upstream:
 *
 * - the admin API: providers created, read, listed, changed and deleted under the plugin's
 *   permissions (401 without a caller, 403 without the permission, 404 for what is not visible);
 *   the client secret is never shown;
 * - in Chromium, through the hosted sign-in page: home-realm discovery from a verified email
 *   domain offers "Continue with your organization's sign-in"; just-in-time provisioning; a second
 *   sign-in reuses the link; an existing account is linked only while signed in (`link=1`), never
 *   by email alone; an email in a domain the organization did not verify is refused (and never
 *   discovered); a replayed state is refused; a `returnTo` on a foreign origin is refused; axe-core
 *   on the pages the plugin adds;
 * - a server without the plugin answers 404 on its routes and `{}` at discovery.
 */
import { strict as assert } from "node:assert";
import http from "node:http";
import Provider from "oidc-provider";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import type { BrowserContext, Page } from "playwright-core";
import { launchChromium, REPO_ROOT } from "../../support/browser.ts";
import { httpClient, startTestServer } from "../../support/server.ts";

const AXE_PATH = `${REPO_ROOT}node_modules/axe-core/axe.min.js`;

function freePort(): number {
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  return port;
}

/** The upstream's accounts: login → claims. */
const ACCOUNTS: Record<string, Record<string, unknown>> = {
  alice: { email: "alice@acme.test", email_verified: true, name: "Alice Upstream", department: "R&D" },
  bob: { email: "bob@acme.test", email_verified: true, name: "Bob Upstream" },
  carol: { email: "carol@unverified.test", email_verified: true, name: "Carol" },
};

async function startUpstream(port: number, callback: string) {
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: [{
      client_id: "svc-federation",
      client_secret: "upstream client secret",
      redirect_uris: [callback],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    }],
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name", "department"] },
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ["federation test upstream"] },
    findAccount: (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: () => ({ sub: `upstream-${id}`, ...(ACCOUNTS[id] ?? {}) }),
    }),
  });
  const server = http.createServer(provider.callback());
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()));
  return { issuer, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/**
 * An upstream this test controls: discovery, JWKS and a token endpoint that answers the ID token
 * `mint` makes from what it was sent (the nonce comes from the authorization request the test
 * read); it records the token requests.
 */
async function startFakeUpstream() {
  const { privateKey, publicKey } = await generateKeyPair("RS256");
  const jwk = { ...await exportJWK(publicKey), kid: "fake", alg: "RS256", use: "sig" };
  const tokenRequests: URLSearchParams[] = [];
  let mint: () => Promise<string> = () => Promise.resolve("");
  const server: Deno.HttpServer<Deno.NetAddr> = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req): Promise<Response> => {
      const url = new URL(req.url);
      const issuer: string = `http://127.0.0.1:${server.addr.port}`;
      if (url.pathname === "/.well-known/openid-configuration") {
        return Response.json({
          issuer,
          authorization_endpoint: `${issuer}/auth`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
          id_token_signing_alg_values_supported: ["RS256"],
          token_endpoint_auth_methods_supported: ["client_secret_post"],
        });
      }
      if (url.pathname === "/jwks") return Response.json({ keys: [jwk] });
      if (url.pathname === "/token") {
        tokenRequests.push(new URLSearchParams(await req.text()));
        return Response.json({ id_token: await mint(), access_token: "x", token_type: "Bearer" });
      }
      return new Response("not found", { status: 404 });
    },
  );
  const issuer = `http://127.0.0.1:${server.addr.port}`;
  return {
    issuer,
    tokenRequests,
    sign: (claims: Record<string, unknown>) =>
      new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: "fake" }).setIssuedAt().setExpirationTime(
        "5m",
      )
        .sign(privateKey),
    setMint: (fn: () => Promise<string>) => mint = fn,
    close: () => server.shutdown(),
  };
}

async function axeCheck(page: Page, axe: string, name: string): Promise<void> {
  await page.evaluate(axe);
  const violations: { id: string; impact: string }[] = await page.evaluate(
    `axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact })))`,
  );
  const serious = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  assert.deepEqual(serious, [], `${name}: ${JSON.stringify(violations)}`);
}

/** Signs in at the upstream's dev interaction (login, then consent) until the browser is back at svc. */
async function upstreamLogin(page: Page, upstream: string, svc: string, login: string): Promise<void> {
  for (let i = 0; i < 10 && page.url().startsWith(upstream); i++) {
    if (await page.locator("input[name=login]").count() > 0) {
      await page.fill("input[name=login]", login);
      await page.fill("input[name=password]", "any password");
      await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")]);
    } else if (await page.locator("button[type=submit]").count() > 0) {
      await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")]);
    } else break;
  }
  assert.ok(page.url().startsWith(svc), `back at svc, not at ${page.url()}`);
}

function cookieValue(cookies: { name: string; value: string }[], name: string): string | null {
  return cookies.find((c) => c.name === name)?.value ?? null;
}

Deno.test({
  name: "federation: sign in through an organization's upstream provider (oidc-provider) in Chromium",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    const axe = await Deno.readTextFile(AXE_PATH);
    const svcPort = freePort();
    const upstreamPort = freePort();
    const svcOrigin = `http://127.0.0.1:${svcPort}`;
    const upstream = await startUpstream(upstreamPort, `${svcOrigin}/federation/callback`);
    const fake = await startFakeUpstream();
    const server = await startTestServer({
      SVC_PLUGINS: "federation",
      SVC_FEDERATION_ALLOW_HTTP_ISSUERS: "true",
      // The upstreams run on the loopback: the outbound guard's explicit test allowance.
      SVC_OUTBOUND_ALLOW_PRIVATE: "127.0.0.1",
      SVC_HOST: "127.0.0.1",
      SVC_PORT: String(svcPort),
      SVC_BASE_URL: svcOrigin,
    });
    const browser = await launchChromium();
    const contexts: BrowserContext[] = [];
    const fresh = async () => {
      const context = await browser.newContext({ locale: "en-US" });
      contexts.push(context);
      return { context, page: await context.newPage() };
    };
    try {
      const api = httpClient(server.url);
      const root = await api.signIn(server.adminEmail, server.adminPassword);
      const rootId = (await api.call("GET", "/profile/me", root)).json.id as string;

      // Organizations: Acme verified acme.test and claims unverified.test without proving it.
      const acme = await api.call("POST", "/svc-admin/organizations", root, {
        name: "acme",
        displayName: "Acme",
      });
      assert.equal(acme.status, 201, JSON.stringify(acme.json));
      const acmeId = acme.json.id as string;
      const other = await api.call("POST", "/svc-admin/organizations", root, {
        name: "other",
        displayName: "Other",
      });
      const otherId = other.json.id as string;
      const domain = await api.call("POST", `/svc-admin/organizations/${acmeId}/domains`, root, {
        value: "acme.test",
      });
      assert.equal(domain.status, 201, JSON.stringify(domain.json));
      const verified = await api.call(
        "POST",
        `/svc-admin/organizations/${acmeId}/domains/${domain.json.id}/verify`,
        root,
        { override: true, reason: "test organization" },
      );
      assert.equal(verified.status, 200, JSON.stringify(verified.json));
      const unverified = await api.call("POST", `/svc-admin/organizations/${acmeId}/domains`, root, {
        value: "unverified.test",
      });
      assert.equal(unverified.status, 201);

      // A user without federation permissions, and an organization administrator of "other".
      const plainPassword = "plain user password 1";
      const plain = await api.call("POST", "/svc-admin/users", root, {
        email: "plain@example.test",
        password: plainPassword,
      });
      assert.equal(plain.status, 201, JSON.stringify(plain.json));
      const otherAdmin = await api.call("POST", "/svc-admin/users", root, {
        email: "other-admin@example.test",
        password: plainPassword,
        orgId: otherId,
      });
      assert.equal(otherAdmin.status, 201, JSON.stringify(otherAdmin.json));
      const orgRole = await api.call("POST", "/svc-admin/roles", root, {
        key: "federation-org-admin",
        displayName: "Federation (organization)",
        orgId: otherId,
        grants: [{ pattern: "federation:org:*", effect: "Allow" }],
      });
      assert.equal(orgRole.status, 201, JSON.stringify(orgRole.json));
      assert.equal(
        (await api.call("POST", "/svc-admin/role-assignments", root, {
          roleId: orgRole.json.id,
          principalKind: "User",
          principalId: otherAdmin.json.id,
          orgId: otherId,
        })).status,
        201,
      );

      const BASE = "/svc-admin/federation/providers";
      const body = {
        orgId: acmeId,
        issuer: upstream.issuer,
        clientId: "svc-federation",
        clientSecret: "upstream client secret",
        scopes: ["openid", "email", "profile"],
        claimMapping: { attributes: { department: "department" } },
        allowJitProvisioning: true,
        makeDefault: true,
      };
      let providerId = "";

      await t.step("admin API: fences (401, 403, 404) and the secret never shown", async () => {
        assert.equal((await api.call("GET", BASE, null)).status, 401);
        assert.equal((await api.call("POST", BASE, null, body)).status, 401);
        // The bootstrap administrator holds svc:*:* only: the plugin's permissions are its own.
        assert.equal((await api.call("POST", BASE, root, body)).status, 403);
        const plainToken = await api.signIn("plain@example.test", plainPassword);
        assert.equal((await api.call("GET", BASE, plainToken)).status, 403);

        const role = await api.call("POST", "/svc-admin/roles", root, {
          key: "federation-admin",
          displayName: "Federation",
          grants: [{ pattern: "federation:global:*", effect: "Allow" }],
        });
        assert.equal(role.status, 201, JSON.stringify(role.json));
        const assigned = await api.call("POST", "/svc-admin/role-assignments", root, {
          roleId: role.json.id,
          principalKind: "User",
          principalId: rootId,
        });
        assert.equal(assigned.status, 201, JSON.stringify(assigned.json));

        const invalid = await api.call("POST", BASE, root, { ...body, scopes: ["email"] });
        assert.equal(invalid.status, 400);
        const nul = await api.call("POST", BASE, root, { ...body, clientId: "a\u0000b" });
        assert.equal(nul.status, 400);
        const unknownOrg = await api.call("POST", BASE, root, { ...body, orgId: crypto.randomUUID() });
        assert.equal(unknownOrg.status, 404);

        const created = await api.call("POST", BASE, root, body);
        assert.equal(created.status, 201, JSON.stringify(created.json));
        assert.equal(created.headers.get("Cache-Control"), "no-store");
        providerId = created.json.id;
        assert.equal(created.json.hasClientSecret, true);
        assert.ok(!JSON.stringify(created.json).includes(body.clientSecret));
        const read = await api.call("GET", `${BASE}/${providerId}`, root);
        assert.equal(read.status, 200);
        assert.ok(!JSON.stringify(read.json).includes(body.clientSecret));
        assert.deepEqual(read.json.claimMapping, {
          email: "email",
          name: "name",
          attributes: { department: "department" },
        });
        const list = await api.call("GET", `${BASE}?orgId=${acmeId}`, root);
        assert.equal(list.json.total, 1);
        const org = await api.call("GET", `/svc-admin/organizations/${acmeId}`, root);
        assert.equal(org.json.defaultIdentityProviderId, providerId);
        assert.equal((await api.call("GET", `${BASE}/${crypto.randomUUID()}`, root)).status, 404);
        assert.equal((await api.call("GET", `${BASE}/not-an-id`, root)).status, 404);

        // An administrator of another organization sees none of Acme's providers.
        const otherToken = await api.signIn("other-admin@example.test", plainPassword, otherId);
        assert.equal((await api.call("GET", `${BASE}/${providerId}`, otherToken)).status, 404);
        assert.equal(
          (await api.call("PATCH", `${BASE}/${providerId}`, otherToken, { enabled: false })).status,
          404,
        );
        assert.equal((await api.call("DELETE", `${BASE}/${providerId}`, otherToken)).status, 404);
        assert.equal((await api.call("POST", BASE, otherToken, body)).status, 404);
        assert.equal((await api.call("GET", BASE, otherToken)).json.total, 0);

        // Change and delete a second provider; the audit chain has an entry per mutation.
        const second = await api.call("POST", BASE, root, {
          ...body,
          makeDefault: false,
          clientId: "second",
        });
        assert.equal(second.status, 201);
        const patched = await api.call("PATCH", `${BASE}/${second.json.id}`, root, {
          enabled: false,
          clientSecret: "replaced secret",
        });
        assert.equal(patched.status, 200, JSON.stringify(patched.json));
        assert.equal(patched.json.enabled, false);
        assert.equal((await api.call("DELETE", `${BASE}/${second.json.id}`, root)).status, 204);
        assert.equal((await api.call("GET", `${BASE}/${second.json.id}`, root)).status, 404);
        const audit = await api.call("GET", "/svc-admin/audit?limit=200", root);
        if (audit.status === 200) {
          const actions = JSON.stringify(audit.json);
          for (
            const action of [
              "federation.provider.create",
              "federation.provider.update",
              "federation.provider.delete",
            ]
          ) {
            assert.ok(actions.includes(action), action);
          }
          assert.ok(!actions.includes("replaced secret") && !actions.includes(body.clientSecret));
        }
      });

      let aliceId = "";
      await t.step("discovery on the sign-in page, then just-in-time provisioning", async () => {
        const { page } = await fresh();
        const returnTo = `${svcOrigin}/account/`;
        await page.goto(`${svcOrigin}/account/sign-in?returnTo=${encodeURIComponent(returnTo)}`);
        await page.waitForSelector("#email");
        await page.fill("#email", "alice@acme.test");
        const offer = page.locator("#organization-sign-in");
        await offer.waitFor({ timeout: 20_000 });
        assert.match(await offer.textContent() ?? "", /organization's sign-in/);
        await axeCheck(page, axe, "sign-in with the organization's offer");
        await Promise.all([page.waitForNavigation(), offer.click()]);
        assert.ok(page.url().startsWith(upstream.issuer), page.url());
        await upstreamLogin(page, upstream.issuer, svcOrigin, "alice");
        await page.waitForURL((url) => url.href.startsWith(returnTo));
        const token = cookieValue(await page.context().cookies(), "svc_at");
        assert.ok(token, "signed in with the cookie transport");
        const me = await api.call("GET", "/profile/me", token);
        assert.equal(me.status, 200);
        assert.equal(me.json.email, "alice@acme.test");
        aliceId = me.json.id;
        const user = await api.call("GET", `/svc-admin/users/${aliceId}?expand=organizations`, root);
        assert.equal(user.json.emailVerified, true);
        assert.equal(user.json.displayName, "Alice Upstream");
        assert.equal(user.json.attributes.department, "R&D");
        assert.ok(JSON.stringify(user.json).includes(acmeId), "a member of the organization");
      });

      await t.step("a second sign-in reuses the link", async () => {
        const { page } = await fresh();
        await page.goto(`${svcOrigin}/federation/start?email=alice%40acme.test`);
        await upstreamLogin(page, upstream.issuer, svcOrigin, "alice");
        await page.waitForURL((url) => url.pathname.startsWith("/account"));
        const token = cookieValue(await page.context().cookies(), "svc_at");
        assert.equal((await api.call("GET", "/profile/me", token)).json.id, aliceId);
        const users = await api.call("GET", "/svc-admin/users?q=alice", root);
        assert.equal(users.json.total, 1);
        // The security ledger of the user: provisioned, linked, signed in.
        const ledger = JSON.stringify((await api.call("GET", "/profile/security-events", token)).json);
        for (const kind of ["federation.provisioned", "federation.linked", "federation.sign_in"]) {
          assert.ok(ledger.includes(kind), `${kind} in ${ledger}`);
        }
      });

      await t.step("an existing account is never linked by email alone; linked while signed in", async () => {
        const bobPassword = "bob local password 1";
        const bob = await api.call("POST", "/svc-admin/users", root, {
          email: "bob@acme.test",
          password: bobPassword,
        });
        assert.equal(bob.status, 201);
        const { page } = await fresh();
        await page.goto(`${svcOrigin}/federation/start?provider=${providerId}`);
        await upstreamLogin(page, upstream.issuer, svcOrigin, "bob");
        await page.waitForSelector("#error-code");
        assert.equal(await page.textContent("#error-code"), "federation_refused");
        await axeCheck(page, axe, "federation error page");
        assert.equal(cookieValue(await page.context().cookies(), "svc_at"), null);

        // Signed in with the password first, the owner links the upstream identity explicitly.
        await page.goto(`${svcOrigin}/account/sign-in`);
        await page.fill("#email", "bob@acme.test");
        await page.fill("#password", bobPassword);
        await page.click("button[type=submit]");
        await page.waitForSelector("#profile-email");
        await page.goto(`${svcOrigin}/federation/start?provider=${providerId}&link=1`);
        await upstreamLogin(page, upstream.issuer, svcOrigin, "bob");
        await page.waitForURL((url) => url.pathname.startsWith("/account"));

        const { page: later } = await fresh();
        await later.goto(`${svcOrigin}/federation/start?provider=${providerId}`);
        await upstreamLogin(later, upstream.issuer, svcOrigin, "bob");
        await later.waitForURL((url) => url.pathname.startsWith("/account"));
        const token = cookieValue(await later.context().cookies(), "svc_at");
        assert.equal((await api.call("GET", "/profile/me", token)).json.id, bob.json.id);
      });

      await t.step("an unverified domain is neither discovered nor provisioned", async () => {
        const discover = await api.call("POST", "/auth/sign-in/discover", null, {
          email: "carol@unverified.test",
        });
        assert.equal(discover.status, 200);
        assert.deepEqual(discover.json, {});
        const known = await api.call("POST", "/auth/sign-in/discover", null, { email: "someone@acme.test" });
        assert.match(known.json.redirect, /^\/federation\/start\?provider=/);
        // The same answer whether or not an account has the email.
        const existing = await api.call("POST", "/auth/sign-in/discover", null, { email: "alice@acme.test" });
        assert.equal(
          existing.json.redirect.replace(/email=[^&]*/, ""),
          known.json.redirect.replace(/email=[^&]*/, ""),
        );
        const { page } = await fresh();
        await page.goto(`${svcOrigin}/federation/start?email=carol%40unverified.test`);
        assert.equal(await page.textContent("#error-code"), "federation_provider_unknown");
        await page.goto(`${svcOrigin}/federation/start?provider=${providerId}`);
        await upstreamLogin(page, upstream.issuer, svcOrigin, "carol");
        await page.waitForSelector("#error-code");
        assert.equal(await page.textContent("#error-code"), "federation_refused");
        assert.equal((await api.call("GET", "/svc-admin/users?q=carol", root)).json.total, 0);
      });

      await t.step("a state is used once", async () => {
        const { page } = await fresh();
        const callbacks: string[] = [];
        page.on("request", (request) => {
          if (request.url().startsWith(`${svcOrigin}/federation/callback`)) callbacks.push(request.url());
        });
        await page.goto(`${svcOrigin}/federation/start?provider=${providerId}`);
        const stateCookie = cookieValue(await page.context().cookies(), "svc_federation_state");
        assert.ok(stateCookie);
        await upstreamLogin(page, upstream.issuer, svcOrigin, "alice");
        await page.waitForURL((url) => url.pathname.startsWith("/account"));
        assert.equal(callbacks.length, 1);
        // The same callback again, with the state's cookie: refused, and nobody is signed in.
        const replay = await fetch(callbacks[0], {
          headers: { Cookie: `svc_federation_state=${stateCookie}` },
          redirect: "manual",
        });
        assert.equal(replay.status, 400);
        const text = await replay.text();
        assert.match(text, /federation_state_invalid/);
        assert.equal(replay.headers.get("Set-Cookie")?.includes("svc_at="), false);
        // Without the cookie of the browser that started it: refused too.
        const stolen = await fetch(callbacks[0], { redirect: "manual" });
        assert.equal(stolen.status, 400);
      });

      await t.step(
        "through the real callback: wrong audience, nonce or issuer refused; PKCE sent",
        async () => {
          const created = await api.call("POST", BASE, root, {
            orgId: otherId,
            issuer: fake.issuer,
            clientId: "fake-client",
            clientSecret: "fake secret",
            allowJitProvisioning: true,
          });
          assert.equal(created.status, 201, JSON.stringify(created.json));
          const domainRow = await api.call("POST", `/svc-admin/organizations/${otherId}/domains`, root, {
            value: "other.test",
          });
          await api.call(
            "POST",
            `/svc-admin/organizations/${otherId}/domains/${domainRow.json.id}/verify`,
            root,
            {
              override: true,
              reason: "test",
            },
          );
          const attempt = async (claims: (nonce: string) => Record<string, unknown>) => {
            const start = await fetch(`${server.url}/federation/start?provider=${created.json.id}`, {
              redirect: "manual",
            });
            assert.equal(start.status, 303);
            await start.body?.cancel();
            const location = new URL(start.headers.get("Location")!);
            const cookie = (start.headers.get("Set-Cookie") ?? "").split(";")[0];
            const nonce = location.searchParams.get("nonce")!;
            fake.setMint(() => fake.sign(claims(nonce)));
            const res = await fetch(
              `${server.url}/federation/callback?state=${location.searchParams.get("state")}&code=the-code`,
              { headers: { Cookie: cookie }, redirect: "manual" },
            );
            const text = await res.text();
            const sent = fake.tokenRequests.at(-1)!;
            const challenge = btoa(String.fromCharCode(
              ...new Uint8Array(
                await crypto.subtle.digest("SHA-256", new TextEncoder().encode(sent.get("code_verifier")!)),
              ),
            )).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
            assert.equal(challenge, location.searchParams.get("code_challenge"), "the PKCE verifier matches");
            assert.equal(sent.get("client_secret"), "fake secret", "client_secret_post, as advertised");
            return { status: res.status, text, setCookie: res.headers.get("Set-Cookie") ?? "" };
          };
          const good = (nonce: string) => ({
            iss: fake.issuer,
            aud: "fake-client",
            sub: "fake-user",
            nonce,
            email: "dana@other.test",
            email_verified: false,
          });
          for (
            const [name, claims] of [
              ["wrong audience", (n: string) => ({ ...good(n), aud: "another-client" })],
              ["wrong nonce", (n: string) => ({ ...good(n), nonce: `${n}x` })],
              ["wrong issuer", (n: string) => ({ ...good(n), iss: "http://127.0.0.1:1" })],
            ] as const
          ) {
            const refused = await attempt(claims);
            assert.equal(refused.status, 502, name);
            assert.match(refused.text, /federation_id_token_invalid/, name);
            assert.ok(!refused.text.includes("fake secret") && !refused.setCookie.includes("svc_at="), name);
          }
          const accepted = await attempt(good);
          assert.equal(accepted.status, 303, accepted.text);
          assert.ok(accepted.setCookie.includes("svc_at="));
          const dana = await api.call("GET", "/svc-admin/users?q=dana", root);
          assert.equal(dana.json.total, 1);
          assert.equal(
            dana.json.items[0].emailVerified,
            false,
            "not verified when the upstream does not say so",
          );
        },
      );

      await t.step("returnTo on a foreign origin is refused", async () => {
        const start = await fetch(
          `${server.url}/federation/start?provider=${providerId}&returnTo=${
            encodeURIComponent("https://evil.test/")
          }`,
          { redirect: "manual" },
        );
        assert.equal(start.status, 400);
        assert.match(await start.text(), /federation_return_to_refused/);
        const discover = await api.call("POST", "/auth/sign-in/discover", null, {
          email: "alice@acme.test",
          returnTo: "https://evil.test/",
        });
        assert.equal(discover.status, 400);
        const fine = await fetch(
          `${server.url}/federation/start?provider=${providerId}&returnTo=${
            encodeURIComponent(`${svcOrigin}/account/`)
          }`,
          { redirect: "manual" },
        );
        assert.equal(fine.status, 303);
        assert.ok(fine.headers.get("Location")?.startsWith(`${upstream.issuer}/`));
        assert.match(fine.headers.get("Location") ?? "", /code_challenge_method=S256/);
        await fine.body?.cancel();
      });
    } finally {
      for (const context of contexts) await context.close().catch(() => {});
      await browser.close();
      await server.close();
      await upstream.close();
      await fake.close();
    }
  },
});

Deno.test({
  name: "federation: off unless enabled",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const server = await startTestServer({});
    try {
      const api = httpClient(server.url);
      const root = await api.signIn(server.adminEmail, server.adminPassword);
      assert.equal((await api.call("GET", "/svc-admin/federation/providers", root)).status, 404);
      const start = await fetch(`${server.url}/federation/start?email=a%40acme.test`, { redirect: "manual" });
      assert.equal(start.status, 404);
      await start.body?.cancel();
      const discover = await api.call("POST", "/auth/sign-in/discover", null, { email: "a@acme.test" });
      assert.equal(discover.status, 200);
      assert.deepEqual(discover.json, {});
    } finally {
      await server.close();
    }
  },
});
