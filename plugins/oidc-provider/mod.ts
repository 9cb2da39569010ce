/**
 * The OIDC provider plugin (`SVC_PLUGINS=oidc-provider`): discovery, the authorization code flow
 * with PKCE, sign-in on the hosted sign-in page (every factor; `SVC_OIDC_SIGN_IN_URL` points
 * elsewhere), consent, the token endpoint (authorization_code, refresh_token,
 * client_credentials for service accounts; client authentication by secret, `private_key_jwt` or
 * none for public clients), ID tokens, userinfo, revocation, introspection,
 * RP-initiated logout, pushed authorization requests (RFC 9126, `par.ts`) and resources with
 * RFC 9068 access tokens (RFC 8707, `resources.ts`, managed at `/svc-admin/oidc/resources`), for the clients of one realm (managed at `/svc-admin/oidc/clients`),
 * and, when `SVC_OIDC_REGISTRATION=initial-token`, dynamic client registration (RFC 7591,
 * `registration.ts`) with initial access tokens (managed at `/svc-admin/oidc/initial-access-tokens`)
 * and the client configuration endpoint (RFC 7592).
 * Built only on what `mod.ts` exports.
 *
 * @module
 */
import * as v from "valibot";
import {
  definePlugin,
  DPOP_ALGORITHMS,
  DpopVerifier,
  eventField,
  type PluginContext,
  type PluginEventKind,
  pluginRealm,
  realmSetting,
  remoteJwksCache,
  secondsSetting,
  type SvcPlugin,
} from "../../mod.ts";
import { APP_ACCESS_REVOKED_EVENT, appsRoutes } from "./apps.ts";
import { authorizeRoutes } from "./authorize.ts";
import { providerRoot, rootPath } from "./issuer.ts";
import {
  BACKCHANNEL_EVENTS,
  BACKCHANNEL_TABLES,
  BackchannelLogout,
  type BackchannelOptions,
} from "./backchannel.ts";
import { initialAccessTokenRoutes } from "./initial-access-tokens-admin.ts";
import { REGISTRATION_TABLES } from "./initial-access-tokens.ts";
import { logoutRoutes } from "./logout.ts";
import { PAR_TABLES } from "./par.ts";
import { parRoutes } from "./par-route.ts";
import { REGISTRATION_MODES, registrationRoutes } from "./registration.ts";
import { RESOURCE_TABLES } from "./resources.ts";
import { PERMISSIONS, resourceAdminRoutes } from "./resources-admin.ts";
import { ssoRoutes } from "./sso.ts";
import { OIDC_EVENTS, type OidcProviderConfig, type Provider, TABLES } from "./shared.ts";
import { tokenRoutes } from "./token.ts";

export type { OidcProviderConfig } from "./shared.ts";

const ConfigSchema = v.object({
  realm: realmSetting,
  signInUrl: v.optional(
    v.nullable(
      v.pipe(
        v.string(),
        v.check(
          (text) => text.startsWith("/") && !text.startsWith("//") || /^https?:\/\/[^\s]+$/.test(text),
          "a path such as /account/sign-in or an http(s) URL",
        ),
      ),
    ),
    null,
  ),
  codeTtlSeconds: secondsSetting(10, 600, 60),
  idTokenTtlSeconds: secondsSetting(60, 86400, 600),
  dpopNonceRequired: v.optional(
    v.pipe(
      v.union([v.boolean(), v.picklist(["true", "false"], "true or false")]),
      v.transform((value) => value === true || value === "true"),
    ),
    false,
  ),
  registration: v.optional(
    v.picklist(REGISTRATION_MODES, `${REGISTRATION_MODES.join(" or ")}`),
    "off",
  ),
});

