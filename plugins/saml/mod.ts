/**
 * The SAML 2.0 service provider plugin (`SVC_PLUGINS=saml`): organizations sign in through their
 * own SAML identity provider (Okta, Entra ID, Google Workspace…). Connections (the IdP's metadata,
 * pasted or by URL; attribute mapping; just-in-time provisioning; IdP-initiated sign-in) are
 * managed at `/svc-admin/saml/connections` by the realm's or the organization's administrator; each
 * has its SP metadata, start and ACS routes at `/saml/{id}/…`; an organization's default identity
 * provider receives the emails of its verified email domains (home-realm discovery on the hosted
 * sign-in page). Responses are verified with `xml-crypto` against the connection's certificates
 * only and read from the signed bytes (see `response.ts`); each assertion id is consumed once.
 * A maintenance job (`maintenance.ts`) announces certificates entering their last 30 days once
 * and fetches metadata given by URL again on an interval. Built only on what `mod.ts` exports.
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
import { ConnectionStore, TABLES } from "./connections.ts";
import { connectionForDomain, flowRoutes } from "./flow.ts";
import { type MaintenanceOptions, SamlMaintenance } from "./maintenance.ts";
import { RequestStore } from "./requests.ts";
import { SP_KEY_TABLES, SpKeyStore } from "./sp-keys.ts";
import { encryptionKeyRoutes } from "./encryption-admin.ts";
import { testSignInRoutes } from "./test-sign-in.ts";
import { TEST_TABLES, TestSignInStore } from "./test-store.ts";
import { PATHS, PERMISSIONS, type Saml, SAML_EVENTS, type SamlConfig } from "./shared.ts";

export type { SamlConfig } from "./shared.ts";

const ConfigSchema = v.object({
  requestTtlSeconds: secondsSetting(60, 3600, 600),
  clockSkewSeconds: secondsSetting(0, 300, 120),
  metadataRefreshSeconds: secondsSetting(300, 7 * 24 * 3600, 24 * 3600),
});

const connection = { connectionId: eventField.string("the organization's SAML connection") };
const EVENTS: readonly PluginEventKind[] = [
  {
    kind: SAML_EVENTS.signIn,
    description: "a user signed in through an organization's SAML identity provider",
    securityLedger: true,
    payload: {
      ...connection,
      sessionId: eventField.string("the session opened"),
      initiatedBy: eventField.string("`sp` (svc sent the request) or `idp` (unsolicited response)"),
    },
  },
  {
    kind: SAML_EVENTS.linked,
    description: "a SAML identity (connection and NameID) was linked to a user",
    securityLedger: true,
    payload: {
      ...connection,
      how: eventField.string("`signed_in` (an existing user) or `provisioned` (a new one)"),
    },
  },
  {
    kind: SAML_EVENTS.provisioned,
    description: "a user was created just in time from a SAML assertion",
    securityLedger: true,
    payload: connection,
  },
  {
    kind: SAML_EVENTS.refused,
    description: "a SAML sign-in was refused (the reason is in the event; the browser sees one page)",
    payload: {
      connectionId: eventField.string("the connection, when the response named a known one", {
        nullable: true,
      }),
      reason: eventField.string("why"),
    },
  },
  {
    kind: SAML_EVENTS.certificateExpiring,
    description:
      "a SAML connection's IdP signing certificate entered the 30 days before its expiry (once per certificate and connection)",
    payload: {
      ...connection,
      sha256: eventField.string("the certificate's SHA-256 fingerprint"),
      notAfter: eventField.string("when it expires (ISO 8601)"),
    },
  },
];

/** What the SAML plugin is built with (tests drive the maintenance job themselves). */
export interface SamlPluginOptions {
  /** Whether the maintenance job (certificate expiry, metadata refresh) polls in the background (default true). */
  readonly maintenanceWorker?: boolean;
  /** The maintenance job's batch size and poll interval. */
  readonly maintenance?: MaintenanceOptions;
}

/** The SAML plugin, with its maintenance job (once started). */
export type SamlPlugin = SvcPlugin<SamlConfig> & {
  /** The maintenance job (certificate expiry, metadata refresh), or null before `start`. */
  maintenance(): SamlMaintenance | null;
};

/** Builds the SAML plugin. */
export function samlPlugin(options: SamlPluginOptions = {}): SamlPlugin {
  let saml: Saml | null = null;
  let maintenance: SamlMaintenance | null = null;
  const started = (): Saml => {
    if (saml === null) throw new Error("saml: not started");
    return saml;
  };
  const plugin = definePlugin<SamlConfig>({
    name: "saml",
    permissions: [
      { id: PERMISSIONS.readGlobal, description: "Read the realm's SAML connections." },
      { id: PERMISSIONS.manageGlobal, description: "Add, change and delete the realm's SAML connections." },
      { id: PERMISSIONS.readOrg, description: "Read the organization's SAML connections." },
      {
        id: PERMISSIONS.manageOrg,
        description: "Add, change and delete the organization's SAML connections.",
      },
    ],
    config: {
      schema: ConfigSchema,
      settings: [
        {
          env: "SVC_SAML_REQUEST_TTL_SECONDS",
          key: "requestTtlSeconds",
          doc: "how long a sign-in at a SAML IdP may take",
          defaultText: "600",
        },
        {
          env: "SVC_SAML_CLOCK_SKEW_SECONDS",
          key: "clockSkewSeconds",
          doc: "clock skew allowed between svc and SAML IdPs (0 to 300)",
          defaultText: "120",
        },
        {
          env: "SVC_SAML_METADATA_REFRESH_SECONDS",
          key: "metadataRefreshSeconds",
          doc:
            "how often IdP metadata given by URL is fetched again (300 to 604800; after a failure, hourly)",
          defaultText: "86400",
        },
      ],
    },
    tables: [...TABLES, ...SP_KEY_TABLES, ...TEST_TABLES],
    events: EVENTS,
    start(ctx) {
      const { pathBase } = ctx.svcConfig.server;
      const absolute = (path: string) => publicUrl(ctx.svcConfig.server, path);
      saml = {
        ctx,
        connections: new ConnectionStore(ctx),
        requests: new RequestStore(ctx, ctx.config.requestTtlSeconds * 1000),
        spKeys: new SpKeyStore(ctx),
        tests: new TestSignInStore(ctx),
        urls: (id) => ({
          spEntityId: absolute(PATHS.metadata(id)),
          metadataUrl: absolute(PATHS.metadata(id)),
          acsUrl: absolute(PATHS.acs(id)),
          startUrl: absolute(PATHS.start(id)),
        }),
        path: (path) => `${pathBase}${path}`,
      };
      maintenance = new SamlMaintenance(saml, options.maintenance);
      if (options.maintenanceWorker ?? true) maintenance.start();
    },
    async stop() {
      await maintenance?.stop();
    },
    async readiness(ctx) {
      started();
      await ctx.sql.query("SELECT 1 FROM saml_connections LIMIT 1");
    },
    async discoverSignIn(_ctx, request) {
      const connection = await connectionForDomain(started(), request.realmId, request.domain);
      if (connection === null || connection.idpSsoUrl === null) return null;
      const query = new URLSearchParams();
      if (request.returnTo !== null) query.set("returnTo", request.returnTo);
      const tail = query.size === 0 ? "" : `?${query}`;
      return { path: `${PATHS.start(connection.id)}${tail}` };
    },
    mount() {
      const s = started();
      return [flowRoutes(s), adminRoutes(s), encryptionKeyRoutes(s), testSignInRoutes(s, s.tests)];
    },
  });
  return Object.assign(plugin, { maintenance: () => maintenance });
}
