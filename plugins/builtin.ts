/**
 * The plugins that ship in the server and the binary, off unless `SVC_PLUGINS` names them.
 *
 * @module
 */
import { federationPlugin } from "./federation/mod.ts";
import { oidcProviderPlugin } from "./oidc-provider/mod.ts";
import type { SvcPlugin } from "./plugin.ts";
import { scimPlugin } from "./scim/mod.ts";
import { samlPlugin } from "./saml/mod.ts";
import { workloadFederationPlugin } from "./workload-federation/mod.ts";

/**
 * The built-in plugins, built when asked: each plugin module imports svc's public API (`mod.ts`),
 * which this module is part of, so building them while the modules load would depend on the order
 * a host imports them in.
 */
export function builtinPlugins(): readonly SvcPlugin[] {
  return [oidcProviderPlugin(), federationPlugin(), workloadFederationPlugin(), scimPlugin(), samlPlugin()];
}
