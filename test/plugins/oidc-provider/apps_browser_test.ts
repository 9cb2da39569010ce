/**
 * "Apps with access" on the hosted account page, in Chromium against the real server: the user
 * signs in through an authorization request of a client, the client gets tokens, the account
 * page lists it (name, scopes) with no serious axe-core violation, and its button revokes it: the
 * page says so, the list empties, and the client's refresh token is refused.
 */
import { strict as assert } from "node:assert";
import type { Browser } from "playwright-core";
import { checkPage } from "../../support/axe.ts";
import { launchChromium } from "../../support/browser.ts";
import { startTestServer } from "../../support/server.ts";

const rpHits: string[] = [];
const rp = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
  if (new URL(req.url).pathname === "/callback") rpHits.push(req.url);
  return new Response("callback");
});
const REDIRECT = `http://127.0.0.1:${rp.addr.port}/callback`;

Deno.test("oidc-provider: apps with access on /account in Chromium", async () => {
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
    const call = async (method: string, path: string, token: string | null, body?: unknown) => {
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers: {
          ...(token ? { Authorization: `Bearer ${token}` } : {}),
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, json: await res.json().catch(() => null) };
    };
    const admin = (await call("POST", "/auth/login", null, {
      email: server.adminEmail,
      password: server.adminPassword,
    })).json.accessToken as string;
    const created = await call("POST", "/svc-admin/oidc/clients", admin, {
      clientId: "gallery",
      clientName: "Gallery",
      clientType: "confidential",
      redirectUris: [REDIRECT],
      allowedScopes: ["openid", "email", "offline_access"],
    });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const secret = created.json.clientSecret as string;
    const tokenCall = (fields: Record<string, string>) =>
      fetch(`${server.url}/oidc/token`, {
        method: "POST",
        headers: {
          "Content-Type": "application/x-www-form-urlencoded",
          Authorization: `Basic ${btoa(`gallery:${secret}`)}`,
        },
        body: new URLSearchParams(fields).toString(),
      });

    browser = await launchChromium();
    const page = await (await browser.newContext({ locale: "en-US" })).newPage();
    page.setDefaultTimeout(20_000);

    // Sign in through the client's authorization request on the hosted page.
    const authorize = new URL(`${server.url}/oidc/authorize`);
    authorize.search = new URLSearchParams({
      response_type: "code",
      client_id: "gallery",
      redirect_uri: REDIRECT,
      scope: "openid email offline_access",
      state: "st",
    }).toString();
    await page.goto(authorize.href, { waitUntil: "domcontentloaded" });
    await page.waitForSelector("#password");
    await page.fill("#email", server.adminEmail);
    await page.fill("#password", server.adminPassword);
    await page.click("button[type=submit]", { noWaitAfter: true });
    for (let i = 0; rpHits.length === 0 && i < 300; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(rpHits.length, 1, `no callback; the page is at ${page.url()}`);
    const code = new URL(rpHits[0]).searchParams.get("code")!;
    const exchanged = await tokenCall({ grant_type: "authorization_code", code, redirect_uri: REDIRECT });
    assert.equal(exchanged.status, 200, await exchanged.clone().text());
    const { refresh_token: refreshToken } = await exchanged.json();

    // The account page lists the client.
    await page.goto(`${server.url}/account`, { waitUntil: "domcontentloaded" });
    await page.waitForSelector("#apps li");
    const item = await page.textContent("#apps li");
    assert.match(item!, /Gallery/);
    assert.match(item!, /email/);
    assert.match(item!, /offline_access/);
    await checkPage(page, "apps-with-access");

    // Revoking it ends its access.
    await page.getByRole("button", { name: "Remove access of Gallery" }).click();
    await page.getByText("Gallery no longer has access to your account.").waitFor();
    await page.getByText("No app has access to your account.").waitFor();
    const refused = await tokenCall({ grant_type: "refresh_token", refresh_token: refreshToken });
    assert.equal(refused.status, 400);
    await refused.body?.cancel();
  } finally {
    await browser?.close();
    await server.close();
    await rp.shutdown();
  }
});
