/**
 * The hosted pages' CSP with a CAPTCHA provider (issue 14): the provider's widget is its remote
 * script, so the sign-in and sign-up pages (the ones the abuse gate may stop) allow that
 * provider's origins for scripts, frames, styles and calls; every other page keeps the strict
 * CSP, and without a provider every page does.
 */
import { strict as assert } from "node:assert";
import { STATIC_APP_CSP } from "../../../http/static-app.ts";
import { adminBed } from "../../support/admin.ts";

const directive = (csp: string, name: string) => csp.split("; ").find((d) => d.startsWith(`${name} `)) ?? "";

Deno.test("hosted pages: the CAPTCHA provider's origins on sign-in and sign-up only", async () => {
  const admin = await adminBed({
    SVC_ABUSE_CAPTCHA_PROVIDER: "turnstile",
    SVC_ABUSE_CAPTCHA_SITE_KEY: "site-key",
    SVC_ABUSE_CAPTCHA_SECRET: "secret",
  });
  try {
    for (const page of ["/account/sign-in", "/account/sign-up"]) {
      const res = await admin.app.request(page);
      const csp = res.headers.get("Content-Security-Policy")!;
      for (const name of ["script-src", "frame-src", "style-src", "connect-src"]) {
        assert.equal(
          directive(csp, name).split(" ").includes("https://challenges.cloudflare.com"),
          true,
          name,
        );
      }
      assert.equal(directive(csp, "script-src"), "script-src 'self' https://challenges.cloudflare.com");
      assert.ok(!csp.includes("unsafe-inline"), "still no inline script or style");
      await res.body?.cancel();
    }
    for (const page of ["/account", "/account/", "/account/reset-password", "/account/accept-invitation"]) {
      const res = await admin.app.request(page);
      assert.equal(res.headers.get("Content-Security-Policy"), STATIC_APP_CSP, page);
      await res.body?.cancel();
    }
  } finally {
    await admin.close();
  }
  const plain = await adminBed();
  try {
    const res = await plain.app.request("/account/sign-in");
    assert.equal(res.headers.get("Content-Security-Policy"), STATIC_APP_CSP);
    await res.body?.cancel();
  } finally {
    await plain.close();
  }
});
