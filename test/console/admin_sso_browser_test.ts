/**
 * The admin console's SAML and SCIM pages in headless Chromium against the real server
 * (`svc start` with `SVC_PLUGINS=saml,scim` on a fresh Postgres database):
 *
 * - the pages are offered once the plugins are enabled and the administrator may read them;
 * - a SAML connection is added from an IdP's metadata XML (samlify's IdP), its page shows the
 *   SP entity id, ACS URL and metadata URL with copy buttons (the copy reaches the clipboard),
 *   the certificates, an "expires soon" badge for a certificate within 30 days (and when
 *   `saml.certificate_expiring` was raised for it, on its page); it is disabled
 *   and enabled; its test sign-in makes a real round trip (svc → the IdP, a page served here that
 *   posts samlify's signed response → svc's ACS → back to the console) and shows the NameID,
 *   the attributes and the mapped user (would be provisioned just in time), with the browser
 *   still the administrator's and nobody created;
 * - a SCIM connection is created: its token is shown once (gone after a reload) and works; the
 *   provisioning log shows the IdP's request; a rotation shows a new token once; delete;
 * - every page: axe-core finds no serious or critical violation, no CSP violation, no uncaught
 *   error, and a screenshot goes to `.tmp/screens/console-sso-*.png`.
 */
import { strict as assert } from "node:assert";
import type { Page } from "playwright-core";
import { launchChromium, REPO_ROOT } from "../support/browser.ts";
import { httpClient, startTestServer } from "../support/server.ts";
import { fixture, testIdp } from "../plugins/saml/idp.ts";

