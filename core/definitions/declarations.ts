/**
 * Declarative authorization configuration, checked before boot: the permissions the
 * operator declares and the realm-level roles whose grants use them. A dotted or otherwise
 * malformed permission id, or a grant naming a permission id that nobody publishes, stops
 * boot with one line naming it.
 *
 * @module
 */
import { parseConditionDocument, parsePermissionId, parsePermissionPattern } from "../authz/mod.ts";
import { SvcError } from "../errors.ts";
import { type PermissionDefinition, SVC_PERMISSIONS } from "./svc-permissions.ts";

/** A declaration that stops boot. Code `definition_invalid`. */
export class DefinitionError extends SvcError {
  /** Makes the error from a message naming the offending declaration (one line). */
  constructor(message: string) {
    super("definition_invalid", message, 500);
    this.name = "DefinitionError";
  }
}

/** A permission as configured (`authz.permissions[]`). */
export interface DeclaredPermission {
  /** The permission id, `service:scope:action` (no dots; the `svc` service is reserved). */
  id: string;
  /** What the permission allows, shown in the catalog; empty when absent. */
  description?: string;
}

/** A grant of a configured role. */
export interface DeclaredGrant {
  /** The permission pattern granted: a published permission id, or a pattern with `*`. */
  pattern: string;
  /** Whether the grant allows or denies what the pattern matches. */
  effect: "Allow" | "Deny";
  /** Restricts the grant to these teams; none when absent. */
  teamIds?: string[];
  /** An ABAC condition document, checked at boot; absent or null: none. */
  condition?: unknown;
}

/** A role as configured (`authz.roles[]`): realm-level, in the default realm. */
export interface DeclaredRole {
  /** The role's key, unique among the declared roles. */
  key: string;
  /** The role's human-readable name. */
  displayName: string;
  /** The role's grants; sync makes the stored role have exactly these. */
  grants: DeclaredGrant[];
}

/** The checked declarations: every published permission (svc's first) and the roles. */
export interface DefinitionPlan {
  /** Every published permission: svc's, then the plugins', then the configured ones. */
  readonly permissions: readonly PermissionDefinition[];
  /** The declared roles, as configured. */
  readonly roles: readonly DeclaredRole[];
}

/**
 * Checks the declarations and returns what definition sync publishes: svc's permissions,
 * then the plugins' (already checked by `checkPlugins`), then the configured ones.
 *
 * @example
 * ```ts
 * const plan = planDefinitions({
 *   permissions: [{ id: "docs:org:read" }],
 *   roles: [{ key: "reader", displayName: "Reader", grants: [{ pattern: "docs:org:read", effect: "Allow" }] }],
 * });
 * plan.permissions.map((p) => p.id); // ["svc:global:authz-inspect", "svc:org:authz-inspect", "docs:org:read"]
 * ```
 */
export function planDefinitions(
  declared: { permissions: readonly DeclaredPermission[]; roles: readonly DeclaredRole[] },
  pluginPermissions: readonly PermissionDefinition[] = [],
): DefinitionPlan {
  const published = new Map<string, PermissionDefinition>();
  for (const permission of SVC_PERMISSIONS) published.set(permission.id, permission);
  const fromPlugins = new Set<string>();
  for (const permission of pluginPermissions) {
    published.set(permission.id, permission);
    fromPlugins.add(permission.id);
  }

  declared.permissions.forEach((permission, i) => {
    const where = `authz.permissions[${i}].id`;
    try {
      parsePermissionId(permission.id);
    } catch (error) {
      throw new DefinitionError(`definitions: ${where} ${JSON.stringify(permission.id)}: ${reason(error)}`);
    }
    if (permission.id.startsWith("svc:")) {
      throw new DefinitionError(
        `definitions: ${where} ${
          JSON.stringify(permission.id)
        }: the svc service is reserved for svc's own permissions; use another service name`,
      );
    }
    if (fromPlugins.has(permission.id)) {
      throw new DefinitionError(
        `definitions: ${where} ${
          JSON.stringify(permission.id)
        }: a plugin already publishes it; remove it here`,
      );
    }
    if (published.has(permission.id)) {
      throw new DefinitionError(
        `definitions: ${where} ${JSON.stringify(permission.id)}: declared twice; remove one`,
      );
    }
    published.set(permission.id, { id: permission.id, description: permission.description ?? "" });
  });

  const roleKeys = new Set<string>();
  declared.roles.forEach((role, r) => {
    if (roleKeys.has(role.key)) {
      throw new DefinitionError(
        `definitions: authz.roles[${r}].key ${JSON.stringify(role.key)}: declared twice; remove one`,
      );
    }
    roleKeys.add(role.key);
    role.grants.forEach((grant, g) => {
      const where = `authz.roles[${r}].grants[${g}]`;
      try {
        parsePermissionPattern(grant.pattern);
      } catch (error) {
        throw new DefinitionError(
          `definitions: ${where}.pattern ${JSON.stringify(grant.pattern)}: ${reason(error)}`,
        );
      }
      if (!grant.pattern.includes("*") && !published.has(grant.pattern)) {
        throw new DefinitionError(
          `definitions: ${where}.pattern ${
            JSON.stringify(grant.pattern)
          } names a permission id that is not published; declare it in authz.permissions or fix the grant`,
        );
      }
      if (grant.condition !== undefined && grant.condition !== null) {
        try {
          parseConditionDocument(grant.condition);
        } catch (error) {
          throw new DefinitionError(`definitions: ${where}.condition: ${reason(error)}`);
        }
      }
    });
  });

  return { permissions: [...published.values()], roles: declared.roles };
}

function reason(error: unknown): string {
  if (error instanceof SvcError) return error.message;
  throw error;
}
