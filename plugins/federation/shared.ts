/**
 * What the federation plugin's parts share: its settings, its services (providers, states,
 * upstreams), its paths, event kinds and permissions.
 *
 * @module
 */
import type { PluginContext } from "../../mod.ts";
import type { ProviderStore } from "./providers.ts";
import type { StateStore } from "./states.ts";
import type { Upstreams } from "./upstream.ts";

/** The plugin's config section. */
export interface FederationConfig {
  /** Accept `http:` upstream issuers (development and tests only). */
  readonly allowHttpIssuers: boolean;
  /** How long a sign-in at an upstream may take, in seconds. */
  readonly stateTtlSeconds: number;
  /** How long an upstream's discovery document is reused, in seconds. */
  readonly discoveryTtlSeconds: number;
}

/** The plugin's services, once started. */
export interface Federation {
  readonly ctx: PluginContext<FederationConfig>;
  readonly providers: ProviderStore;
  readonly states: StateStore;
  readonly upstreams: Upstreams;
  /** The absolute URL of the callback (the redirect URI registered at upstreams). */
  readonly callbackUrl: string;
  /** A path of svc with the path base. */
  path(path: string): string;
}

/** The plugin's browser routes, below the path base. */
export const PATHS = {
  start: "/federation/start",
  callback: "/federation/callback",
} as const;

/** The cookie binding a sign-in in flight to the browser that started it. */
export const STATE_COOKIE = "svc_federation_state";

/** The MFA level of a session opened through an upstream provider. */
export const FEDERATED_MFA_LEVEL = "Federated";

/** Kinds of the events the plugin emits. */
export const FEDERATION_EVENTS = {
  signIn: "federation.sign_in",
  linked: "federation.linked",
  provisioned: "federation.provisioned",
  refused: "federation.refused",
} as const;

/** The plugin's permissions. */
export const PERMISSIONS = {
  readGlobal: "federation:global:providers-read",
  manageGlobal: "federation:global:providers-manage",
  readOrg: "federation:org:providers-read",
  manageOrg: "federation:org:providers-manage",
} as const;
