/**
 * The admin console in headless Chromium against the real server (`svc start` on a fresh
 * Postgres database), one server and one browser for the whole suite:
 *
 * - end to end: sign in as the bootstrap administrator (password), create a user, create a role
 *   with a conditioned grant, assign it, explain a decision for that user and see the
 *   `ConditionFailed` verdict, create a webhook and see the test delivery succeed in the log,
 *   verify the audit chain, sign out;
 * - a passkey registered on the console's own page (CDP virtual authenticator) signs in, passkey
 *   first;
 * - an organization administrator sees only its organization: realm-wide pages are not offered,
 *   users of another organization are not listed, and a realm-wide page reached by URL shows the
 *   API's 403 as such;
 * - every page: axe-core finds no serious or critical violation, no Content-Security-Policy
 *   violation and no uncaught error, and a 1280×800 screenshot goes to `.tmp/screens/console-*.png`.
 */
import { strict as assert } from "node:assert";
import type { BrowserContext, Page } from "playwright-core";
import { launchChromium, REPO_ROOT } from "../support/browser.ts";
import { addVirtualAuthenticator } from "../support/passkey-server.ts";
import {
  childEnv,
  FAST_SERVER_PASSWORD_ENV,
  httpClient,
  ROOT,
  serverCommand,
  startTestServer,
} from "../support/server.ts";
import { decodeBase32 } from "../../core/totp/base32.ts";
import { totpCode } from "../../core/totp/totp.ts";

const AXE = await Deno.readTextFile(`${REPO_ROOT}node_modules/axe-core/axe.min.js`);
const SCREENS = `${REPO_ROOT}.tmp/screens`;
const VIEWPORT = { width: 1280, height: 800 };

