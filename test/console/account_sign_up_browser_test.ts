/**
 * Self sign-up and realm branding on the hosted pages (issue 14), in Debian's Chromium against
 * the real server, mail over SMTP to a test SMTP server: the realm opens sign-up and sets its
 * branding through the admin API; the sign-in page offers "Create an account"; a new address gets
 * a branded link and finishes with a password; another finishes with a passkey only (CDP virtual
 * authenticator); an address that has an account gets the same page answer and its owner a
 * "someone tried to sign up" mail; the pages carry the realm's colour (set through the CSSOM, no
 * inline style) and product name. Every new page: axe-core, a screenshot.
 */
import { strict as assert } from "node:assert";
import { checkPage } from "../support/axe.ts";
import { launchChromium } from "../support/browser.ts";
import { addVirtualAuthenticator } from "../support/passkey-server.ts";
import { httpClient, startTestServer } from "../support/server.ts";
import { startTestSmtp } from "../support/smtp.ts";

Deno.test({
  name: "hosted pages: self sign-up (password, passkey only, existing address) with realm branding",
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
      const origin = server.issuer;
      const http = httpClient(server.url);
      const adminToken = await http.signIn(server.adminEmail, server.adminPassword);
      const realms = await http.call("GET", "/svc-admin/realms", adminToken);
      const realmId = realms.json.items.find((r: { isDefault: boolean }) => r.isDefault).id;
      const patched = await http.call("PATCH", `/svc-admin/realms/${realmId}`, adminToken, {
        selfSignUp: true,
        branding: { productName: "Acme ID", color: "#aa3300", logoUrl: null },
      });
      assert.equal(patched.status, 200, JSON.stringify(patched.json));

      const context = await browser.newContext({ locale: "en-US" });
      const page = await context.newPage();
      page.setDefaultTimeout(20_000);
      const problems: string[] = [];
      page.on("pageerror", (e) => problems.push(String(e)));
      page.on("console", (m) => {
        if (m.type() === "error" && /Content Security Policy/i.test(m.text())) problems.push(m.text());
      });

      // Sign-in offers sign-up; the page wears the realm's colour and name.
      await page.goto(`${origin}/account/sign-in`);
      await page.waitForSelector("text=Create an account");
      assert.equal(
        await page.evaluate(`getComputedStyle(document.documentElement).getPropertyValue("--brand").trim()`),
        "#aa3300",
      );
      assert.equal((await page.textContent(".brand"))?.trim(), "Acme ID");
      await page.click("text=Create an account");
      await page.waitForSelector("text=Send the link");
      await checkPage(page, "sign-up");

      // A new address: the link comes by mail, branded; the person chooses a password.
      const email = "signed.up@example.test";
      await page.fill("#email", email);
      await page.click("button[type=submit]");
      await page.waitForSelector("text=A link is on its way");
      await checkPage(page, "sign-up-sent");
      const mail = await smtp.waitFor((m) =>
        m.to.includes(email) && /Finish creating your Acme ID account/.test(m.subject)
      );
      assert.match(mail.html, /#aa3300/);
      const link = /https?:\/\/\S+\/account\/complete-sign-up\?token=\S+/.exec(mail.text)![0];
      await page.goto(link);
      await page.waitForSelector("#new-password");
      await checkPage(page, "complete-sign-up");
      await page.fill("#new-password", "my own new password 1");
      await page.fill("#confirm-password", "my own new password 1");
      await page.click("button[type=submit]");
      await page.waitForSelector("text=Your account is ready");
      await page.click("a[href^='sign-in']");
      await page.waitForSelector("#password");
      await page.fill("#password", "my own new password 1");
      await page.click("button[type=submit]");
      await page.waitForSelector("#profile-email");
      assert.equal(await page.textContent("#profile-email"), email);
      // The account page (no ?realm=) wears the signed-in user's realm branding too.
      assert.equal(
        await page.evaluate(`getComputedStyle(document.documentElement).getPropertyValue("--brand").trim()`),
        "#aa3300",
      );
      assert.match((await page.textContent(".brand")) ?? "", /^Acme ID/);
      await page.click("text=Sign out");
      await page.waitForSelector("#password");

      // An address that has an account: the same answer; its owner hears someone tried.
      await page.goto(`${origin}/account/sign-up`);
      await page.fill("#email", server.adminEmail);
      await page.click("button[type=submit]");
      await page.waitForSelector("text=A link is on its way");
      const tried = await smtp.waitFor((m) =>
        m.to.includes(server.adminEmail) && /Someone tried to sign up to Acme ID/.test(m.subject)
      );
      assert.ok(!/token=/.test(tried.text), "no link that could change the account");

      // Passkey only: no password at all.
      const other = await browser.newContext({ locale: "en-US" });
      const passkeyPage = await other.newPage();
      passkeyPage.setDefaultTimeout(20_000);
      const cdp = await other.newCDPSession(passkeyPage);
      await cdp.send("WebAuthn.enable", { enableUI: false });
      await addVirtualAuthenticator(cdp, { userVerification: true });
      const passkeyEmail = "passkey.only@example.test";
      await passkeyPage.goto(`${origin}/account/sign-up`);
      await passkeyPage.fill("#email", passkeyEmail);
      await passkeyPage.click("button[type=submit]");
      await passkeyPage.waitForSelector("text=A link is on its way");
      const passkeyMail = await smtp.waitFor((m) =>
        m.to.includes(passkeyEmail) && /Finish creating/.test(m.subject)
      );
      await passkeyPage.goto(
        /https?:\/\/\S+\/account\/complete-sign-up\?token=\S+/.exec(passkeyMail.text)![0],
      );
      await passkeyPage.click("#accept-passkey");
      await passkeyPage.waitForSelector("text=Your account is ready");
      const login = await http.call("POST", "/auth/login", null, {
        email: passkeyEmail,
        password: "whatever it is",
      });
      assert.equal(login.status, 401, "no password");
      // Signing in by passkey (autofill or the button) lands on the account.
      await passkeyPage.click("a[href^='sign-in']");
      await passkeyPage.waitForSelector("#profile-email");
      assert.equal(await passkeyPage.textContent("#profile-email"), passkeyEmail);
      await other.close();

      // Closed again: the page says so, the API refuses.
      await http.call("PATCH", `/svc-admin/realms/${realmId}`, adminToken, { selfSignUp: false });
      await page.goto(`${origin}/account/sign-up`);
      await page.waitForSelector("text=by invitation only");
      await checkPage(page, "sign-up-closed");
      await page.goto(`${origin}/account/sign-in`);
      await page.waitForSelector("#password");
      assert.equal(await page.isVisible("text=Create an account"), false, "no sign-up link when closed");
      assert.deepEqual(problems, []);
    } finally {
      await browser.close();
      await server.close();
      await smtp.stop();
    }
  },
});