const backchannelPayload = {
  clientId: eventField.string("the client told"),
  sid: eventField.string("the session id the logout token named"),
  attempts: eventField.integer("delivery attempts made"),
  statusCode: eventField.integer("the client's last HTTP status", { nullable: true }),
  error: eventField.string("the last delivery's error", { optional: true }),
};
const client = { clientId: eventField.string("the client's `client_id`") };
const EVENTS: readonly PluginEventKind[] = [
  {
    kind: OIDC_EVENTS.authorized,
    description: "an authorization code was issued",
    securityLedger: true,
    payload: {
      ...client,
      scopes: eventField.strings("the scopes granted"),
      sessionId: eventField.string("the user's svc session"),
    },
  },
  {
    kind: OIDC_EVENTS.authorizationRefused,
    description: "an authorization request was refused",
    payload: {
      clientId: eventField.string("the `client_id` asked for, when there was one", { nullable: true }),
      reason: eventField.string("the OAuth error or the page's reason"),
      endpoint: eventField.string("`par` when refused at the pushed authorization request endpoint", {
        optional: true,
      }),
    },
  },
  {
    kind: OIDC_EVENTS.consentGranted,
    description: "a user consented to a client's scopes",
    securityLedger: true,
    payload: { ...client, scopes: eventField.strings("the scopes consented to") },
  },
  {
    kind: OIDC_EVENTS.tokensIssued,
    description: "tokens were issued to a client for a user",
    payload: {
      ...client,
      grantType: eventField.string("`authorization_code` or `refresh_token`"),
      scopes: eventField.strings("the scopes of the tokens"),
      refresh: eventField.boolean("whether a refresh token was issued"),
    },
  },
  {
    kind: OIDC_EVENTS.tokenRefused,
    description: "the token endpoint refused a request",
    payload: {
      clientId: eventField.string("the `client_id` presented, when there was one", { nullable: true }),
      reason: eventField.string("the OAuth error"),
      detail: eventField.string("what was wrong, for `invalid_client`", { optional: true }),
    },
  },
  {
    kind: OIDC_EVENTS.codeReused,
    description: "an authorization code was replayed; what it issued was revoked",
    securityLedger: true,
    payload: {
      ...client,
      revokedSessionId: eventField.string("the session its first use opened, now ended", { nullable: true }),
    },
  },
  {
    kind: OIDC_EVENTS.clientCredentialsIssued,
    description: "a service account got an access token",
    payload: {
      serviceAccountId: eventField.string("the service account"),
      key: eventField.string("the service account's key"),
      scopes: eventField.strings("the scopes of the token"),
    },
  },
  {
    kind: OIDC_EVENTS.tokenRevoked,
    description: "a client revoked a token (RFC 7009)",
    payload: { ...client, sessionId: eventField.string("the session ended") },
  },
  {
    kind: OIDC_EVENTS.loggedOut,
    description: "RP-initiated logout ended a session",
    securityLedger: true,
    payload: {
      clientId: eventField.string("the client that asked, when known", { nullable: true }),
      sessionId: eventField.string("the session ended"),
    },
  },
  {
    kind: APP_ACCESS_REVOKED_EVENT,
    description: "a user revoked a client's access (consent and sessions) from their account",
    securityLedger: true,
    payload: {
      ...client,
      consentRevoked: eventField.boolean("whether a consent was revoked"),
      sessionsEnded: eventField.integer("the client's sessions ended"),
    },
  },
  {
    kind: BACKCHANNEL_EVENTS.delivered,
    description: "a client acknowledged a back-channel logout token",
    payload: backchannelPayload,
  },
  {
    kind: BACKCHANNEL_EVENTS.failed,
    description: "a back-channel logout token could not be delivered after its retries",
    payload: backchannelPayload,
  },
];

/** What the provider plugin is built with (tests drive the back-channel worker themselves). */
export interface OidcProviderOptions {
  /** Whether the back-channel logout worker polls in the background (default true). */
  readonly backchannelWorker?: boolean;
  /** The back-channel logout worker's retry schedule and limits. */
  readonly backchannel?: BackchannelOptions;
}

/** The provider plugin, with its back-channel logout outbox (once started). */
export type OidcProviderPlugin = SvcPlugin<OidcProviderConfig> & {
  /** The back-channel logout outbox and worker, or null before `start`. */
  backchannelLogout(): BackchannelLogout | null;
};

