/**
 * Serving an embedded page app (`http/static-app.ts`), with a small hand-made app and with the
 * built admin console at its configured mount: cache headers, the CSP, the client-side route
 * fallback, 404 for unknown assets, the path base and mount filled into the shell, ETag
 * revalidation, and no route outside the mount.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../../core/clock.ts";
import { loadConfig } from "../../core/config/mod.ts";
import { seededRandom } from "../../core/random.ts";
import { createApp, type SvcApp } from "../../http/app.ts";
import { IMMUTABLE, STATIC_APP_CSP, staticAppRoutes } from "../../http/static-app.ts";
import type { EmbeddedApp } from "../../console/embedded.ts";
import { app as adminConsole } from "../../console/generated/admin.ts";

const SAMPLE: EmbeddedApp = {
  name: "sample",
  shell:
    '<!doctype html><html><head><base href="%SVC_BASE%"><meta name="p" content="%SVC_PATH_BASE%"><script type="module" src="assets/main.abc.js"></script></head></html>',
  assets: {
    "main.abc.js": { type: "text/javascript; charset=utf-8", body: "console.log(1)" },
    "main.def.css": { type: "text/css; charset=utf-8", body: "body{}" },
  },
};

function appWith(app: EmbeddedApp, env: Record<string, string> = {}): SvcApp {
  return createApp({
    config: loadConfig({ env }).config,
    readinessChecks: [],
    clock: new ManualClock(Date.UTC(2026, 0, 1)),
    random: seededRandom(7),
    routes: [staticAppRoutes(app, (config) => config.console.mountPath)],
  });
}

Deno.test("an embedded app: assets immutable, shell no-cache with a strict CSP, client routes fall back", async (t) => {
  const app = appWith(SAMPLE);

  await t.step("a hashed asset is served with its type and a year of immutable caching", async () => {
    const res = await app.request("/svc-admin/ui/assets/main.abc.js");
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("Content-Type"), "text/javascript; charset=utf-8");
    assert.equal(res.headers.get("Cache-Control"), IMMUTABLE);
    assert.equal(res.headers.get("Content-Security-Policy"), STATIC_APP_CSP);
    assert.equal(res.headers.get("X-Content-Type-Options"), "nosniff");
    assert.equal(await res.text(), "console.log(1)");
  });

  await t.step("the shell at the mount, with and without a slash, and at any client route", async () => {
    for (
      const path of ["/svc-admin/ui", "/svc-admin/ui/", "/svc-admin/ui/users/123", "/svc-admin/ui/a/b/c"]
    ) {
      const res = await app.request(path);
      assert.equal(res.status, 200, path);
      assert.match(res.headers.get("Content-Type") ?? "", /^text\/html/);
      assert.equal(res.headers.get("Cache-Control"), "no-cache");
      assert.equal(res.headers.get("Content-Security-Policy"), STATIC_APP_CSP);
      assert.equal(res.headers.get("X-Frame-Options"), "DENY");
      const html = await res.text();
      assert.ok(html.includes('<base href="/svc-admin/ui/">'), html);
      assert.ok(html.includes('<meta name="p" content="">'), html);
    }
  });

  await t.step("the CSP allows no inline script, no eval, no framing", () => {
    assert.match(STATIC_APP_CSP, /default-src 'self'/);
    assert.match(STATIC_APP_CSP, /script-src 'self'(;|$)/);
    assert.doesNotMatch(STATIC_APP_CSP, /unsafe-inline|unsafe-eval/);
    assert.match(STATIC_APP_CSP, /frame-ancestors 'none'/);
    assert.match(STATIC_APP_CSP, /object-src 'none'/);
  });

  await t.step("unknown assets and file-like paths answer 404 not_found", async () => {
    for (
      const path of [
        "/svc-admin/ui/assets/main.zzz.js",
        "/svc-admin/ui/assets/",
        "/svc-admin/ui/assets/..%2Fmain.abc.js",
        "/svc-admin/ui/favicon.ico",
        "/svc-admin/ui/users/x.json",
        "/svc-admin/ui/assets/constructor",
        "/svc-admin/ui/assets/__proto__",
      ]
    ) {
      const res = await app.request(path);
      assert.equal(res.status, 404, path);
      assert.equal((await res.json()).error.code, "not_found", path);
    }
  });

  await t.step("nothing is served outside the mount", async () => {
    assert.equal((await app.request("/svc-admin/uix")).status, 404);
    assert.equal((await app.request("/assets/main.abc.js")).status, 404);
  });

  await t.step("the shell revalidates with its ETag", async () => {
    const first = await app.request("/svc-admin/ui/");
    const etag = first.headers.get("ETag");
    assert.ok(etag);
    const again = await app.request("/svc-admin/ui/", { headers: { "If-None-Match": etag } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), "");
  });

  await t.step("HEAD answers like GET without a body", async () => {
    const res = await app.request("/svc-admin/ui/assets/main.def.css", { method: "HEAD" });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("Cache-Control"), IMMUTABLE);
  });

  await t.step("no other method", async () => {
    assert.equal((await app.request("/svc-admin/ui/", { method: "POST" })).status, 404);
  });
});

Deno.test("the mount comes from SVC_CONSOLE_MOUNT and sits under the path base", async () => {
  const app = appWith(SAMPLE, { SVC_CONSOLE_MOUNT: "/console/", SVC_PATH_BASE: "/id" });
  const shell = await app.request("/id/console/users");
  assert.equal(shell.status, 200);
  const html = await shell.text();
  assert.ok(html.includes('<base href="/id/console/">'), html);
  assert.ok(html.includes('<meta name="p" content="/id">'), html);
  assert.equal((await app.request("/id/console/assets/main.abc.js")).status, 200);
  assert.equal((await app.request("/svc-admin/ui/")).status, 404);
  assert.throws(() => loadConfig({ env: { SVC_CONSOLE_MOUNT: "no-slash" } }));
});

Deno.test("the built admin console is served: its shell loads its assets", async () => {
  const app = appWith(adminConsole);
  const html = await (await app.request("/svc-admin/ui/")).text();
  const refs = [...html.matchAll(/(?:src|href)="(assets\/[^"]+)"/g)].map((m) => m[1]);
  assert.equal(refs.length, Object.keys(adminConsole.assets).length);
  for (const ref of refs) {
    const res = await app.request(`/svc-admin/ui/${ref}`);
    assert.equal(res.status, 200, ref);
    assert.equal(res.headers.get("Cache-Control"), IMMUTABLE);
  }
});
