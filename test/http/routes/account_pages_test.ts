/**
 * The hosted account pages' routes (issue 14): the shell at the configured mount for every page
 * a mailed link opens, under the static-app CSP; hashed assets; the public settings (branding,
 * returnTo origins); and mailed links pointing at the same mount.
 */
import { strict as assert } from "node:assert";
import { STATIC_APP_CSP } from "../../../http/static-app.ts";
import { mailMessages, mailSettingsFromConfig } from "../../../core/mail/messages.ts";
import { adminBed } from "../../support/admin.ts";

Deno.test("hosted pages: the shell at a configured mount, its assets, and the settings", async () => {
  const admin = await adminBed({
    SVC_ACCOUNT_MOUNT_PATH: "/me",
    SVC_BRAND_PRODUCT_NAME: "Acme ID",
    SVC_BRAND_COLOR: "#aa3300",
    SVC_ACCOUNT_RETURN_TO_ORIGINS: "https://app.example.com",
  });
  try {
    for (const page of ["", "/", "/sign-in", "/reset-password", "/accept-invitation", "/verify-email"]) {
      const res = await admin.app.request(`/me${page}`);
      assert.equal(res.status, 200, page);
      assert.equal(res.headers.get("Content-Security-Policy"), STATIC_APP_CSP);
      const html = await res.text();
      assert.match(html, /<base href="\/me\/">/);
      assert.doesNotMatch(html, /<script>(?!<\/script>)/, "no inline script");
      const script = /src="(assets\/main\.[0-9a-f]+\.js)"/.exec(html);
      assert.ok(script, "a hashed script");
      const asset = await admin.app.request(`/me/${script[1]}`);
      assert.equal(asset.status, 200);
      assert.match(asset.headers.get("Cache-Control") ?? "", /immutable/);
      await asset.body?.cancel();
    }
    assert.equal((await admin.app.request("/me/assets/nope.js")).status, 404);
    assert.equal((await admin.app.request("/account/sign-in")).status, 404, "only the configured mount");

    const settings = await admin.app.request("/auth/hosted-settings");
    assert.equal(settings.status, 200);
    assert.deepEqual(await settings.json(), {
      productName: "Acme ID",
      color: "#aa3300",
      logoUrl: null,
      // svc's own origin always (the OIDC provider's authorization endpoint), then the configured ones.
      returnToOrigins: [new URL(admin.bed.config.server.baseUrl).origin, "https://app.example.com"],
      realm: null,
      selfSignUp: false,
    });

    // A realm's own branding and sign-up, by name or id; an unknown realm is 404.
    const second = await admin.bed.storage.realms.create({ name: "second", displayName: "Second" });
    await admin.bed.storage.realms.update(second.id, {
      selfSignUp: true,
      branding: { productName: "Second ID", color: "#123456", logoUrl: null },
    });
    for (const key of ["second", second.id]) {
      const own = await (await admin.app.request(`/auth/hosted-settings?realm=${key}`)).json();
      assert.deepEqual(
        [own.productName, own.color, own.logoUrl, own.realm, own.selfSignUp],
        ["Second ID", "#123456", null, "second", true],
      );
    }
    assert.equal((await admin.app.request("/auth/hosted-settings?realm=nope")).status, 404);

    const mail = mailMessages(mailSettingsFromConfig(admin.bed.config));
    const reset = mail.passwordReset({ to: "a@example.com", token: "t1", ttlSeconds: 60 });
    assert.ok(reset.text.includes(`${admin.bed.config.server.baseUrl}/me/reset-password?token=t1`));
    assert.match(reset.html, /#aa3300/);
    assert.match(reset.subject, /Acme ID/);
    // Links of another realm name it, so its pages show its branding and sign in to it.
    const realmLink = mailMessages({ ...mailSettingsFromConfig(admin.bed.config), realm: "second" })
      .passwordReset({ to: "a@example.com", token: "t1", ttlSeconds: 60 });
    assert.ok(realmLink.text.includes("/me/reset-password?token=t1&realm=second"));
  } finally {
    await admin.close();
  }
});
