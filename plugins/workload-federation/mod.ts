/**
 * The workload federation plugin (`SVC_PLUGINS=workload-federation`): RFC 8693 token exchange at
 * `POST /workload/token`, where an external workload's signed JWT (a CI job's OIDC token, a
 * cluster's service-account token) becomes a service account's access token, under trust
 * policies managed at `/svc-admin/workload/policies` (fenced by `workload:global:policies-read`
 * and `workload:global:policies-manage`). Each external `jti` is accepted once until the token
 * expires. With the OIDC provider enabled too, its `/oidc/token` serves the same grant (an
 * extension grant of the plugin API). Built only on what `mod.ts` exports.
 *
 * @module
 */
import * as v from "valibot";
import {
  definePlugin,
  eventField,
  type PluginContext,
  type PluginEventKind,
  pluginRealm,
  realmSetting,
  remoteJwksCache,
  secondsSetting,
  type SvcPlugin,
} from "../../mod.ts";
import { adminRoutes, PERMISSIONS } from "./admin.ts";
import { type ExchangeDeps, exchangeForm, exchangeRoutes, TOKEN_EXCHANGE_GRANT } from "./exchange.ts";
import { TABLES } from "./policies-store.ts";
import { WORKLOAD_EVENTS, type WorkloadFederationConfig } from "./shared.ts";

export type { WorkloadFederationConfig } from "./shared.ts";

const ConfigSchema = v.object({
  realm: realmSetting,
  maxTokenLifetimeSeconds: secondsSetting(60, 86400, 3600),
});

const EVENTS: readonly PluginEventKind[] = [
  {
    kind: WORKLOAD_EVENTS.tokenExchanged,
    description: "a workload's token was exchanged for a service account's access token",
    payload: {
      policyId: eventField.string("the trust policy that matched"),
      policyName: eventField.string("its name"),
      serviceAccountId: eventField.string("the service account the token was issued for"),
      issuer: eventField.string("the workload token's issuer"),
      subject: eventField.string("the workload token's subject (at most 300 characters)", { nullable: true }),
      jti: eventField.string("the workload token's id (at most 200 characters)"),
      scopes: eventField.strings("the scopes of the access token"),
    },
  },
  {
    kind: WORKLOAD_EVENTS.exchangeRefused,
    description: "a workload token exchange was refused (the reason is in the event, never the token)",
    payload: {
      reason: eventField.string("why"),
      issuer: eventField.string("the workload token's issuer, when it could be read", { nullable: true }),
      policyId: eventField.string("the trust policy involved, if any", { nullable: true }),
    },
  },
];

/** Builds the workload federation plugin. */
export function workloadFederationPlugin(): SvcPlugin<WorkloadFederationConfig> {
  let realmId: string | null = null;
  let deps: ExchangeDeps | null = null;
  /** The exchange's dependencies (one remote JWKS cache for the route and the extension grant). */
  const depsOf = (ctx: PluginContext<WorkloadFederationConfig>): ExchangeDeps =>
    deps ??= {
      ctx,
      realmId: () => {
        if (realmId === null) throw new Error("workload-federation: not started");
        return realmId;
      },
      remoteJwks: remoteJwksCache(ctx.outbound),
    };
  return definePlugin<WorkloadFederationConfig>({
    name: "workload-federation",
    permissionNamespace: "workload",
    permissions: PERMISSIONS,
    config: {
      schema: ConfigSchema,
      settings: [
        {
          env: "SVC_WORKLOAD_REALM",
          key: "realm",
          doc: "the realm (id or name) whose trust policies and service accounts /workload/token serves",
          defaultText: "the default realm",
        },
        {
          env: "SVC_WORKLOAD_MAX_TOKEN_LIFETIME_SECONDS",
          key: "maxTokenLifetimeSeconds",
          doc: "the longest lifetime (exp - iat) of a workload token accepted for exchange",
          defaultText: "3600",
        },
      ],
    },
    tables: TABLES,
    events: EVENTS,
    async start(ctx) {
      realmId = (await pluginRealm(ctx.storage.realms, ctx.config.realm)).id;
    },
    async readiness(ctx) {
      if (realmId === null) throw new Error("not started");
      await ctx.sql.query("SELECT 1 FROM workload_federation_policies LIMIT 1");
    },
    mount(ctx) {
      return [exchangeRoutes(depsOf(ctx)), adminRoutes(ctx)];
    },
    tokenGrants(ctx) {
      const deps = depsOf(ctx);
      return [{ grantType: TOKEN_EXCHANGE_GRANT, handle: (c, form) => exchangeForm(deps, c, form) }];
    },
  });
}