async function inflateRaw(base64: string): Promise<string> {
  const bytes = Uint8Array.from(atob(base64), (ch) => ch.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return await new Response(stream).text();
}

const AXE = await Deno.readTextFile(`${REPO_ROOT}node_modules/axe-core/axe.min.js`);
const SCREENS = `${REPO_ROOT}.tmp/screens`;

async function check(page: Page, name: string): Promise<void> {
  for (let i = 0; i < 100 && await page.getByText("Loading…", { exact: true }).count() > 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  await page.screenshot({ path: `${SCREENS}/console-sso-${name}.png`, fullPage: true });
  await page.evaluate(AXE);
  const violations: { id: string; impact: string; nodes: string[] }[] = await page.evaluate(
    `axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) =>
      ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) })))`,
  );
  const serious = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  assert.deepEqual(serious, [], `${name}: ${JSON.stringify(serious)}`);
}

Deno.test({
  name: "admin console in Chromium: SAML and SCIM pages (plugins enabled), a11y and screenshots",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    await Deno.mkdir(SCREENS, { recursive: true });
    const server = await startTestServer({ SVC_PLUGINS: "saml,scim" });
    const browser = await launchChromium();
    const base = `${server.issuer}/svc-admin/ui/`;
    let failed = false;
    let current: Page | null = null;
    let closeIdp: () => Promise<void> = () => Promise.resolve();
    const step = async (name: string, fn: () => Promise<void> | void) => {
      const ok = await t.step({ name, ignore: failed, fn });
      if (!ok && !failed) {
        failed = true;
        await current?.screenshot({ path: `${SCREENS}/console-sso-FAILED.png` }).catch(() => {});
      }
    };
    try {
      // The bootstrap administrator holds svc:*:*; the plugins' permissions are granted here.
      const http = httpClient(server.url);
      const root = await http.signIn(server.adminEmail, server.adminPassword);
      const post = async (path: string, body: unknown) => {
        const res = await http.call("POST", path, root, body);
        assert.ok(res.status < 300, `${path}: ${res.status} ${JSON.stringify(res.json)}`);
        return res.json;
      };
      const org = await post("/svc-admin/organizations", { name: "acme", displayName: "Acme Corp" });
      const me = (await http.call("GET", `/svc-admin/users?q=${encodeURIComponent(server.adminEmail)}`, root))
        .json.items[0];
      const role = await post("/svc-admin/roles", {
        key: "sso-admin",
        displayName: "SSO administrator",
        grants: [
          { pattern: "saml:global:*", effect: "Allow" },
          { pattern: "scim:global:*", effect: "Allow" },
        ],
      });
      await post("/svc-admin/role-assignments", {
        roleId: role.id,
        principalKind: "User",
        principalId: me.id,
      });

      const context = await browser.newContext({
        viewport: { width: 1280, height: 800 },
        permissions: ["clipboard-read", "clipboard-write"],
      });
      context.setDefaultTimeout(15_000);
      const page = await context.newPage();
      current = page;
      const problems: string[] = [];
      page.on("pageerror", (error) => problems.push(`page error: ${error}`));
      page.on("console", (message) => {
        if (message.type() === "error" && /Content Security Policy|Refused to/i.test(message.text())) {
          problems.push(`csp: ${message.text()}`);
        }
      });
      const nav = page.getByRole("navigation", { name: "Console" });
      let samlId = "";
      // The IdP: samlify's, its sign-in page served here (no person to ask: it answers for Jane). It
      // is on localhost like svc, so the same site: over http the relay cookie is SameSite=Lax,
      // which a cross-site post would not carry.
      const idpServer = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
        const url = new URL(req.url);
        if (url.pathname !== "/sso") return new Response(null, { status: 404 });
        const request = await inflateRaw(url.searchParams.get("SAMLRequest") ?? "");
        const requestId = /ID="([^"]+)"/.exec(request)![1];
        const acsUrl = /AssertionConsumerServiceURL="([^"]+)"/.exec(request)![1];
        const xml = await idp.respond({ entityId: `${server.issuer}/saml/${samlId}/metadata`, acsUrl }, {
          requestId,
          nameId: "jane@acme.test",
          attributes: { email: "jane@acme.test", department: "Engineering" },
        });
        const response = btoa(String.fromCharCode(...new TextEncoder().encode(xml)));
        const relay = url.searchParams.get("RelayState") ?? "";
        return new Response(
          `<!doctype html><html lang="en"><title>Test IdP</title><form method="post" action="${acsUrl}">
            <input type="hidden" name="SAMLResponse" value="${response}">
            <input type="hidden" name="RelayState" value="${relay}">
            <button>Continue to svc</button></form></html>`,
          { headers: { "Content-Type": "text/html; charset=utf-8" } },
        );
      });
      closeIdp = () => idpServer.shutdown();
      const idp = testIdp(
        "https://idp.acme.test/saml",
        fixture("idp"),
        `http://localhost:${idpServer.addr.port}/sso`,
      );

      await step("signed in, the console offers the SAML and SCIM pages", async () => {
        await page.goto(base);
        await page.getByLabel("Email").fill(server.adminEmail);
        await page.getByLabel("Password", { exact: true }).fill(server.adminPassword);
        await page.getByRole("button", { name: "Sign in", exact: true }).click();
        await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
        await nav.getByRole("link", { name: "SAML sign-in" }).waitFor();
        await nav.getByRole("link", { name: "SCIM provisioning" }).waitFor();
      });

      await step("a SAML connection is added from pasted metadata XML", async () => {
        await nav.getByRole("link", { name: "SAML sign-in" }).click();
        await page.getByRole("heading", { level: 1, name: "SAML sign-in" }).waitFor();
        await page.getByText("No SAML connection yet.").waitFor();
        await check(page, "saml");
        await page.getByRole("combobox", { name: "Organization" }).fill("acme");
        await page.getByLabel("Display name").fill("Acme IdP");
        await page.getByLabel("IdP metadata XML").fill(idp.metadata());
        await page.getByLabel("Create accounts on first sign-in (just in time)").check();
        await page.getByRole("button", { name: "Add identity provider" }).click();
        await page.getByRole("heading", { level: 1, name: "SAML: Acme IdP" }).waitFor();
        samlId = decodeURIComponent(new URL(page.url()).hash.split("/")[2]);
        assert.match(samlId, /^[0-9a-f-]{36}$/);
      });

      await step("its page shows what to give the IdP, with copy buttons, and the certificate", async () => {
        const value = (label: string) => page.locator(`[data-copy="${label}"]`).textContent();
        const entityId = await value("SP entity ID (Audience)");
        const acs = await value("ACS URL (Reply URL)");
        const metadata = await value("SP metadata URL");
        assert.equal(acs, `${server.issuer}/saml/${samlId}/acs`);
        assert.equal(metadata, `${server.issuer}/saml/${samlId}/metadata`);
        assert.ok(entityId && entityId.startsWith(server.issuer), entityId ?? "");
        await page.getByRole("button", { name: "Copy ACS URL (Reply URL)" }).click();
        await page.getByRole("button", { name: "Copied ACS URL (Reply URL)" }).waitFor();
        assert.equal(await page.evaluate("navigator.clipboard.readText()"), acs);
        await page.getByRole("cell", { name: /idp/i }).first().waitFor();
        assert.equal(await page.getByText("expires soon").count(), 0);
        await check(page, "saml-detail");
      });

      await step("the connection is disabled and enabled again", async () => {
        await page.getByRole("button", { name: "Disable sign-in" }).click();
        await page.getByText("Sign-in through this identity provider is disabled.").waitFor();
        await page.getByText("disabled; accounts created").waitFor();
        await page.getByRole("button", { name: "Enable sign-in" }).click();
        await page.getByText("Sign-in through this identity provider is enabled.").waitFor();
        await page.getByText("enabled; accounts created").waitFor();
      });

      await step("the test sign-in section is offered, with no test run yet", async () => {
        await page.getByRole("heading", { level: 2, name: "Test sign-in" }).waitFor();
        await page.getByText("No test in the last hour.").waitFor();
        assert.equal(await page.getByRole("button", { name: "Test sign-in" }).count(), 1);
      });

      await step("a certificate expiring within 30 days is flagged in the list", async () => {
        await post("/svc-admin/saml/connections", {
          orgId: org.id,
          displayName: "Soon IdP",
          idpMetadataXml: testIdp("https://soon.acme.test/saml", fixture("soon")).metadata(),
        });
        await nav.getByRole("link", { name: "SAML sign-in" }).click();
        await page.getByRole("link", { name: "Soon IdP" }).waitFor();
        assert.equal(await page.getByText("certificate expires soon").count(), 1);
        await check(page, "saml-list");
      });

      await step("a SAML connection is deleted", async () => {
        await page.getByRole("link", { name: "Soon IdP" }).click();
        await page.getByRole("heading", { level: 1, name: "SAML: Soon IdP" }).waitFor();
        // Stored within its last 30 days: announced once, and the page says when.
        await page.getByText("expires soon", { exact: true }).waitFor();
        await page.getByText(/saml\.certificate_expiring raised/).waitFor();
        await check(page, "saml-expiring");
        await page.getByRole("button", { name: "Delete connection" }).click();
        const dialog = page.getByRole("dialog");
        await dialog.getByLabel("Type Soon IdP to confirm").fill("Soon IdP");
        await dialog.getByRole("button", { name: "Delete connection" }).click();
        await page.getByRole("heading", { level: 1, name: "SAML sign-in" }).waitFor();
        await page.getByRole("link", { name: "Acme IdP" }).waitFor();
        assert.equal(await page.getByRole("link", { name: "Soon IdP" }).count(), 0);
      });

      let token = "";
      let baseUrl = "";
      await step("a SCIM connection is created and its token is shown once", async () => {
        await nav.getByRole("link", { name: "SCIM provisioning" }).click();
        await page.getByRole("heading", { level: 1, name: "SCIM provisioning" }).waitFor();
        await page.getByText("No SCIM connection yet.").waitFor();
        await check(page, "scim");
        await page.getByRole("combobox", { name: "Organization" }).fill("acme");
        await page.getByLabel("Display name").fill("Acme provisioning");
        await page.getByRole("button", { name: "Create connection" }).click();
        await page.getByText("shown this once").waitFor();
        token = (await page.locator("[data-secret]").textContent()) ?? "";
        assert.match(token, /^svc_scim_/);
        baseUrl = (await page.locator('[data-copy="SCIM base URL"]').textContent()) ?? "";
        assert.ok(baseUrl.startsWith(server.issuer), baseUrl);
        await page.getByRole("button", { name: "Copy the bearer token" }).click();
        await page.getByRole("button", { name: "Copied the bearer token" }).waitFor();
        assert.equal(await page.evaluate("navigator.clipboard.readText()"), token);
        await page.getByRole("link", { name: "Acme provisioning" }).waitFor();
        await check(page, "scim-created");
        await page.reload();
        await page.getByRole("link", { name: "Acme provisioning" }).waitFor();
        assert.equal(await page.locator("[data-secret]").count(), 0, "the token is not shown again");
        assert.equal(await page.getByText(token).count(), 0);
      });

      await step("the IdP's request shows in the provisioning log", async () => {
        const res = await fetch(`${baseUrl}/Users`, { headers: { Authorization: `Bearer ${token}` } });
        assert.equal(res.status, 200);
        await res.body?.cancel();
        await page.getByRole("link", { name: "Acme provisioning" }).click();
        await page.getByRole("heading", { level: 1, name: "SCIM: Acme provisioning" }).waitFor();
        const log = page.getByRole("table", { name: "Requests of the identity provider, newest first" });
        await log.getByRole("cell", { name: "GET", exact: true }).waitFor();
        await log.getByRole("cell", { name: "200", exact: true }).waitFor();
        await check(page, "scim-detail");
      });

      await step("rotation shows a new token once; delete", async () => {
        await page.getByLabel("Seconds the old token keeps working (optional)").fill("0");
        await page.getByRole("button", { name: "Rotate token" }).click();
        await page.getByText("New bearer token").waitFor();
        const rotated = (await page.locator("[data-secret]").textContent()) ?? "";
        assert.match(rotated, /^svc_scim_/);
        assert.notEqual(rotated, token);
        const old = await fetch(`${baseUrl}/Users`, { headers: { Authorization: `Bearer ${token}` } });
        assert.equal(old.status, 401);
        await old.body?.cancel();
        await check(page, "scim-rotated");
        await page.getByRole("button", { name: "Delete connection" }).click();
        const dialog = page.getByRole("dialog");
        await dialog.getByLabel("Type Acme provisioning to confirm").fill("Acme provisioning");
        await dialog.getByRole("button", { name: "Delete connection" }).click();
        await page.getByText("No SCIM connection yet.").waitFor();
      });

      await step(
        "test sign-in: a real round trip through the IdP shows the NameID, attributes and mapped user",
        async () => {
          // Jane's email domain is the organization's, verified (by override: no DNS here); the
          // connection provisions just in time.
          const domain = await post(`/svc-admin/organizations/${org.id}/domains`, { value: "acme.test" });
          await post(`/svc-admin/organizations/${org.id}/domains/${domain.id}/verify`, {
            override: true,
            reason: "test",
          });
          await nav.getByRole("link", { name: "SAML sign-in" }).click();
          await page.getByRole("link", { name: "Acme IdP" }).click();
          await page.getByRole("heading", { level: 1, name: "SAML: Acme IdP" }).waitFor();
          const consoleUrl = page.url();
          await page.getByRole("button", { name: "Test sign-in" }).click();
          // This tab goes to the IdP (its page here answers for Jane) and comes back.
          await page.getByRole("button", { name: "Continue to svc" }).click();
          await page.waitForURL(consoleUrl);
          await page.getByText("Would create a new account (just in time) for").waitFor();
          await page.getByText("jane@acme.test", { exact: true }).first().waitFor();
          const attributes = page.getByRole("table", { name: "Attributes the identity provider sent" });
          await attributes.getByRole("cell", { name: "department", exact: true }).waitFor();
          await attributes.getByRole("cell", { name: "Engineering", exact: true }).waitFor();
          await check(page, "saml-test-result");
          // Nobody was signed in or created: the browser is still the administrator's.
          const me = await page.request.get(`${server.issuer}/profile/me`, {
            headers: { "X-Svc-Transport": "cookie" },
          });
          assert.equal(me.status(), 200);
          assert.equal((await me.json()).email, server.adminEmail);
          const jane = await http.call(
            "GET",
            `/svc-admin/users?q=${encodeURIComponent("jane@acme.test")}`,
            root,
          );
          assert.equal(jane.json.items.length, 0);
        },
      );

      await step("no CSP violation or uncaught error", () => {
        assert.deepEqual(problems, []);
      });
    } finally {
      await browser.close();
      await server.close();
      await closeIdp();
    }
  },
});
