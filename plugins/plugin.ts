/**
 * The plugin contract: a typed object that adds routes, publishes the permissions those
 * routes check, and subscribes to svc's events. Hosts pass plugins to the CLI
 * (`runCli(args, runtime, { plugins })`); definition sync publishes their permissions at
 * boot beside svc's own and the configured ones.
 *
 * @module
 */
import { parsePermissionId } from "../core/authz/mod.ts";
import { SvcError } from "../core/errors.ts";
import type { PermissionDefinition } from "../core/definitions/svc-permissions.ts";
import type { EventSubscriber } from "../core/events/sink.ts";
import type { RouteInstaller } from "../http/app.ts";

/** A plugin. */
export interface SvcPlugin {
  /** A unique name: 1 to 64 of `[a-z0-9-]`. */
  readonly name: string;
  /** Permissions the plugin's routes check (never in the reserved `svc` service). */
  readonly permissions?: readonly PermissionDefinition[];
  /** Route modules, installed under the path base after svc's own routes. */
  readonly routes?: readonly RouteInstaller[];
  /** Receives every event svc emits, after its transaction commits; failures never reach svc. */
  readonly onEvent?: EventSubscriber;
}

/** A plugin definition that cannot be installed. Code `plugin_invalid`. */
export class PluginError extends SvcError {
  constructor(message: string) {
    super("plugin_invalid", message, 500);
    this.name = "PluginError";
  }
}

const NAME = /^[a-z0-9-]{1,64}$/;

/**
 * Checks a plugin definition and returns it unchanged.
 *
 * @example
 * ```ts
 * const reports = definePlugin({
 *   name: "reports",
 *   permissions: [{ id: "reports:org:read", description: "Read reports" }],
 *   routes: [(app) => app.get("/reports/health", (c) => c.json({ ok: true }))],
 *   onEvent: (event) => console.log(event.kind),
 * });
 * ```
 */
export function definePlugin<P extends SvcPlugin>(plugin: P): P {
  if (!NAME.test(plugin.name)) {
    throw new PluginError(`plugin ${JSON.stringify(plugin.name)}: a name is 1 to 64 of [a-z0-9-]`);
  }
  for (const permission of plugin.permissions ?? []) {
    try {
      parsePermissionId(permission.id);
    } catch (error) {
      if (!(error instanceof SvcError)) throw error;
      throw new PluginError(
        `plugin ${plugin.name}: permission ${JSON.stringify(permission.id)}: ${error.message}`,
      );
    }
    if (permission.id.startsWith("svc:")) {
      throw new PluginError(
        `plugin ${plugin.name}: permission ${permission.id}: the svc service is reserved`,
      );
    }
  }
  return plugin;
}

/** Checks a set of plugins together: unique names, no permission published twice. */
export function checkPlugins(plugins: readonly SvcPlugin[]): void {
  const names = new Set<string>();
  const permissions = new Map<string, string>();
  for (const plugin of plugins) {
    definePlugin(plugin);
    if (names.has(plugin.name)) throw new PluginError(`plugin ${plugin.name}: installed twice`);
    names.add(plugin.name);
    for (const { id } of plugin.permissions ?? []) {
      const owner = permissions.get(id);
      if (owner !== undefined) {
        throw new PluginError(
          `plugin ${plugin.name}: permission ${id} is already published by plugin ${owner}`,
        );
      }
      permissions.set(id, plugin.name);
    }
  }
}
