/**
 * Every route whose answer carries a secret declares `noStore`. The list below is the contract:
 * a new route that hands out a token, a signing secret, a seed or codes belongs in it.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../../core/clock.ts";
import { loadConfig } from "../../core/config/mod.ts";
import { seededRandom } from "../../core/random.ts";
import { type AppDeps, createApp, type SvcApp } from "../../http/app.ts";
import { authRoutes } from "../../http/routes/auth.ts";
import { factorRoutes } from "../../http/routes/factors.ts";
import { loginRoutes } from "../../http/routes/login.ts";
import { passkeyRoutes } from "../../http/routes/passkeys.ts";
import { webhookRoutes } from "../../http/routes/webhooks.ts";
import { noStore } from "../../http/security-headers.ts";

/** Routes whose successful answer carries a secret, and what it carries. */
const SECRET_ROUTES: [method: string, path: string, carries: string][] = [
  ["POST", "/auth/login", "tokens, or the MFA hand-off token"],
  ["POST", "/auth/mfa/verify", "tokens"],
  ["POST", "/auth/refresh", "tokens"],
  ["POST", "/auth/switch-organization", "an access token"],
  ["POST", "/auth/passkey/login", "tokens"],
  ["POST", "/auth/passkey/mfa/verify", "tokens"],
  ["POST", "/profile/factors/totp", "the TOTP seed (enrollment)"],
  ["POST", "/profile/factors/recovery-codes", "recovery codes"],
  ["POST", "/svc-admin/webhooks", "the endpoint's signing secret"],
  ["POST", "/svc-admin/webhooks/:endpointId/rotate-secret", "the new signing secret"],
];

/** The app with every route module that hands out secrets (their services are never called here). */
function app(): SvcApp {
  const unused = {} as never;
  const deps: AppDeps = {
    config: loadConfig({ env: {} }).config,
    readinessChecks: [],
    clock: new ManualClock(Date.UTC(2026, 0, 1)),
    random: seededRandom(1),
  };
  return createApp({
    ...deps,
    routes: [
      authRoutes(unused),
      loginRoutes(unused),
      passkeyRoutes(unused),
      factorRoutes(unused),
      webhookRoutes({ storage: unused, snapshots: unused, publisher: unused, wake: () => {} }),
    ],
  });
}

Deno.test("noStore: every route that answers with a secret declares it", () => {
  const routes = app().routes;
  for (const [method, path, carries] of SECRET_ROUTES) {
    assert.ok(routes.some((r) => r.method === method && r.path === path), `${method} ${path} exists`);
    assert.ok(
      routes.some((r) => r.method === method && r.path === path && r.handler === noStore),
      `${method} ${path} carries ${carries}: it must declare noStore`,
    );
  }
});
