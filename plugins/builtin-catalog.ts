/**
 * The built-in plugins as `svc start` and `svc help` meet them: each one's name and the variables
 * it reads, known without loading it, and its module loaded only when asked for. A server loads
 * the plugins `SVC_PLUGINS` enables and no other: the five modules and their packages (SAML's XML
 * signature and ASN.1 libraries among them) weigh 8 to 11 MiB resident on a server that uses
 * none of them (docs/operations/memory.md). `test/plugins/builtin_catalog_test.ts` checks this catalog against
 * the plugins themselves (`builtinPlugins()`).
 *
 * @module
 */
import type { SvcPlugin } from "./plugin.ts";

/** A built-in plugin before it is loaded. */
export interface BuiltinPluginEntry {
  /** The plugin's name, as `SVC_PLUGINS` names it. */
  readonly name: string;
  /** The variables its settings read (`config.settings[].env`), for the unknown-variable check. */
  readonly env: readonly string[];
  /** Imports the plugin's module and builds the plugin. */
  load(): Promise<SvcPlugin>;
}

/** The built-in plugins, in the order `builtinPlugins()` lists them. */
export const BUILTIN_PLUGINS: readonly BuiltinPluginEntry[] = [
  {
    name: "oidc-provider",
    env: [
      "SVC_OIDC_REALM",
      "SVC_OIDC_SIGN_IN_URL",
      "SVC_OIDC_CODE_TTL_SECONDS",
      "SVC_OIDC_DPOP_NONCE_REQUIRED",
      "SVC_OIDC_REGISTRATION",
      "SVC_OIDC_ID_TOKEN_TTL_SECONDS",
    ],
    load: async () => (await import("./oidc-provider/mod.ts")).oidcProviderPlugin(),
  },
  {
    name: "federation",
    env: [
      "SVC_FEDERATION_ALLOW_HTTP_ISSUERS",
      "SVC_FEDERATION_STATE_TTL_SECONDS",
      "SVC_FEDERATION_DISCOVERY_TTL_SECONDS",
    ],
    load: async () => (await import("./federation/mod.ts")).federationPlugin(),
  },
  {
    name: "workload-federation",
    env: ["SVC_WORKLOAD_REALM", "SVC_WORKLOAD_MAX_TOKEN_LIFETIME_SECONDS"],
    load: async () => (await import("./workload-federation/mod.ts")).workloadFederationPlugin(),
  },
  {
    name: "scim",
    env: [
      "SVC_SCIM_DEFAULT_OVERLAP_SECONDS",
      "SVC_SCIM_MAX_BODY_BYTES",
      "SVC_SCIM_BULK_MAX_OPERATIONS",
      "SVC_SCIM_BULK_MAX_PAYLOAD_BYTES",
    ],
    load: async () => (await import("./scim/mod.ts")).scimPlugin(),
  },
  {
    name: "saml",
    env: ["SVC_SAML_REQUEST_TTL_SECONDS", "SVC_SAML_CLOCK_SKEW_SECONDS", "SVC_SAML_METADATA_REFRESH_SECONDS"],
    load: async () => (await import("./saml/mod.ts")).samlPlugin(),
  },
];

/**
 * Loads the built-in plugins named in `names` (every one when `names` is undefined), in catalog
 * order; a name that is not a built-in plugin is skipped (`selectPlugins` reports it).
 */
export async function loadBuiltinPlugins(names?: readonly string[]): Promise<SvcPlugin[]> {
  const wanted = BUILTIN_PLUGINS.filter((entry) => names === undefined || names.includes(entry.name));
  return await Promise.all(wanted.map((entry) => entry.load()));
}
