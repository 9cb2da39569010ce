/**
 * The federation plugin (`SVC_PLUGINS=federation`): organizations sign in through their own
 * upstream OpenID provider. Providers (issuer, client id and encrypted secret, scopes, claim
 * mapping, just-in-time provisioning) are managed at `/svc-admin/federation/providers`; an
 * organization's default identity provider receives the emails of its verified email domains
 * (home-realm discovery on the hosted sign-in page, `POST /auth/sign-in/discover`); the flow runs
 * at `/federation/start` and `/federation/callback` (code flow with PKCE, state and nonce; the ID
 * token validated with jose against the upstream's JWKS). Built only on what `mod.ts` exports.
 *
 * @module
 */
import * as v from "valibot";
import {
  definePlugin,
  eventField,
  type PluginEventKind,
  publicUrl,
  secondsSetting,
  type SvcPlugin,
} from "../../mod.ts";
import { adminRoutes } from "./admin.ts";
import { flowRoutes, providerForDomain } from "./flow.ts";
import { ProviderStore, TABLES } from "./providers.ts";
import { type Federation, FEDERATION_EVENTS, type FederationConfig, PATHS, PERMISSIONS } from "./shared.ts";
import { StateStore } from "./states.ts";
import { Upstreams } from "./upstream.ts";

export type { FederationConfig } from "./shared.ts";

const ConfigSchema = v.object({
  allowHttpIssuers: v.optional(
    v.union([
      v.boolean(),
      v.pipe(v.picklist(["true", "false"], "true or false"), v.transform((text) => text === "true")),
    ]),
    false,
  ),
  stateTtlSeconds: secondsSetting(60, 3600, 600),
  discoveryTtlSeconds: secondsSetting(0, 86400, 3600),
});

const provider = {
  providerId: eventField.string("the organization's upstream identity provider"),
  issuer: eventField.string("the provider's issuer"),
};
const EVENTS: readonly PluginEventKind[] = [
  {
    kind: FEDERATION_EVENTS.signIn,
    description: "a user signed in through an organization's upstream identity provider",
    securityLedger: true,
    payload: { ...provider, sessionId: eventField.string("the session opened") },
  },
  {
    kind: FEDERATION_EVENTS.linked,
    description: "an upstream identity (issuer and subject) was linked to a user",
    securityLedger: true,
    payload: {
      ...provider,
      how: eventField.string("`signed_in` (an existing user) or `provisioned` (a new one)"),
    },
  },
  {
    kind: FEDERATION_EVENTS.provisioned,
    description: "a user was created just in time from an upstream identity",
    securityLedger: true,
    payload: {
      ...provider,
      emailVerified: eventField.boolean("whether the upstream vouched for the address"),
    },
  },
  {
    kind: FEDERATION_EVENTS.refused,
    description: "a sign-in through an upstream identity provider was refused",
    payload: {
      providerId: eventField.string("the provider, when the attempt got that far", { nullable: true }),
      reason: eventField.string("why"),
    },
  },
];

/** Builds the federation plugin. */
export function federationPlugin(): SvcPlugin<FederationConfig> {
  let federation: Federation | null = null;
  const started = (): Federation => {
    if (federation === null) throw new Error("federation: not started");
    return federation;
  };
  return definePlugin<FederationConfig>({
    name: "federation",
    permissions: [
      {
        id: PERMISSIONS.readGlobal,
        description: "Read the realm's upstream identity providers (never a secret).",
      },
      {
        id: PERMISSIONS.manageGlobal,
        description: "Add, change and delete the realm's upstream identity providers.",
      },
      { id: PERMISSIONS.readOrg, description: "Read the organization's upstream identity providers." },
      {
        id: PERMISSIONS.manageOrg,
        description: "Add, change and delete the organization's upstream identity providers.",
      },
    ],
    config: {
      schema: ConfigSchema,
      settings: [
        {
          env: "SVC_FEDERATION_ALLOW_HTTP_ISSUERS",
          key: "allowHttpIssuers",
          doc: "accept http: upstream issuers (development and tests only)",
          defaultText: "false",
        },
        {
          env: "SVC_FEDERATION_STATE_TTL_SECONDS",
          key: "stateTtlSeconds",
          doc: "how long a sign-in at an upstream provider may take",
          defaultText: "600",
        },
        {
          env: "SVC_FEDERATION_DISCOVERY_TTL_SECONDS",
          key: "discoveryTtlSeconds",
          doc: "how long an upstream's discovery document is reused",
          defaultText: "3600",
        },
      ],
    },
    tables: TABLES,
    events: EVENTS,
    start(ctx) {
      const { pathBase } = ctx.svcConfig.server;
      federation = {
        ctx,
        providers: new ProviderStore(ctx),
        states: new StateStore(ctx, ctx.config.stateTtlSeconds * 1000),
        upstreams: new Upstreams({
          clock: ctx.clock,
          fetch: ctx.outbound,
          discoveryTtlMs: ctx.config.discoveryTtlSeconds * 1000,
          allowHttp: ctx.config.allowHttpIssuers,
        }),
        callbackUrl: publicUrl(ctx.svcConfig.server, PATHS.callback),
        path: (path) => `${pathBase}${path}`,
      };
    },
    async readiness(ctx) {
      started();
      await ctx.sql.query("SELECT 1 FROM federation_providers LIMIT 1");
    },
    async discoverSignIn(_ctx, request) {
      const provider = await providerForDomain(started(), request.realmId, request.domain);
      if (provider === null) return null;
      const query = new URLSearchParams({ provider: provider.id, email: request.email });
      if (request.returnTo !== null) query.set("returnTo", request.returnTo);
      return { path: `${PATHS.start}?${query}` };
    },
    mount() {
      const f = started();
      return [flowRoutes(f), adminRoutes(f)];
    },
  });
}
