/**
 * SAML sign-in in headless Chromium against the real server (`svc start` with `SVC_PLUGINS=saml`
 * on a fresh Postgres database), samlify as the organization's IdP behind a page served here:
 *
 * - IdP-initiated: the IdP's page auto-posts an unsolicited, signed Response to svc's ACS; the
 *   browser ends signed in on the account page as the IdP's user (provisioned just in time);
 * - SP-initiated with an encrypted assertion: svc's `start` redirects to the IdP with an
 *   AuthnRequest; the IdP reads svc's SP metadata (`KeyDescriptor use="encryption"`, from the key
 *   the administrator made through the API), encrypts the assertion to that certificate and
 *   auto-posts it with the RelayState; the browser ends signed in on the account page;
 * - the same unsolicited Response posted again (replay) shows svc's one neutral page;
 * - every page: axe-core finds no serious or critical violation, no uncaught error, and a
 *   screenshot goes to `.tmp/screens/saml-*.png`.
 */
import { strict as assert } from "node:assert";
import type { Page } from "playwright-core";
import { launchChromium, REPO_ROOT } from "../../support/browser.ts";
import { httpClient, startTestServer } from "../../support/server.ts";
import { fixture, testIdp } from "./idp.ts";

async function inflateRaw(base64: string): Promise<string> {
  const bytes = Uint8Array.from(atob(base64), (ch) => ch.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return await new Response(stream).text();
}

const AXE = await Deno.readTextFile(`${REPO_ROOT}node_modules/axe-core/axe.min.js`);
const SCREENS = `${REPO_ROOT}.tmp/screens`;

async function check(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${SCREENS}/saml-${name}.png`, fullPage: true });
  await page.evaluate(AXE);
  const violations: { id: string; impact: string; nodes: string[] }[] = await page.evaluate(
    `axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) =>
      ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) })))`,
  );
  const serious = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  assert.deepEqual(serious, [], `${name}: ${JSON.stringify(serious)}`);
}

const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** The IdP's page posting a response to the ACS by itself (a button without script). */
function autoPost(acsUrl: string, xml: string, relayState: string | null): Response {
  const response = btoa(String.fromCharCode(...new TextEncoder().encode(xml)));
  return new Response(
    `<!doctype html><html lang="en"><head><title>Test IdP</title></head><body><main>
      <h1>Signing you in</h1>
      <form method="post" action="${escapeHtml(acsUrl)}">
        <input type="hidden" name="SAMLResponse" value="${response}">
        ${
      relayState === null ? "" : `<input type="hidden" name="RelayState" value="${escapeHtml(relayState)}">`
    }
        <button>Continue to svc</button></form></main>
      <script>document.forms[0].submit();</script></body></html>`,
    { headers: { "Content-Type": "text/html; charset=utf-8" } },
  );
}

Deno.test({
  name: "SAML in Chromium: IdP-initiated and SP-initiated (encrypted) sign-in to the account page",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    await Deno.mkdir(SCREENS, { recursive: true });
    const server = await startTestServer({ SVC_PLUGINS: "saml" });
    const browser = await launchChromium();
    let closeIdp: () => Promise<void> = () => Promise.resolve();
    let failed = false;
    let current: Page | null = null;
    const step = async (name: string, fn: () => Promise<void> | void) => {
      const ok = await t.step({ name, ignore: failed, fn });
      if (!ok && !failed) {
        failed = true;
        await current?.screenshot({ path: `${SCREENS}/saml-FAILED.png` }).catch(() => {});
      }
    };
    try {
      const http = httpClient(server.url);
      const root = await http.signIn(server.adminEmail, server.adminPassword);
      const call = async (method: string, path: string, body?: unknown) => {
        const res = await http.call(method, path, root, body);
        assert.ok(res.status < 300, `${path}: ${res.status} ${JSON.stringify(res.json)}`);
        return res.json;
      };
      const org = await call("POST", "/svc-admin/organizations", { name: "acme", displayName: "Acme Corp" });
      const domain = await call("POST", `/svc-admin/organizations/${org.id}/domains`, { value: "acme.test" });
      await call("POST", `/svc-admin/organizations/${org.id}/domains/${domain.id}/verify`, {
        override: true,
        reason: "test",
      });
      const me = (await http.call("GET", `/svc-admin/users?q=${encodeURIComponent(server.adminEmail)}`, root))
        .json.items[0];
      const role = await call("POST", "/svc-admin/roles", {
        key: "sso-admin",
        displayName: "SSO administrator",
        grants: [{ pattern: "saml:global:*", effect: "Allow" }],
      });
      await call("POST", "/svc-admin/role-assignments", {
        roleId: role.id,
        principalKind: "User",
        principalId: me.id,
      });

      // The IdP, on localhost like svc (the same site: over http the relay cookie is SameSite=Lax).
      let connection: { id: string; spEntityId: string; acsUrl: string; metadataUrl: string } | null = null;
      let unsolicited = "";
      const idpServer = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
        const url = new URL(req.url);
        if (connection === null) return new Response(null, { status: 503 });
        const sp = { entityId: connection.spEntityId, acsUrl: connection.acsUrl };
        if (url.pathname === "/unsolicited") {
          unsolicited = await idp.respond(sp, {
            requestId: null,
            nameId: "ida@acme.test",
            attributes: { email: "ida@acme.test", displayName: "Ida Initiated" },
          });
          return autoPost(connection.acsUrl, unsolicited, null);
        }
        if (url.pathname === "/replay") return autoPost(connection.acsUrl, unsolicited, null);
        if (url.pathname !== "/sso") return new Response(null, { status: 404 });
        const request = await inflateRaw(url.searchParams.get("SAMLRequest") ?? "");
        const requestId = /ID="([^"]+)"/.exec(request)![1];
        // The IdP encrypts to the certificate svc's SP metadata publishes.
        const metadata = await (await fetch(connection.metadataUrl.replace(server.issuer, server.url)))
          .text();
        const cert =
          /<md:KeyDescriptor use="encryption">[\s\S]*?<ds:X509Certificate>([^<]+)</.exec(metadata)![1];
        const xml = await idp.respond(sp, {
          requestId,
          nameId: "sam@acme.test",
          attributes: { email: "sam@acme.test", displayName: "Sam Started" },
          encrypt: { cert },
        });
        assert.doesNotMatch(xml, /sam@acme\.test/);
        return autoPost(connection.acsUrl, xml, url.searchParams.get("RelayState"));
      });
      closeIdp = () => idpServer.shutdown();
      const idpBase = `http://localhost:${idpServer.addr.port}`;
      const idp = testIdp("https://idp.acme.test/saml", fixture("idp"), `${idpBase}/sso`);
      connection = await call("POST", "/svc-admin/saml/connections", {
        orgId: org.id,
        displayName: "Acme IdP",
        idpMetadataXml: idp.metadata(),
        jitProvisioning: true,
        allowIdpInitiated: true,
        makeDefault: true,
      });
      await call("POST", `/svc-admin/saml/connections/${connection!.id}/encryption-keys`, {});

      const problems: string[] = [];
      const fresh = async () => {
        const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        context.setDefaultTimeout(15_000);
        const page = await context.newPage();
        page.on("pageerror", (error) => problems.push(`page error: ${error}`));
        current = page;
        return page;
      };

      await step(
        "IdP-initiated: the IdP's page posts to the ACS; signed in on the account page",
        async () => {
          const page = await fresh();
          await page.goto(`${idpBase}/unsolicited`);
          await page.waitForURL(`${server.issuer}/account/`);
          await page.waitForSelector("#profile-email");
          assert.equal(await page.textContent("#profile-email"), "ida@acme.test");
          await check(page, "idp-initiated-account");
          await page.context().close();
        },
      );

      await step("the same response again (replay): one neutral page", async () => {
        const page = await fresh();
        const answer = page.waitForResponse((res) => res.url() === connection!.acsUrl);
        await page.goto(`${idpBase}/replay`);
        assert.equal((await answer).status(), 403);
        await page.getByRole("heading", { level: 1, name: "Sign-in did not work" }).waitFor();
        assert.equal(await page.textContent("#error-code"), "saml_sign_in_refused");
        await check(page, "refused");
        await page.context().close();
      });

      await step("SP-initiated with an encrypted assertion: signed in on the account page", async () => {
        const page = await fresh();
        await page.goto(`${server.issuer}/saml/${connection!.id}/start`);
        await page.waitForURL(`${server.issuer}/account/`);
        await page.waitForSelector("#profile-email");
        assert.equal(await page.textContent("#profile-email"), "sam@acme.test");
        await check(page, "sp-initiated-encrypted-account");
        await page.context().close();
      });

      await step("no uncaught error", () => {
        assert.deepEqual(problems, []);
      });
    } finally {
      await browser.close();
      await server.close();
      await closeIdp();
    }
  },
});
