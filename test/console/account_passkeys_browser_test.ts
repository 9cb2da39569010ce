/**
 * Passkeys on the hosted pages (issue 14), in Debian's Chromium with a CDP virtual authenticator
 * against the real server, the invitation mailed over SMTP to a test SMTP server: an invitation
 * accepted with a passkey and no password (a passkey-only account), sign-in through the passkey
 * autofill of the email field (WebAuthn conditional mediation), and a passkey renamed on the
 * account page. The new page states (the invitation's passkey choice, the rename form): no serious
 * or critical axe-core violation, a screenshot.
 */
import { strict as assert } from "node:assert";
import { checkPage } from "../support/axe.ts";
import { launchChromium } from "../support/browser.ts";
import { addVirtualAuthenticator } from "../support/passkey-server.ts";
import { httpClient, startTestServer } from "../support/server.ts";
import { startTestSmtp } from "../support/smtp.ts";

Deno.test({
  name: "hosted pages: accept an invitation with a passkey, sign in by passkey autofill, rename it",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const smtp = await startTestSmtp();
    const server = await startTestServer({
      SVC_SMTP_HOST: "127.0.0.1",
      SVC_SMTP_PORT: String(smtp.port),
      SVC_SMTP_SECURITY: "none",
      SVC_MAIL_POLL_INTERVAL_MS: "100",
    });
    const browser = await launchChromium();
    try {
      const http = httpClient(server.url);
      const adminToken = await http.signIn(server.adminEmail, server.adminPassword);
      const email = "passkey.person@example.test";
      const invited = await http.call("POST", "/svc-admin/users/invite", adminToken, { email });
      assert.equal(invited.status, 201, JSON.stringify(invited.json));

      const context = await browser.newContext({ locale: "en-US" });
      const page = await context.newPage();
      page.setDefaultTimeout(20_000);
      const problems: string[] = [];
      page.on("pageerror", (e) => problems.push(String(e)));
      const cdp = await context.newCDPSession(page);
      await cdp.send("WebAuthn.enable", { enableUI: false });
      const authenticatorId = await addVirtualAuthenticator(cdp, { userVerification: true });

      // The invitation: accepted with a passkey, no password chosen.
      const invitation = await smtp.waitFor((m) => m.to.includes(email) && /invited/i.test(m.subject));
      const link = /https?:\/\/\S+\/account\/accept-invitation\?token=\S+/.exec(invitation.text)![0];
      await page.goto(link);
      await page.waitForSelector("#accept-passkey");
      await checkPage(page, "accept-invitation-passkey");
      await page.fill("#display-name", "Passkey Person");
      await page.click("#accept-passkey");
      await page.waitForSelector("text=Your account is ready");
      const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
      assert.equal(credentials.length, 1, "one passkey on the authenticator");
      assert.equal(credentials[0].isResidentCredential, true);

      // Sign-in: the email field offers passkeys (conditional mediation). Chromium's virtual
      // authenticator answers a pending conditional request by itself, so the page signs in with
      // no click at all; a spy records how navigator.credentials.get was called (sessionStorage
      // outlives the navigation to the account page).
      assert.equal(
        await page.evaluate("PublicKeyCredential.isConditionalMediationAvailable()"),
        true,
        "Chromium offers passkey autofill",
      );
      await page.addInitScript(`{
        const get = navigator.credentials.get.bind(navigator.credentials);
        navigator.credentials.get = (options) => {
          const seen = JSON.parse(sessionStorage.getItem("mediations") ?? "[]");
          seen.push(String(options?.mediation ?? "none"));
          sessionStorage.setItem("mediations", JSON.stringify(seen));
          return get(options);
        };
      }`);
      await page.click("a[href^='sign-in']");
      await page.waitForSelector("#profile-email");
      assert.equal(await page.textContent("#profile-email"), email);
      assert.deepEqual(JSON.parse(await page.evaluate(`sessionStorage.getItem("mediations")`) as string), [
        "conditional",
      ]);
      const me = await page.evaluate(`fetch("/profile/me").then((r) => r.json())`) as { displayName: string };
      assert.equal(me.displayName, "Passkey Person");

      // Rename the passkey on the account page.
      await page.waitForSelector("#passkeys li");
      await page.click("#passkeys button:has-text('Rename')");
      await page.waitForSelector("#passkey-rename");
      await checkPage(page, "passkey-rename");
      await page.fill("#passkey-rename", "Office laptop");
      await page.click("#passkeys button:has-text('Save')");
      await page.waitForSelector("text=The passkey is renamed");
      await page.waitForSelector("#passkeys >> text=Office laptop");

      // A passkey-only account: the invitation link is spent, and no password signs in.
      await page.goto(link);
      await page.click("#accept-passkey");
      await page.waitForSelector(".alert.error");
      const login = await http.call("POST", "/auth/login", null, { email, password: "anything long enough" });
      assert.equal(login.status, 401);
      assert.deepEqual(problems, []);
    } finally {
      await browser.close();
      await server.close();
      await smtp.stop();
    }
  },
});
