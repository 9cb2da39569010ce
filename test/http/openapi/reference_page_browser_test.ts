/**
 * The API reference page (`GET /openapi`) in headless Chromium, served by the full app over
 * HTTP: it renders every operation of the served document, with no console error and no
 * Content-Security-Policy violation, and axe-core finds no serious or critical accessibility
 * violation. A screenshot goes to `.tmp/screens/openapi.png` for reviewers.
 *
 * axe-core is loaded from `node_modules/axe-core/axe.min.js` (the `axe-core` dev dependency);
 * without it the test fails and says so.
 */
import { strict as assert } from "node:assert";
import { adminBed } from "../../support/admin.ts";
import { launchChromium, REPO_ROOT } from "../../support/browser.ts";

const AXE_PATH = `${REPO_ROOT}node_modules/axe-core/axe.min.js`;
const SCREENSHOT = `${REPO_ROOT}.tmp/screens/openapi.png`;

async function axeSource(): Promise<string> {
  try {
    return await Deno.readTextFile(AXE_PATH);
  } catch (error) {
    throw new Error(
      `axe-core is missing (${AXE_PATH}: ${(error as Error).name}): add it as a dev dependency with ` +
        "`npm install --save-dev --save-exact axe-core`",
    );
  }
}

Deno.test({
  name:
    "the API reference page renders every operation, with no console error, CSP violation or serious a11y issue",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const axe = await axeSource();
    const admin = await adminBed();
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, admin.app.fetch);
    const origin = `http://127.0.0.1:${server.addr.port}`;
    const browser = await launchChromium();
    try {
      const doc = await (await fetch(`${origin}/openapi.json`)).json();
      const operations = Object.values(doc.paths as Record<string, Record<string, unknown>>)
        .reduce((n, item) => n + Object.keys(item).length, 0);

      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const consoleErrors: string[] = [];
      page.on("console", (message) => {
        if (message.type() === "error") consoleErrors.push(message.text());
      });
      page.on("pageerror", (error) => consoleErrors.push(String(error)));
      page.on("response", (response) => {
        if (response.status() >= 400) consoleErrors.push(`${response.status()} ${response.url()}`);
      });
      // Browser-side code as text (this file is type-checked without the DOM library).
      await page.addInitScript({
        content: `globalThis.__csp = [];
          document.addEventListener("securitypolicyviolation", (e) => {
            globalThis.__csp.push(e.violatedDirective + " " + e.blockedURI);
          });`,
      });

      const res = await page.goto(`${origin}/openapi`);
      assert.equal(res?.status(), 200);
      assert.match(res!.headers()["content-security-policy"] ?? "", /script-src 'self'/);
      await page.waitForSelector("section.op");
      const rendered = await page.locator("section.op").count();
      assert.equal(rendered, operations, "one section per documented operation");
      assert.ok(
        await page.locator("#post_svc-admin_service-accounts").isVisible(),
        "the service-account creation is rendered",
      );

      // The filter narrows the list.
      await page.fill("#filter", "signing-keys");
      assert.equal(await page.locator("section.op:visible").count(), 2);
      await page.fill("#filter", "");

      await Deno.mkdir(`${REPO_ROOT}.tmp/screens`, { recursive: true });
      await page.screenshot({ path: SCREENSHOT });

      // Injected through the DevTools protocol, which the page's CSP does not govern.
      await page.evaluate(axe);
      const violations: { id: string; impact: string; nodes: number }[] = await page.evaluate(
        `axe.run(document, { resultTypes: ["violations"] }).then((result) =>
          result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length })))`,
      );
      const serious = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
      assert.deepEqual(serious, [], JSON.stringify(violations));

      const csp: string[] = await page.evaluate("globalThis.__csp");
      assert.deepEqual(csp, [], "CSP violations");
      assert.deepEqual(consoleErrors, [], "console errors");
    } finally {
      await browser.close();
      await server.shutdown();
      await admin.close();
    }
  },
});
