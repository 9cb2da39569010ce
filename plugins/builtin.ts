/**
 * The plugins that ship in the server and the binary, off unless `SVC_PLUGINS` names them.
 *
 * @module
 */
import { federationPlugin } from "./federation/mod.ts";
import { oidcProviderPlugin } from "./oidc-provider/mod.ts";
import type { SvcPlugin } from "./plugin.ts";
import { workloadFederationPlugin } from "./workload-federation/mod.ts";

/** The built-in plugins, by name. */
export const BUILTIN_PLUGINS: readonly SvcPlugin[] = [
  oidcProviderPlugin(),
  federationPlugin(),
  workloadFederationPlugin(),
];
