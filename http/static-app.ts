/**
 * Serves one embedded page app (built by `console/build.ts`) under a mount path. Static and
 * unauthenticated by design: the pages hold no data; everything they show comes from the API,
 * fenced there.
 *
 * - `<mount>/assets/<hashed name>`: the asset, `Cache-Control: public, max-age=31536000, immutable`
 *   (its name changes with its content); an unknown asset answers 404 `not_found`.
 * - `<mount>` and every other path under it without a file extension (client-side routes): the
 *   HTML shell, `Cache-Control: no-cache` with an ETag, its `<base href>` and path-base meta filled
 *   in for this server; a path with a file extension that is not an asset answers 404.
 * - Every answer carries {@link STATIC_APP_CSP}: scripts and styles from the server only, no
 *   inline script, no framing; an app may widen it for some of its pages (`cspOf`: the hosted
 *   sign-in and sign-up pages allow the configured CAPTCHA provider's origins, and only then).
 *
 * These routes are not API operations: they are left out of the OpenAPI document and the admin
 * fence matrix on purpose (see `embeddedAppMounts` in `http/svc-routes.ts`).
 *
 * @module
 */
import type { Context } from "hono";
import type { SvcConfig } from "../core/config/mod.ts";
import { sha256Hex } from "../core/digest.ts";
import { type EmbeddedApp, SHELL_PLACEHOLDERS } from "../console/embedded.ts";
import type { RouteInstaller } from "./app.ts";
import type { SvcEnv } from "./request-id.ts";

/** The Content-Security-Policy of every page app answer. */
export const STATIC_APP_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** `Cache-Control` of hashed assets. */
export const IMMUTABLE = "public, max-age=31536000, immutable";

/** The directory of hashed assets under the mount. */
export const ASSETS_DIR = "assets";

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** The shell of `app` for a server whose path base is `pathBase` and the app's mount `mount`. */
export function filledShell(app: EmbeddedApp, pathBase: string, mount: string): string {
  return app.shell
    .replaceAll(SHELL_PLACEHOLDERS.base, escapeHtml(`${pathBase}${mount}/`))
    .replaceAll(SHELL_PLACEHOLDERS.pathBase, escapeHtml(pathBase));
}

/**
 * The installer of `app` at the mount `mountOf(config)` (relative to the path base).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createApp, cryptoRandom, loadConfig, systemClock } from "@svc/svc";
 * import { STATIC_APP_CSP, staticAppRoutes } from "./static-app.ts";
 * import { app as admin } from "../console/generated/admin.ts";
 *
 * const { config } = loadConfig({ env: {} });
 * const app = createApp({
 *   config,
 *   readinessChecks: [],
 *   clock: systemClock,
 *   random: cryptoRandom,
 *   routes: [staticAppRoutes(admin, (config) => config.console.mountPath)],
 * });
 *
 * const page = await app.request("/svc-admin/ui/users"); // a client-side route: the shell
 * assert.equal(page.status, 200);
 * assert.equal(page.headers.get("Content-Security-Policy"), STATIC_APP_CSP);
 * assert.match(await page.text(), /<base href="\/svc-admin\/ui\/">/);
 * const missing = await app.request("/svc-admin/ui/assets/missing.js");
 * assert.equal(missing.status, 404);
 * ```
 */
export function staticAppRoutes(
  app: EmbeddedApp,
  mountOf: (config: SvcConfig) => string,
  /** The CSP of a page (its path under the mount, "" for the mount): default {@link STATIC_APP_CSP}. */
  cspOf?: (page: string, config: SvcConfig) => string,
): RouteInstaller {
  return (router, deps) => {
    const mount = mountOf(deps.config);
    const shell = filledShell(app, deps.config.server.pathBase, mount);
    const shellEtag = `"${sha256Hex(shell).slice(0, 32)}"`;
    const prefix = `${deps.config.server.pathBase}${mount}/`;

    const serveShell = (c: Context<SvcEnv>, page: string): Response => {
      c.header("Content-Security-Policy", cspOf?.(page, deps.config) ?? STATIC_APP_CSP);
      c.header("Cache-Control", "no-cache");
      c.header("ETag", shellEtag);
      if (c.req.header("If-None-Match") === shellEtag) return c.body(null, 304);
      return c.html(shell);
    };

    router.get(mount, (c) => serveShell(c, ""));
    router.get(`${mount}/*`, (c) => {
      const path = new URL(c.req.url).pathname;
      const rest = path.startsWith(prefix) ? path.slice(prefix.length) : "";
      if (rest.startsWith(`${ASSETS_DIR}/`)) {
        const name = rest.slice(ASSETS_DIR.length + 1);
        const asset = Object.hasOwn(app.assets, name) ? app.assets[name] : undefined;
        if (asset === undefined) return c.notFound();
        c.header("Content-Security-Policy", STATIC_APP_CSP);
        c.header("Cache-Control", IMMUTABLE);
        c.header("Content-Type", asset.type);
        return c.body(asset.body);
      }
      const last = rest.slice(rest.lastIndexOf("/") + 1);
      if (last.includes(".")) return c.notFound();
      return serveShell(c, rest.replace(/\/+$/, ""));
    });
  };
}
