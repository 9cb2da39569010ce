/**
 * Plugins on an admin bed: the plugins' config sections (from `env`), tables, contexts (as
 * `svc start` builds them) and started hooks, with an app serving svc's routes and theirs.
 * `request()` calls that app as one of the bed's callers.
 */
import { checkedSink } from "./events.ts";
import { denoRuntime } from "../../cli/deno-runtime.ts";
import { EventPublisher } from "../../core/events/publisher.ts";
import { createOutboundFetch } from "../../core/net/outbound.ts";
import { outboundPolicyFromConfig } from "../../core/net/outbound-rules.ts";
import { verifyPasswordHash } from "../../core/passwords/registry.ts";
import { createApp, type SvcApp } from "../../http/app.ts";
import { createPasskeyRoutes } from "../../http/routes/passkeys.ts";
import { svcRoutes } from "../../http/svc-routes.ts";
import { cookieSettings } from "../../http/auth/cookies.ts";
import {
  claimMerger,
  ensurePluginTables,
  loadPluginConfig,
  pluginAdmin,
  pluginEnvNames,
  pluginSql,
  tokenGrantRegistry,
} from "../../plugins/host.ts";
import type { PluginContext, SvcPlugin } from "../../plugins/plugin.ts";
import { type AdminBed, adminBed, type AdminCaller } from "./admin.ts";
import type { LoginBedOptions } from "./login.ts";

/** An admin bed whose app also serves plugins. */
export interface PluginBed {
  readonly admin: AdminBed;
  readonly app: SvcApp;
  readonly contexts: readonly PluginContext[];
  /** Calls the app as `as` (default `global`; null: no token); a body is sent as JSON unless a string. */
  request(
    method: string,
    path: string,
    options?: { as?: AdminCaller | null; body?: unknown; headers?: Record<string, string> },
  ): Promise<Response>;
  close(): Promise<void>;
}

/** Builds a {@link PluginBed} (PGlite, or Postgres with `options.postgres`). */
export async function pluginBed(
  plugins: readonly SvcPlugin[],
  env: Record<string, string> = {},
  options: LoginBedOptions = {},
): Promise<PluginBed> {
  // The plugins' own settings go to their config sections; svc's config refuses names it lacks.
  const pluginSettings = new Set(pluginEnvNames(plugins));
  const admin = await adminBed(
    Object.fromEntries(Object.entries(env).filter(([name]) => !pluginSettings.has(name))),
    options,
  );
  try {
    const { bed } = admin;
    const publisher = new EventPublisher({
      storage: bed.storage,
      sink: checkedSink((event) => void bed.events.push(event), plugins),
      random: bed.random,
    });
    bed.settleOnClose(publisher);
    const sql = pluginSql(bed.database.db);
    await ensurePluginTables(bed.database.db, plugins);
    const contributeClaims = claimMerger(plugins, () => {});
    const contexts: PluginContext[] = [];
    const grants = tokenGrantRegistry();
    const pluginPermissions = plugins.flatMap((plugin) => (plugin.permissions ?? []).map((p) => p.id));
    for (const plugin of plugins) {
      const context: PluginContext = {
        name: plugin.name,
        config: loadPluginConfig(plugin, bed.config, env),
        svcConfig: bed.config,
        clock: bed.clock,
        random: bed.random,
        storage: bed.storage,
        sql,
        keys: bed.auth.keys,
        tokens: bed.auth.tokens,
        sessions: bed.auth.sessions,
        login: bed.login.pipeline,
        authenticator: bed.auth.authenticator,
        cookies: cookieSettings(bed.config),
        events: publisher,
        admin: pluginAdmin({
          storage: bed.storage,
          snapshots: bed.snapshots,
          publisher,
          pluginPermissions,
          pluginName: plugin.name,
          clock: bed.clock,
          sessions: bed.auth.endedSessions,
        }),
        outbound: createOutboundFetch({
          policy: outboundPolicyFromConfig(bed.config),
          resolveHost: (hostname) => denoRuntime.resolveHost!(hostname),
          connect: denoRuntime.connectPinned,
          fetch: (input, init) => fetch(input, init),
        }),
        verifySecret: async (stored, plaintext) => {
          try {
            return await verifyPasswordHash(stored.algorithm, stored.hash, plaintext);
          } catch {
            return false;
          }
        },
        contributeClaims,
        tokenGrants: grants.list,
        logError: () => {},
      };
      contexts.push(context);
    }
    grants.install(plugins.map((plugin, i) => ({ plugin, context: contexts[i] })), () => {});
    for (const [i, plugin] of plugins.entries()) await plugin.start?.(contexts[i]);
    const passkeys = createPasskeyRoutes({
      config: bed.config,
      storage: bed.storage,
      clock: bed.clock,
      random: bed.random,
      events: publisher,
      auth: bed.auth,
    });
    const app = createApp({
      config: bed.config,
      readinessChecks: [],
      clock: bed.clock,
      random: bed.random,
      authenticator: bed.auth.authenticator,
      routes: [
        ...svcRoutes({
          storage: bed.storage,
          snapshots: bed.snapshots,
          publisher,
          auth: bed.auth,
          login: bed.login,
          passkeys,
          pluginPermissions,
        }),
        ...plugins.flatMap((plugin, i) => [...plugin.routes ?? [], ...plugin.mount?.(contexts[i]) ?? []]),
      ],
    });
    return {
      admin,
      app,
      contexts,
      request(method, path, options = {}) {
        const headers: Record<string, string> = { ...options.headers };
        const as = options.as === undefined ? "global" : options.as;
        if (as !== null) headers.Authorization = `Bearer ${admin.tokens[as]}`;
        let body: string | undefined;
        if (options.body !== undefined) {
          headers["Content-Type"] ??= "application/json";
          body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
        }
        return Promise.resolve(app.request(path, { method, headers, body }));
      },
      async close() {
        for (const plugin of plugins) await plugin.stop?.();
        await admin.close();
      },
    };
  } catch (err) {
    await admin.close();
    throw err;
  }
}

/**
 * A new browser session of `userId` (signed in by svc itself) and the authorization code the OIDC
 * provider answers it for `clientId` (scope `openid offline_access` unless `scope`), with no prompt
 * shown: the first half of a code flow, for tests that go on with the exchange themselves.
 */
export async function oidcAuthorizationCode(
  beds: PluginBed,
  options: {
    readonly userId: string;
    readonly clientId: string;
    readonly redirectUri: string;
    readonly scope?: string;
  },
): Promise<{ code: string; browserSessionId: string }> {
  const { bed, realmId } = beds.admin;
  const browser = await bed.auth.sessions.signIn({
    realmId,
    userId: options.userId,
    orgId: null,
    mfa: "Password",
  });
  const query = new URLSearchParams({
    response_type: "code",
    client_id: options.clientId,
    redirect_uri: options.redirectUri,
    scope: options.scope ?? "openid offline_access",
    state: "s",
  });
  const res = await beds.app.request(`/oidc/authorize?${query}`, {
    headers: { Cookie: `svc_at=${browser.tokens.accessToken}` },
  });
  const code = new URL(res.headers.get("Location") ?? "http://no.test/").searchParams.get("code");
  if (res.status !== 303 || code === null) {
    throw new Error(`no code for ${options.clientId}: ${res.status} ${res.headers.get("Location")}`);
  }
  return { code, browserSessionId: browser.session.id };
}
