/**
 * The newcomer's first hour in Chromium (issue 27), against a real `svc start` on a fresh data
 * folder (the embedded store, as `npm start` runs it):
 *
 * - the start output prints the console, account pages, API reference, dev mail, the gate
 *   relaxations for development and one setup link;
 * - the console's first visit shows the sign-in page without "Your session ended" and without a
 *   single 401 (nothing is asked without a session);
 * - the setup link opens "Create the first administrator"; a too-short password is refused with
 *   the policy's message; the form creates the administrator and lands signed in on "Setup is
 *   done", whose "Add a passkey now" registers a passkey (a virtual authenticator) at once, and
 *   the passkey then signs in;
 * - the link works once: opened again it says it was used;
 * - every page: axe-core finds no serious or critical violation; screenshots go to a temp folder
 *   (printed).
 *
 * It measures the time from spawning `svc start` to the signed-in console and prints it beside the
 * time the same start took to listen (a bare `svc start`).
 */
import { strict as assert } from "node:assert";
import type { Page } from "playwright-core";
import { launchChromium, REPO_ROOT } from "../support/browser.ts";
import { addVirtualAuthenticator } from "../support/passkey-server.ts";
import { childEnv, collect, FAST_SERVER_PASSWORD_ENV, LISTENING_LINE, ROOT } from "../support/server.ts";

const AXE = await Deno.readTextFile(`${REPO_ROOT}node_modules/axe-core/axe.min.js`);

async function check(page: Page, dir: string, name: string): Promise<void> {
  await page.screenshot({ path: `${dir}/first-hour-${name}.png`, fullPage: true });
  await page.evaluate(AXE);
  const violations: { id: string; impact: string }[] = await page.evaluate(
    `axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact })))`,
  );
  const serious = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  assert.deepEqual(serious, [], `${name}: ${JSON.stringify(violations)}`);
}

Deno.test({
  name: "first hour in Chromium: start output, setup link, first administrator, signed-in console",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dataDir = await Deno.makeTempDir({ prefix: "svc_first_hour_data_" });
    const screens = await Deno.makeTempDir({ prefix: "svc_first_hour_screens_" });
    const started = performance.now();
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "cli/deno.ts", "start"],
      cwd: ROOT,
      env: childEnv({ ...FAST_SERVER_PASSWORD_ENV, SVC_DATA_DIR: dataDir, SVC_PORT: "0" }),
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const lines: string[] = [];
    let listeningMs = 0;
    const { promise: ready, resolve } = Promise.withResolvers<string>();
    const stdout = collect(child.stdout, (line) => {
      lines.push(line);
      if (LISTENING_LINE.test(line)) listeningMs = performance.now() - started;
      const link = /^setup: (http\S+#\/setup\?token=\S+)$/.exec(line);
      if (link) resolve(link[1]);
    });
    const stderr = collect(child.stderr);
    const timeout = setTimeout(() => resolve(""), 90_000);
    const browser = await launchChromium();
    try {
      const link = await ready;
      clearTimeout(timeout);
      assert.ok(link, `no setup link printed:\n${lines.join("\n")}`);
      const out = lines.join("\n");
      for (
        const expected of [
          /^console: http:\/\/localhost:\d+\/svc-admin\/ui\/$/m,
          /^account pages: http:\/\/localhost:\d+\/account\/$/m,
          /^API reference: http:\/\/localhost:\d+\/openapi /m,
          /^dev mail: log/m,
          /^dev: .*SVC_ABUSE_PER_IP_LIMIT=/m,
        ]
      ) assert.match(out, expected);
      const consoleUrl = /^console: (\S+)$/m.exec(out)![1];

      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      const unauthorized: string[] = [];
      page.on("response", (res) => {
        if (res.status() === 401) unauthorized.push(res.url());
      });
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(String(error)));

      // The first visit: sign-in, no "session ended", no 401.
      await page.goto(consoleUrl);
      await page.getByRole("heading", { level: 1, name: "Sign in to svc admin" }).waitFor();
      assert.equal(await page.getByText("Your session ended").count(), 0);
      assert.deepEqual(unauthorized, []);
      await check(page, screens, "1-first-visit");

      // The setup link.
      await page.goto(link);
      await page.getByRole("heading", { level: 1, name: "Create the first administrator" }).waitFor();
      await check(page, screens, "2-setup");
      await page.getByLabel("Email").fill("admin@example.test");
      await page.getByLabel("Password", { exact: true }).fill("short");
      await page.getByLabel("Password again").fill("short");
      await page.getByRole("button", { name: "Create administrator and sign in" }).click();
      await page.getByText("The password must have at least 8 characters.").first().waitFor();
      await check(page, screens, "3-setup-policy");
      await page.getByLabel("Password", { exact: true }).fill("the first admin's password");
      await page.getByLabel("Password again").fill("the first admin's password");
      await page.getByRole("button", { name: "Create administrator and sign in" }).click();
      await page.getByRole("heading", { level: 1, name: "Setup is done" }).waitFor();
      const signedInMs = performance.now() - started;
      await page.getByText("admin@example.test").first().waitFor();
      await check(page, screens, "4-signed-in");
      assert.ok(!page.url().includes("token="), "the token left the address bar");

      // A passkey right after setup, with the ordinary enrollment; it then signs in.
      const cdp = await context.newCDPSession(page);
      await cdp.send("WebAuthn.enable", { enableUI: false });
      await addVirtualAuthenticator(cdp, { userVerification: true });
      await page.getByLabel("Name (optional)").fill("laptop");
      await page.getByRole("button", { name: "Add a passkey now" }).click();
      await page.getByText("Passkey added.").waitFor();
      await check(page, screens, "4b-passkey-added");
      await page.getByRole("link", { name: "Go to the overview" }).click();
      await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByRole("button", { name: "Sign in with a passkey" }).click();
      await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
      await page.getByText("admin@example.test").first().waitFor();

      // The link works once.
      const other = await (await browser.newContext()).newPage();
      await other.goto(link);
      await other.getByRole("heading", { level: 1, name: "Create the first administrator" }).waitFor();
      await other.getByLabel("Email").fill("second@example.test");
      await other.getByLabel("Password", { exact: true }).fill("another long password");
      await other.getByLabel("Password again").fill("another long password");
      await other.getByRole("button", { name: "Create administrator and sign in" }).click();
      await other.getByText(/This setup link was used or has expired/).waitFor();
      await check(other, screens, "5-link-used");
      assert.deepEqual(errors, []);

      console.log(
        `first hour: svc start listening after ${Math.round(listeningMs)} ms (a bare svc start); ` +
          `signed-in console after ${
            Math.round(signedInMs)
          } ms from the same start; screenshots in ${screens}`,
      );
    } finally {
      clearTimeout(timeout);
      await browser.close();
      try {
        child.kill("SIGTERM");
      } catch { /* exited */ }
      const status = await child.status;
      await stdout;
      const err = await stderr;
      await Deno.remove(dataDir, { recursive: true });
      assert.equal(status.code, 0, err);
    }
  },
});