/** Watches a page for CSP violations and uncaught errors. */
async function watch(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error}`));
  page.on("console", (message) => {
    if (message.type() === "error" && /Content Security Policy|Refused to/i.test(message.text())) {
      problems.push(`csp: ${message.text()}`);
    }
  });
  await page.addInitScript({
    content: `document.addEventListener("securitypolicyviolation", (e) => {
      console.error("Refused to " + e.violatedDirective + " " + e.blockedURI);
    });`,
  });
  return { page, problems };
}

/** axe-core on the page (no serious or critical violation) and a screenshot. */
async function check(page: Page, name: string, checked: string[]): Promise<void> {
  // Every panel has loaded (polling from here: the page's CSP forbids evaluated strings).
  for (let i = 0; i < 100 && await page.getByText("Loading…", { exact: true }).count() > 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  await page.screenshot({ path: `${SCREENS}/console-${name}.png` });
  await page.evaluate(AXE);
  const violations: { id: string; impact: string; nodes: string[] }[] = await page.evaluate(
    `axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) =>
      ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) })))`,
  );
  const serious = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  assert.deepEqual(serious, [], `${name}: ${JSON.stringify(serious)}`);
  checked.push(name);
}

async function go(page: Page, url: string, heading: string): Promise<void> {
  await page.goto(url);
  await page.getByRole("heading", { level: 1, name: heading }).waitFor();
}

Deno.test({
  name:
    "admin console in Chromium: end to end, passkey sign-in, organization isolation, a11y and screenshots",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    await Deno.mkdir(SCREENS, { recursive: true });
    await Deno.remove(`${SCREENS}/console-FAILED.png`).catch(() => {});
    const hooks: string[] = [];
    const receiver = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
      hooks.push(req.headers.get("X-Svc-Event") ?? "");
      await req.text();
      return new Response(null, { status: new URL(req.url).pathname === "/fail" ? 500 : 204 });
    });
    const server = await startTestServer({
      SVC_WEBHOOK_ALLOW_PRIVATE_RECEIVERS: "127.0.0.1",
      // One quick retry, then the dead-letter queue (the replay is tested).
      SVC_WEBHOOK_RETRY_SCHEDULE_SECONDS: "1",
    });
    const browser = await launchChromium();
    const base = `${server.issuer}/svc-admin/ui/`;
    const checked: string[] = [];
    // The steps build on each other: after a failure the rest are skipped (reported, not run).
    let failed = false;
    let current: Page | null = null;
    const step = async (name: string, fn: () => Promise<void> | void) => {
      const ok = await t.step({ name, ignore: failed, fn });
      if (!ok && !failed) {
        failed = true;
        await current?.screenshot({ path: `${SCREENS}/console-FAILED.png` }).catch(() => {});
      }
    };
    try {
      const context = await browser.newContext({ viewport: VIEWPORT });
      context.setDefaultTimeout(15_000);
      const { page, problems } = await watch(context);
      current = page;
      const realmAdmin = { user: "", role: "" };

      await step("the shell is served with its CSP and the sign-in page comes up", async () => {
        const res = await page.goto(base);
        assert.equal(res?.status(), 200);
        assert.match(res!.headers()["content-security-policy"] ?? "", /script-src 'self'/);
        await page.getByRole("heading", { name: "Sign in to svc admin" }).waitFor();
        await check(page, "sign-in", checked);
      });

      await step("a wrong password is refused next to the form", async () => {
        await page.getByLabel("Email").fill(server.adminEmail);
        await page.getByLabel("Password", { exact: true }).fill("wrong password");
        await page.getByRole("button", { name: "Sign in", exact: true }).click();
        await page.getByRole("alert").filter({ hasText: "invalid_credentials" }).waitFor();
      });

      await step("the bootstrap administrator signs in with a password", async () => {
        await page.getByLabel("Password", { exact: true }).fill(server.adminPassword);
        await page.getByRole("button", { name: "Sign in", exact: true }).click();
        await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
        await page.getByText("Status: ready").waitFor();
        // The saml and scim plugins are not enabled here: their pages are not offered.
        const nav = page.getByRole("navigation", { name: "Console" });
        await nav.getByRole("link", { name: "Users" }).waitFor();
        for (const absent of ["SAML sign-in", "SCIM provisioning"]) {
          assert.equal(await nav.getByRole("link", { name: absent }).count(), 0, `${absent} is not offered`);
        }
        await check(page, "overview", checked);
      });

      await step("keyboard: the skip link comes first and moves the focus to the page", async () => {
        await page.reload();
        await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
        await page.keyboard.press("Tab");
        const skip = page.getByRole("link", { name: "Skip to content" });
        assert.equal(await skip.evaluate((el) => el === (globalThis as any).document.activeElement), true);
        await page.keyboard.press("Enter");
        assert.equal(
          await page.locator("main#main").evaluate((el) => el === (globalThis as any).document.activeElement),
          true,
        );
      });

      await step("create a user", async () => {
        await go(page, `${base}#/users`, "Users");
        const form = page.getByRole("form", { name: "Create a user" });
        await form.getByLabel("Email").fill("alice@example.test");
        await form.getByLabel("Display name").fill("Alice");
        await form.getByLabel("Password").fill("alice password 1");
        await form.getByRole("button", { name: "Create user" }).click();
        await page.getByRole("heading", { name: "alice@example.test" }).waitFor();
        realmAdmin.user = page.url().split("/users/")[1];
        await page.getByRole("heading", { name: "Sessions" }).waitFor();
        await check(page, "user-detail", checked);
        await go(page, `${base}#/users`, "Users");
        await page.getByRole("link", { name: "alice@example.test" }).waitFor();
        await check(page, "users", checked);
      });

      await step("invite a user; edit a user's profile", async () => {
        const invite = page.getByRole("form", { name: "Invite a user" });
        await invite.getByLabel("Email").fill("dave@example.test");
        await invite.getByRole("button", { name: "Send invitation" }).click();
        await page.getByText("Invitation sent to dave@example.test").waitFor();
        // The list refreshes, and an invitation not yet accepted reads as such (issue 27).
        await page.getByRole("row").filter({ hasText: "dave@example.test" }).getByRole("cell", {
          name: "Invited",
        })
          .waitFor();
        // So does the invited user's own page.
        await page.getByRole("link", { name: "dave@example.test" }).click();
        await page.getByRole("heading", { level: 2, name: "dave@example.test" }).waitFor();
        await page.locator("[data-status]").filter({ hasText: "Invited" }).waitFor();
        await go(page, `${base}#/users/${realmAdmin.user}`, "User");
        await page.getByRole("heading", { level: 2, name: "alice@example.test" }).waitFor();
        assert.equal(await page.locator("[data-status]").textContent(), "Active");
        const profile = page.getByRole("form", { name: "Profile" });
        await profile.getByLabel("Display name").fill("Alice Liddell");
        await profile.getByLabel("Attributes (JSON)").fill('{"department": "research"}');
        await profile.getByRole("button", { name: "Save profile" }).click();
        await profile.getByText("Saved.").waitFor();
      });

      await step("suspend and reactivate the user, reset its factors", async () => {
        await go(page, `${base}#/users/${realmAdmin.user}`, "User");
        await page.getByRole("button", { name: "Suspend" }).click();
        const dialog = page.getByRole("dialog");
        await dialog.getByLabel("Reason").fill("suspicious activity");
        await dialog.getByRole("button", { name: "Suspend" }).click();
        await page.getByRole("button", { name: "Reactivate" }).click();
        await page.getByRole("button", { name: "Suspend" }).waitFor();
        const reset = page.getByRole("form", { name: "Factors" });
        await reset.getByLabel("Reason").fill("lost phone");
        await reset.getByRole("button", { name: "Reset factors" }).click();
        // The user has no factor: the reset removes nothing, and a reset that changes nothing records
        // nothing (issue 24); the suspension and the reactivation are in the user's security events.
        await page.getByText("Reset: TOTP none, email OTP none, 0 passkeys, 0 recovery codes.").waitFor();
        await page.reload();
        await page.getByRole("heading", { name: "Security events" }).waitFor();
        await page.getByRole("cell", { name: "user.suspended" }).first().waitFor();
        await page.getByRole("cell", { name: "user.reactivated" }).first().waitFor();
        assert.equal(await page.getByRole("cell", { name: "user.factors_reset" }).count(), 0);
      });

      await step(
        "create a role with a conditioned grant; the engine's message shows as it is typed",
        async () => {
          await go(page, `${base}#/roles`, "Roles and grants");
          const form = page.getByRole("form", { name: "Create a role with its grants" });
          await form.getByLabel("Key").fill("doc-reader");
          await form.getByLabel("Display name").fill("Document reader");
          await form.getByLabel("Permission pattern").fill("docs:*:read");
          const condition = form.getByLabel("Condition document v1 (JSON)");
          await condition.fill(
            '{"version": 2, "condition": {"op": "eq", "attr": "resource.classification"}}',
          );
          assert.equal(await condition.getAttribute("aria-invalid"), "true");
          await form.getByLabel("Attribute").fill("resource.classification");
          await form.getByLabel("Value (JSON or text)").fill("public");
          await condition.fill("");
          await form.getByRole("button", { name: "Add comparison" }).click();
          await form.getByText("Valid condition.").waitFor();
          assert.deepEqual(JSON.parse(await condition.inputValue()), {
            version: 1,
            condition: { op: "eq", attr: "resource.classification", value: "public" },
          });
          await check(page, "roles", checked);
          const pattern = form.getByLabel("Permission pattern");
          await pattern.fill("docs-read");
          await form.getByRole("button", { name: "Create role" }).click();
          // The engine's refusal lands on the field.
          await form.locator(".field-error").first().waitFor();
          assert.equal(await pattern.getAttribute("aria-invalid"), "true");
          await pattern.fill("docs:*:read");
          await form.getByRole("button", { name: "Create role" }).click();
          await page.getByRole("heading", { name: /Document reader/ }).waitFor();
          realmAdmin.role = page.url().split("/roles/")[1];
          await page.locator("pre.json").filter({ hasText: '"attr":"resource.classification"' }).waitFor();
          const addGrant = page.getByRole("form", { name: "Add a grant" });
          assert.equal(await addGrant.getByLabel("Condition document v1 (JSON)").inputValue(), "");
          // A grant added with a condition leaves the form empty: the next one carries none (issue 27).
          await addGrant.getByLabel("Permission pattern").fill("docs:*:list");
          await addGrant.getByLabel("Attribute").fill("resource.owner");
          await addGrant.getByLabel("Value (JSON or text)").fill("me");
          await addGrant.getByRole("button", { name: "Add comparison" }).click();
          await addGrant.getByText("Valid condition.").waitFor();
          await addGrant.getByRole("button", { name: "Add grant" }).click();
          await page.getByRole("cell", { name: "docs:*:list" }).waitFor();
          await addGrant.getByText("No condition: the grant always applies.").waitFor();
          assert.equal(await addGrant.getByLabel("Condition document v1 (JSON)").inputValue(), "");
        },
      );

      await step("assign it to the user", async () => {
        const form = page.getByRole("form", { name: "Assign the role" });
        // The picker suggests by part of the email (the admin API's user search); no id is typed.
        const picker = form.getByLabel("User (email or name)");
        await picker.fill("alic");
        await form.locator('datalist option[value="alice@example.test"]').waitFor({ state: "attached" });
        await picker.fill("alice@example.test");
        await form.getByRole("button", { name: "Assign role" }).click();
        // The assignment reads by name, not by UUID.
        const assigned = page.getByRole("link", { name: "alice@example.test" });
        await assigned.waitFor();
        assert.equal(await assigned.getAttribute("href"), `#/users/${realmAdmin.user}`);
        assert.equal(await page.getByText(realmAdmin.user).count(), 0, "no UUID in the assignments");
        await check(page, "role-detail", checked);
      });

      await step("explain a decision for that user: the condition verdict", async () => {
        await go(page, `${base}#/explain`, "Explain a decision");
        await page.getByLabel("User (email or name)").fill("alice@example.test");
        await page.getByLabel("Permission", { exact: true }).fill("docs:global:read");
        await page.getByLabel("Resource attributes (JSON)").fill('{"classification": "secret"}');
        await page.getByRole("button", { name: "Explain" }).click();
        await page.locator('[data-outcome="ConditionFailed"]').waitFor();
        assert.notEqual(await page.locator("[data-decision]").textContent(), "Allowed");
        await check(page, "explain", checked);
        await page.getByLabel("Resource attributes (JSON)").fill('{"classification": "public"}');
        await page.getByRole("button", { name: "Explain" }).click();
        await page.locator('[data-outcome="Allowed"]').waitFor();
        assert.equal(await page.locator("[data-decision]").textContent(), "Allowed");
      });

      await step("create a webhook, send a test event, see the delivery succeed in the log", async () => {
        await go(page, `${base}#/webhooks`, "Webhooks");
        const form = page.getByRole("form", { name: "Create an endpoint" });
        await form.getByLabel("URL").fill(`http://127.0.0.1:${receiver.addr.port}/hook`);
        await form.getByRole("button", { name: "Create endpoint" }).click();
        const secret = await page.locator("[data-secret]").textContent();
        assert.match(secret ?? "", /^whsec_/);
        await check(page, "webhooks", checked);
        await page.getByRole("link", { name: `http://127.0.0.1:${receiver.addr.port}/hook` }).first().click();
        await page.getByRole("heading", { level: 1, name: "Webhook endpoint" }).waitFor();
        await page.getByRole("button", { name: "Send a test event" }).click();
        await page.getByText("A signed test delivery is queued.").waitFor();
        const row = page.locator("tr[data-delivery]").first();
        await row.waitFor();
        for (let i = 0; i < 60 && !(await row.textContent())?.includes("succeeded"); i++) {
          await new Promise((r) => setTimeout(r, 250));
          await page.getByRole("button", { name: "Refresh" }).click();
        }
        assert.match((await row.textContent()) ?? "", /succeeded/);
        assert.ok(hooks.length >= 1, "the receiver got the test delivery");
        await check(page, "webhook-detail", checked);
      });

      await step("a failing endpoint's delivery goes to the dead-letter queue and is replayed", async () => {
        await go(page, `${base}#/webhooks`, "Webhooks");
        const form = page.getByRole("form", { name: "Create an endpoint" });
        await form.getByLabel("URL").fill(`http://127.0.0.1:${receiver.addr.port}/fail`);
        await form.getByRole("button", { name: "Create endpoint" }).click();
        // The "created" card and, once the list reloads, its row link to the same endpoint.
        await page.getByRole("link", { name: `http://127.0.0.1:${receiver.addr.port}/fail` }).first().click();
        await page.getByRole("heading", { level: 1, name: "Webhook endpoint" }).waitFor();
        await page.getByRole("button", { name: "Send a test event" }).click();
        await page.getByLabel("Status").selectOption("dead_letter");
        const replay = page.getByRole("button", { name: "Replay" });
        for (let i = 0; i < 80 && await replay.count() === 0; i++) {
          await new Promise((r) => setTimeout(r, 250));
          await page.getByRole("button", { name: "Refresh" }).click();
        }
        await replay.click();
        await page.getByLabel("Status").selectOption("");
        await page.locator("tr[data-delivery]").first().waitFor();
        await go(page, `${base}#/`, "Overview");
        await page.getByText(/consecutive failures/).waitFor();
      });

      await step(
        "a disabled endpoint's deliveries read paused, and it is re-enabled from the console",
        async () => {
          await go(page, `${base}#/webhooks`, "Webhooks");
          await page.getByRole("link", { name: `http://127.0.0.1:${receiver.addr.port}/fail` }).first()
            .click();
          await page.getByRole("heading", { level: 1, name: "Webhook endpoint" }).waitFor();
          // Dates read for people, not as ISO text; the last answer is a sentence.
          const facts = (await page.locator("dl.facts").textContent()) ?? "";
          assert.doesNotMatch(facts, /\d{4}-\d{2}-\d{2}T\d{2}:/, "no raw ISO date");
          assert.doesNotMatch(
            (await page.locator("table").first().textContent()) ?? "",
            /\d{4}-\d{2}-\d{2}T/,
          );
          await page.getByText("receiver answered 500").first().waitFor();
          await page.getByRole("button", { name: "Disable", exact: true }).click();
          await page.getByRole("dialog").getByRole("button", { name: "Disable", exact: true }).click();
          await page.getByText("The endpoint is disabled.").waitFor();
          await page.locator('[data-state="disabled"]').getByText(/disabled since/).waitFor();
          // A delivery due while the endpoint is disabled waits: "paused", not "retrying" for ever.
          await page.getByRole("button", { name: "Send a test event" }).click();
          await page.getByText(/paused \(endpoint disabled\)/).first().waitFor();
          await check(page, "webhook-disabled", checked);
          await page.getByRole("button", { name: "Re-enable" }).click();
          await page.getByText("The endpoint is enabled again; its waiting deliveries resume.").waitFor();
          await page.locator('[data-state="enabled"]').waitFor();
          assert.equal(await page.getByText(/paused \(endpoint disabled\)/).count(), 0);
          await check(page, "webhook-reenabled", checked);
        },
      );

      await step("verify the audit chain", async () => {
        await go(page, `${base}#/audit`, "Audit");
        await page.getByRole("button", { name: "Verify the chain" }).click();
        await page.locator('[data-chain="valid"]').waitFor();
        await page.getByText("role.create").first().click();
        // Actor and target read whole, with their spaces ("svc:bootstrap on …", issue 27).
        await page.getByText(/by System svc:bootstrap on /).first().waitFor();
        await check(page, "audit", checked);
      });

      await step(
        "an expired session refreshes; a dead one returns to sign-in and keeps the page",
        async () => {
          await go(page, `${base}#/signing-keys`, "Signing keys");
          await context.clearCookies({ name: "svc_at" });
          await page.getByRole("link", { name: "Webhooks" }).click();
          await page.getByRole("heading", { level: 1, name: "Webhooks" }).waitFor();
          await page.getByRole("cell", { name: "enabled" }).first().waitFor();
          await context.clearCookies();
          await page.getByRole("link", { name: "Signing keys" }).click();
          await page.getByText("Your session ended. Sign in again to continue.").waitFor();
          await page.getByLabel("Email").fill(server.adminEmail);
          await page.getByLabel("Password", { exact: true }).fill(server.adminPassword);
          await page.getByRole("button", { name: "Sign in", exact: true }).click();
          await page.getByRole("heading", { level: 1, name: "Signing keys" }).waitFor();
        },
      );

      await step("the other pages render and are accessible", async () => {
        await go(page, `${base}#/organizations`, "Organizations");
        const org = page.getByRole("form", { name: "Create an organization" });
        await org.getByLabel("Name (slug)").fill("acme");
        await org.getByLabel("Display name").fill("Acme");
        await org.getByRole("button", { name: "Create organization" }).click();
        await page.getByRole("heading", { name: /Acme/ }).waitFor();
        await page.getByRole("heading", { name: "Members" }).waitFor();
        const member = page.getByRole("form", { name: "Add a member" });
        await member.getByLabel("User (email or name)").fill("alice@example.test");
        await member.getByRole("button", { name: "Add member" }).click();
        await page.getByRole("link", { name: "alice@example.test" }).waitFor();
        assert.equal(await page.getByText(realmAdmin.user).count(), 0, "members read by name, not UUID");
        const domain = page.getByRole("form", { name: "Add a domain" });
        await domain.getByLabel("Domain").fill("acme.example");
        await domain.getByRole("button", { name: "Add domain" }).click();
        await page.getByRole("cell", { name: "not verified" }).waitFor();
        await check(page, "organization-detail", checked);
        await go(page, `${base}#/organizations`, "Organizations");
        await page.getByRole("link", { name: "Acme" }).waitFor();
        await check(page, "organizations", checked);

        await go(page, `${base}#/impersonation`, "Impersonation");
        const imp = page.getByRole("form", { name: "Start an impersonation" });
        await imp.getByLabel("User (email or name)").fill("alice@example.test");
        // The reason is mandatory: the form does not go without it.
        assert.notEqual(await imp.getByLabel("Reason").getAttribute("required"), null);
        await imp.getByRole("button", { name: "Start" }).click();
        await page.getByText("No impersonation.").waitFor();
        await imp.getByLabel("Reason").fill("support ticket 42");
        await imp.getByRole("button", { name: "Start" }).click();
        assert.match((await page.locator("[data-secret]").textContent()) ?? "", /^ey/);
        await page.getByRole("cell", { name: "support ticket 42" }).waitFor();
        await check(page, "impersonation", checked);
        await page.getByRole("button", { name: "End", exact: true }).click();
        await page.getByRole("dialog").getByRole("button", { name: "End", exact: true }).click();
        await page.getByText("No impersonation.").waitFor();
        // The break-glass account comes from the CLI (beside the running server, on the same Postgres).
        const { cmd, args } = await serverCommand("deno");
        const created = await new Deno.Command(cmd, {
          args: [...args, "break-glass", "create", "--realm", "default"],
          cwd: ROOT,
          env: childEnv({ SVC_DATABASE_URL: server.databaseUrl, ...FAST_SERVER_PASSWORD_ENV }),
          stdout: "piped",
          stderr: "piped",
        }).output();
        const out = new TextDecoder().decode(created.stdout);
        const password = /^password: (\S+)$/m.exec(out)?.[1];
        assert.ok(password, `${out}\n${new TextDecoder().decode(created.stderr)}`);
        await go(page, `${base}#/break-glass`, "Break-glass");
        await page.getByRole("heading", { name: "Status" }).waitFor();
        const drill = page.getByRole("form", { name: "Record a drill" });
        await drill.getByLabel("Break-glass password").fill("not the password");
        await drill.getByRole("button", { name: "Record drill" }).click();
        await drill.getByRole("alert").waitFor();
        await drill.getByLabel("Break-glass password").fill(password);
        await drill.getByRole("button", { name: "Record drill" }).click();
        await page.getByText("Drill recorded.").waitFor();
        await page.getByText("overdue").waitFor({ state: "detached" });
        await check(page, "break-glass", checked);
        await go(page, `${base}#/signing-keys`, "Signing keys");
        await page.getByRole("cell", { name: "primary", exact: true }).waitFor();
        await page.getByRole("button", { name: "Rotate now" }).click();
        await page.getByRole("dialog").getByRole("button", { name: "Rotate now" }).click();
        await page.getByText("New primary key").waitFor();
        await page.getByRole("cell", { name: "published", exact: true }).waitFor();
        await check(page, "signing-keys", checked);

        await go(page, `${base}#/service-accounts`, "Service accounts and API keys");
        const sa = page.getByRole("form", { name: "Create a service account" });
        await sa.getByLabel("Key").fill("billing-sync");
        await sa.getByLabel("Display name").fill("Billing sync");
        await sa.getByRole("button", { name: "Create service account" }).click();
        assert.match((await page.locator("[data-secret]").textContent()) ?? "", /^sas_/);
        const key = page.getByRole("form", { name: "Create an API key" });
        await key.getByLabel("Owner (user email or name)").fill("alice@example.test");
        await key.getByLabel("Name", { exact: true }).fill("ci key");
        await key.getByRole("button", { name: "Create API key" }).click();
        await page.getByRole("cell", { name: "ci key" }).waitFor();
        assert.match((await page.locator("[data-secret]").textContent()) ?? "", /^sak_/);
        // The service-account table shows ids and offers an API key for the account: the form
        // comes filled in with the account, picked by its key.
        const account = page.getByRole("row").filter({ hasText: "billing-sync" });
        assert.match((await account.textContent()) ?? "", /[0-9a-f]{8}-[0-9a-f]{4}-/);
        await account.getByRole("button", { name: "Create API key for billing-sync" }).click();
        assert.equal(await key.getByLabel("Owner kind").inputValue(), "ServiceAccount");
        assert.equal(
          await key.getByLabel("Owner (service account key or name)").inputValue(),
          "billing-sync",
        );
        await key.getByLabel("Name", { exact: true }).fill("sync key");
        await key.getByRole("button", { name: "Create API key" }).click();
        const syncKey = page.getByRole("row").filter({ hasText: "sync key" });
        await syncKey.waitFor();
        await syncKey.getByText("Service account Billing sync (billing-sync)").waitFor();
        await page.getByRole("row").filter({ hasText: "ci key" }).getByText("alice@example.test").waitFor();
        assert.match((await page.locator("[data-secret]").textContent()) ?? "", /^sak_/);
        await check(page, "service-accounts", checked);

        // A role is assigned to a service account too, picked by its key.
        await go(page, `${base}#/roles/${realmAdmin.role}`, "Role");
        const assign = page.getByRole("form", { name: "Assign the role" });
        await assign.getByLabel("Assign to").selectOption("ServiceAccount");
        await assign.getByLabel("Service account (key or name)").fill("billing");
        await assign.locator('datalist option[value="billing-sync"]').waitFor({ state: "attached" });
        await assign.getByLabel("Service account (key or name)").fill("billing-sync");
        await assign.getByRole("button", { name: "Assign role" }).click();
        await page.getByText("Service account Billing sync (billing-sync)").waitFor();
        await check(page, "role-assign-service-account", checked);

        await go(page, `${base}#/no-such-page`, "Page not found");
      });

      await step("a destructive action asks first; erasure needs the typed email", async () => {
        await go(page, `${base}#/users/${realmAdmin.user}`, "User");
        await page.getByRole("button", { name: "Erase", exact: true }).click();
        const dialog = page.getByRole("dialog");
        await dialog.waitFor();
        const confirm = dialog.getByRole("button", { name: "Erase for good" });
        assert.equal(await confirm.isDisabled(), true);
        await check(page, "erase-dialog", checked);
        await dialog.getByRole("button", { name: "Cancel" }).click();
      });

      await step("passkey: registered on the console, then sign-in passkey first", async () => {
        const cdp = await context.newCDPSession(page);
        await cdp.send("WebAuthn.enable", { enableUI: false });
        await addVirtualAuthenticator(cdp, { userVerification: true });
        await go(page, `${base}#/account`, "My passkeys");
        await page.getByLabel("Name (optional)").fill("laptop");
        await page.getByRole("button", { name: "Add a passkey" }).click();
        await page.getByText("Passkey added.").waitFor();
        await page.getByRole("cell", { name: "laptop" }).waitFor();
        await check(page, "account", checked);

        await page.getByRole("button", { name: "Sign out" }).click();
        await page.getByText("You are signed out.").waitFor();
        await page.getByRole("button", { name: "Sign in with a passkey" }).click();
        await page.getByRole("heading", { level: 1, name: "My passkeys" }).waitFor();
        assert.ok(await page.getByText(server.adminEmail).isVisible());
      });

      await step("sign out", async () => {
        await page.getByRole("button", { name: "Sign out" }).click();
        await page.getByRole("heading", { name: "Sign in to svc admin" }).waitFor();
        const me = await page.evaluate(`fetch("/profile/me").then((r) => r.status)`);
        assert.equal(me, 401, "the session is gone");
      });

      await step("the dark colour scheme is accessible too", async () => {
        await page.emulateMedia({ colorScheme: "dark" });
        await page.goto(base);
        await page.getByRole("heading", { name: "Sign in to svc admin" }).waitFor();
        await check(page, "sign-in-dark", checked);
        await page.emulateMedia({ colorScheme: "light" });
      });

      assert.deepEqual(problems, [], "no CSP violation or uncaught error");
      await context.close();

      await step("password sign-in with the MFA step (TOTP)", async () => {
        const http = httpClient(server.url);
        const alice = await http.signIn("alice@example.test", "alice password 1");
        const enrolled = await http.call("POST", "/profile/factors/totp", alice, {});
        assert.equal(enrolled.status, 200, JSON.stringify(enrolled.json));
        const secret = decodeBase32(enrolled.json.secret);
        const confirmed = await http.call("POST", "/profile/factors/totp/confirm", alice, {
          code: totpCode(secret, Date.now()),
        });
        assert.equal(confirmed.status, 200, JSON.stringify(confirmed.json));

        const mfaContext = await browser.newContext({ viewport: VIEWPORT });
        mfaContext.setDefaultTimeout(15_000);
        const { page: m, problems: mfaProblems } = await watch(mfaContext);
        current = m;
        await m.goto(base);
        await m.getByLabel("Email").fill("alice@example.test");
        await m.getByLabel("Password", { exact: true }).fill("alice password 1");
        await m.getByRole("button", { name: "Sign in", exact: true }).click();
        await m.getByRole("heading", { name: "Second step" }).waitFor();
        await check(m, "sign-in-mfa", checked);
        await m.getByRole("textbox", { name: "Code", exact: true }).fill("000000");
        await m.getByRole("button", { name: "Verify" }).click();
        await m.getByRole("alert").waitFor();
        // The code of the next step (the one just used for enrolment is spent).
        await m.getByRole("textbox", { name: "Code", exact: true }).fill(
          totpCode(secret, Date.now() + 30_000),
        );
        await m.getByRole("button", { name: "Verify" }).click();
        await m.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
        assert.ok(await m.getByText("alice@example.test").isVisible());
        const nav = m.getByRole("navigation", { name: "Console" });
        assert.equal(
          await nav.getByRole("link", { name: "Users" }).count(),
          0,
          "no admin page without permissions",
        );
        assert.deepEqual(mfaProblems, []);
        await mfaContext.close();
      });

      await step("an organization administrator sees only its organization", async () => {
        const http = httpClient(server.url);
        const root = await http.signIn(server.adminEmail, server.adminPassword);
        const post = async (path: string, body: unknown) => {
          const res = await http.call("POST", path, root, body);
          assert.ok(res.status < 300, `${path}: ${res.status} ${JSON.stringify(res.json)}`);
          return res.json;
        };
        const orgA = await post("/svc-admin/organizations", { name: "org-a", displayName: "Org A" });
        const orgB = await post("/svc-admin/organizations", { name: "org-b", displayName: "Org B" });
        await post("/svc-admin/users", { email: "bob@a.test", password: "bob password 1", orgId: orgA.id });
        await post("/svc-admin/users", { email: "member@a.test", orgId: orgA.id });
        await post("/svc-admin/users", { email: "carol@b.test", orgId: orgB.id });
        const bob = (await http.call("GET", "/svc-admin/users?q=bob%40a.test", root)).json.items[0];
        const role = await post("/svc-admin/roles", {
          key: "org-admin",
          displayName: "Organization admin",
          orgId: orgA.id,
          grants: [{ pattern: "svc:org:*", effect: "Allow" }],
        });
        await post("/svc-admin/role-assignments", {
          roleId: role.id,
          principalKind: "User",
          principalId: bob.id,
          orgId: orgA.id,
        });

        const orgContext = await browser.newContext({ viewport: VIEWPORT });
        orgContext.setDefaultTimeout(15_000);
        const { page: p, problems: orgProblems } = await watch(orgContext);
        current = p;
        await p.goto(base);
        await p.getByLabel("Email").fill("bob@a.test");
        await p.getByLabel("Password", { exact: true }).fill("bob password 1");
        await p.getByText("Organization administrators").click();
        await p.getByLabel("Organization", { exact: true }).fill(orgA.id);
        await p.getByRole("button", { name: "Sign in", exact: true }).click();
        await p.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
        const nav = p.getByRole("navigation", { name: "Console" });
        for (const hidden of ["Audit", "Signing keys", "Break-glass"]) {
          assert.equal(await nav.getByRole("link", { name: hidden }).count(), 0, `${hidden} is not offered`);
        }
        await check(p, "org-admin-overview", checked);

        await go(p, `${base}#/users`, "Users");
        await p.getByRole("link", { name: "bob@a.test" }).waitFor();
        await p.getByRole("link", { name: "member@a.test" }).waitFor();
        assert.equal(
          await p.getByText("carol@b.test").count(),
          0,
          "another organization's user is not listed",
        );
        assert.equal(
          await p.getByRole("form", { name: "Create a user" }).count(),
          0,
          "realm-wide creation not offered",
        );
        await check(p, "org-admin-users", checked);

        await go(p, `${base}#/organizations`, "Organizations");
        await p.getByRole("link", { name: "Org A" }).waitFor();
        assert.equal(await p.getByText("Org B").count(), 0);

        await go(p, `${base}#/organizations/${orgB.id}`, "Organization");
        await p.getByRole("alert").waitFor();
        assert.match((await p.getByRole("alert").textContent()) ?? "", /40[34]/);

        // Every page offered to it works (content or a stated refusal, never a blank page).
        for (
          const [path, title] of [
            ["/roles", "Roles and grants"],
            ["/explain", "Explain a decision"],
            ["/webhooks", "Webhooks"],
            ["/impersonation", "Impersonation"],
            ["/service-accounts", "Service accounts and API keys"],
          ]
        ) {
          await go(p, `${base}#${path}`, title);
          await check(p, `org-admin-${path.slice(1)}`, checked);
        }
        await go(p, `${base}#/audit`, "Audit");
        await p.getByRole("alert").filter({ hasText: "Forbidden (403)" }).waitFor();
        await check(p, "org-admin-forbidden", checked);
        assert.deepEqual(orgProblems, [], "no CSP violation or uncaught error");
        await orgContext.close();
      });

      await step("every page was checked", () => {
        for (
          const name of [
            "sign-in",
            "overview",
            "users",
            "user-detail",
            "roles",
            "role-detail",
            "explain",
            "organizations",
            "organization-detail",
            "webhooks",
            "webhook-detail",
            "webhook-disabled",
            "webhook-reenabled",
            "audit",
            "impersonation",
            "break-glass",
            "signing-keys",
            "service-accounts",
            "account",
          ]
        ) assert.ok(checked.includes(name), `${name} was not checked`);
      });
    } finally {
      await browser.close();
      await server.close();
      await receiver.shutdown();
    }
  },
});