/** Builds the OIDC provider plugin. */
export function oidcProviderPlugin(options: OidcProviderOptions = {}): OidcProviderPlugin {
  let realmId: string | null = null;
  let backchannel: BackchannelLogout | null = null;
  const provider = (ctx: PluginContext<OidcProviderConfig>): Provider => {
    const { baseUrl, pathBase } = ctx.svcConfig.server;
    const root = providerRoot(baseUrl, pathBase);
    const dpop = new DpopVerifier({
      store: ctx.storage.dpop,
      secrets: ctx.storage.serverSecrets,
      clock: ctx.clock,
      random: ctx.random,
      nonceRequired: ctx.config.dpopNonceRequired,
      proofMaxAgeSeconds: ctx.svcConfig.dpop.proofMaxAgeSeconds,
    });
    return {
      ctx,
      get realmId() {
        if (realmId === null) throw new Error("oidc-provider: not started");
        return realmId;
      },
      issuer: root,
      url: (path) => `${root}${path}`,
      path: (path) => rootPath(root, path),
      remoteJwks: remoteJwksCache(ctx.outbound),
      dpop,
      dpopAlgorithms: DPOP_ALGORITHMS,
    };
  };
  const plugin = definePlugin<OidcProviderConfig>({
    name: "oidc-provider",
    config: {
      schema: ConfigSchema,
      settings: [
        {
          env: "SVC_OIDC_REALM",
          key: "realm",
          doc: "the realm (id or name) whose users and clients the provider serves",
          defaultText: "the default realm",
        },
        {
          env: "SVC_OIDC_SIGN_IN_URL",
          key: "signInUrl",
          doc: "where the provider sends browsers to sign in (gets returnTo and login_hint)",
          defaultText: "the hosted page, at {account mount}/sign-in",
        },
        {
          env: "SVC_OIDC_CODE_TTL_SECONDS",
          key: "codeTtlSeconds",
          doc: "authorization code lifetime",
          defaultText: "60",
        },
        {
          env: "SVC_OIDC_DPOP_NONCE_REQUIRED",
          key: "dpopNonceRequired",
          doc:
            "true: DPoP proofs at the token and userinfo endpoints must carry a server nonce (use_dpop_nonce)",
          defaultText: "false",
        },
        {
          env: "SVC_OIDC_REGISTRATION",
          key: "registration",
          doc:
            "dynamic client registration (RFC 7591) at /oidc/register: off, or initial-token (a client presents an initial access token minted at /svc-admin/oidc/initial-access-tokens)",
          defaultText: "off",
        },
        {
          env: "SVC_OIDC_ID_TOKEN_TTL_SECONDS",
          key: "idTokenTtlSeconds",
          doc: "ID token lifetime",
          defaultText: "600",
        },
      ],
    },
    tables: [...TABLES, ...PAR_TABLES, ...RESOURCE_TABLES, ...BACKCHANNEL_TABLES, ...REGISTRATION_TABLES],
    permissions: PERMISSIONS,
    events: EVENTS,
    async start(ctx) {
      realmId = (await pluginRealm(ctx.storage.realms, ctx.config.realm)).id;
      backchannel = new BackchannelLogout(provider(ctx), options.backchannel);
      backchannel.start(options.backchannelWorker ?? true);
    },
    async stop() {
      await backchannel?.stop();
    },
    async readiness(ctx) {
      if (realmId === null) throw new Error("not started");
      await ctx.keys.check(realmId);
      await ctx.sql.query("SELECT 1 FROM oidc_provider_grants LIMIT 1");
    },
    mount(ctx) {
      const p = provider(ctx);
      return [
        tokenRoutes(p),
        authorizeRoutes(p),
        logoutRoutes(p),
        parRoutes(p),
        ssoRoutes(p),
        resourceAdminRoutes(ctx),
        appsRoutes(p),
        registrationRoutes(p),
        initialAccessTokenRoutes(ctx),
      ];
    },
  });
  return Object.assign(plugin, { backchannelLogout: () => backchannel });
}
