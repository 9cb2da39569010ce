/**
 * What the SAML plugin's parts share: its settings, its services (connections, requests in
 * flight), its paths, event kinds and permissions.
 *
 * @module
 */
import type { PluginContext } from "../../mod.ts";
import type { ConnectionStore } from "./connections.ts";
import type { RequestStore } from "./requests.ts";
import type { SpKeyStore } from "./sp-keys.ts";
import type { TestSignInStore } from "./test-store.ts";

/** The plugin's config section. */
export interface SamlConfig {
  /** How long a sign-in at the IdP may take, in seconds. */
  readonly requestTtlSeconds: number;
  /** Allowed clock skew between svc and IdPs, in seconds. */
  readonly clockSkewSeconds: number;
  /** How often metadata fetched by URL is fetched again, in seconds. */
  readonly metadataRefreshSeconds: number;
}

/** The plugin's services, once started. */
export interface Saml {
  readonly ctx: PluginContext<SamlConfig>;
  readonly connections: ConnectionStore;
  readonly requests: RequestStore;
  /** The SP's own encryption keys, per connection. */
  readonly spKeys: SpKeyStore;
  /** Test sign-ins in flight and their results. */
  readonly tests: TestSignInStore;
  /** The SP's URLs for a connection (absolute). */
  urls(connectionId: string): SpUrls;
  /** A path of svc with the path base. */
  path(path: string): string;
}

/** The values an IdP is given for a connection. */
export interface SpUrls {
  /** The SP's entity id: its metadata URL. */
  readonly spEntityId: string;
  readonly acsUrl: string;
  readonly metadataUrl: string;
  /** Where SP-initiated sign-in starts. */
  readonly startUrl: string;
}

/** The plugin's browser routes, below the path base (`{id}` is the connection's). */
export const PATHS = {
  metadata: (id: string) => `/saml/${id}/metadata`,
  start: (id: string) => `/saml/${id}/start`,
  acs: (id: string) => `/saml/${id}/acs`,
} as const;

/** The cookie binding a sign-in in flight (its RelayState) to the browser that started it. */
export const RELAY_COOKIE = "svc_saml_relay";

/** The MFA level of a session opened through a SAML IdP. */
export const SAML_MFA_LEVEL = "Federated";

/** How long before a signing certificate expires an event is raised. */
export const CERTIFICATE_WARNING_MS = 30 * 24 * 3600_000;

/** Kinds of the events the plugin emits. */
export const SAML_EVENTS = {
  signIn: "saml.sign_in",
  linked: "saml.linked",
  provisioned: "saml.provisioned",
  refused: "saml.refused",
  certificateExpiring: "saml.certificate_expiring",
} as const;

/** The plugin's permissions. */
export const PERMISSIONS = {
  readGlobal: "saml:global:connections-read",
  manageGlobal: "saml:global:connections-manage",
  readOrg: "saml:org:connections-read",
  manageOrg: "saml:org:connections-manage",
} as const;
