/**
 * Installing plugins at boot: which plugins run (the host's plus the built-ins `SVC_PLUGINS`
 * names), their config sections validated with svc's one-line errors, their tables created,
 * their contexts built, their readiness checks, start and stop hooks, and their claims merged.
 *
 * @module
 */
import { CompiledQuery, type Kysely } from "kysely";
import * as v from "valibot";
import { type AuditActor, runAdminMutation } from "../core/audit/mutation.ts";
import { type Clock, systemClock } from "../core/clock.ts";
import { ConfigError, type SettingRow, settingShape, shapeBounds } from "../core/config/mod.ts";
import type { EventPublisher } from "../core/events/publisher.ts";
import type { SubjectSnapshots } from "../core/snapshots/service.ts";
import { refuseUnderImpersonation } from "../http/admin/kit.ts";
import { auditActor } from "../http/auth/audit-actor.ts";
import { applyDdlOnce } from "../storage/open.ts";
import {
  authorityOf,
  EscalationRefusedError,
  handedOutBy,
  permissionUniverseOf,
  realmOnlyFence,
  requireAuthorityOver,
  SubjectBeyondAuthorityError,
  subjectGrantsOf,
} from "../http/admin/authority.ts";
import { callerAuthority } from "../core/authority/mod.ts";
import type { Grant } from "../core/authz/mod.ts";
import { reactivateUser, suspendUser } from "../core/accounts/suspension.ts";
import { eraseUser } from "../core/audit/erasure.ts";
import type { SessionEndAnnouncer } from "../core/sessions/ended.ts";
import type { Storage } from "../core/storage/storage.ts";
import type { SvcConfig } from "../core/config/mod.ts";
import { type EventCatalogEntry, extendEventCatalog, isSecurityLedgerKind } from "../core/events/catalog.ts";
import {
  checkPlugins,
  type ClaimRequest,
  type PluginAdmin,
  type PluginContext,
  PluginError,
  type PluginSetting,
  type PluginSql,
  type PluginTokenGrant,
  type SignInStepAnswer,
  type SvcPlugin,
} from "./plugin.ts";
import type { SignInDiscoverer } from "../http/routes/sign-in-discovery.ts";

/** Claims no contributor may set: those the issuing code sets itself. */
export const RESERVED_CLAIMS: ReadonlySet<string> = new Set([
  "iss",
  "sub",
  "aud",
  "exp",
  "iat",
  "nbf",
  "jti",
  "nonce",
  "azp",
  "auth_time",
  "at_hash",
  "c_hash",
  "sid",
  "realm",
  "org",
  "mfa",
  "act",
  "scope",
  "client_id",
  "acr",
  "amr",
]);

/**
 * The plugins that run: every plugin the host passes, then the built-ins `enabled` names (a
 * name of a host plugin is accepted and installs it once). An unknown name is a `ConfigError`,
 * which lists `builtinNames`: every built-in plugin's name, when `builtins` holds only the loaded ones.
 */
export function selectPlugins(
  enabled: readonly string[],
  builtins: readonly SvcPlugin[],
  hostPlugins: readonly SvcPlugin[],
  builtinNames: readonly string[] = builtins.map((plugin) => plugin.name),
): SvcPlugin[] {
  const chosen = [...hostPlugins];
  for (const name of enabled) {
    if (chosen.some((plugin) => plugin.name === name)) continue;
    const builtin = builtins.find((plugin) => plugin.name === name);
    if (builtin === undefined) {
      const known = [...builtinNames, ...hostPlugins.map((plugin) => plugin.name)];
      throw new ConfigError(
        `config: SVC_PLUGINS: ${
          JSON.stringify(name)
        } is not a plugin of svc; set SVC_PLUGINS to names among ${
          known.length > 0 ? known.join(", ") : "(none available)"
        }`,
      );
    }
    chosen.push(builtin);
  }
  checkPlugins(chosen);
  return chosen;
}

/** Every variable the plugins read, for the unknown-variable check. */
export function pluginEnvNames(plugins: readonly SvcPlugin[]): string[] {
  return plugins.flatMap((plugin) => (plugin.config?.settings ?? []).map((setting) => setting.env));
}

/** The `svc help` rows of the plugins' settings, their type and bounds read from each plugin's schema. */
export function pluginHelpRows(plugins: readonly SvcPlugin[]): SettingRow[] {
  return plugins.flatMap((plugin) =>
    (plugin.config?.settings ?? []).map((s): SettingRow => {
      const entries = (plugin.config!.schema as { entries?: Record<string, unknown> }).entries;
      const field = entries?.[s.key];
      if (field === undefined) {
        throw new Error(`plugin ${plugin.name}: ${s.env} sets ${s.key}, not in its schema`);
      }
      const shape = settingShape(field);
      return {
        name: s.env,
        type: shape.type,
        bounds: shapeBounds(shape),
        shape,
        defaultText: s.defaultText ?? "unset",
        doc: `plugin ${plugin.name}: ${s.doc}`,
      };
    })
  );
}

/**
 * A plugin's config section: `plugins.config.<name>` of the file, the plugin's variables over it,
 * validated by its schema. A problem is a `ConfigError` of one line naming the variable (or the
 * file's field), the value and what to set.
 */
export function loadPluginConfig(
  plugin: SvcPlugin,
  config: SvcConfig,
  env: Record<string, string | undefined>,
): unknown {
  const section = plugin.config;
  if (section === undefined) return undefined;
  const raw: Record<string, unknown> = { ...(config.plugins.config[plugin.name] ?? {}) };
  const fromEnv = new Map<string, PluginSetting>();
  for (const setting of section.settings ?? []) {
    const text = env[setting.env];
    if (text === undefined || text === "") continue;
    raw[setting.key] = text;
    fromEnv.set(setting.key, setting);
  }
  const parsed = v.safeParse(section.schema, raw);
  if (parsed.success) return parsed.output;
  const issue = parsed.issues[0];
  const path = v.getDotPath(issue) ?? "";
  const key = path.split(".")[0];
  const setting = fromEnv.get(key) ?? section.settings?.find((s) => s.key === key);
  const name = fromEnv.has(key) && setting
    ? setting.env
    : `plugins.config.${plugin.name}${path === "" ? "" : `.${path}`} in the config file${
      setting ? ` (or ${setting.env})` : ""
    }`;
  const value = issue.input === undefined
    ? "not set"
    : setting?.secret
    ? "(hidden value)"
    : JSON.stringify(issue.input);
  return throwConfig(
    `config: ${name}: ${value === "not set" ? value : `${value} is not valid`} (plugin ${plugin.name}: ${
      issue.message.replaceAll("\n", " ")
    }); set ${setting?.env ?? name} to ${issue.expected ?? "a valid value"}`,
  );
}

function throwConfig(message: string): never {
  throw new ConfigError(message);
}

/** SQL on a database for plugins (raw text with `$n` parameters). */
// deno-lint-ignore no-explicit-any
export function pluginSql(db: Kysely<any>): PluginSql {
  return {
    async query<R>(text: string, params: readonly unknown[] = []): Promise<R[]> {
      const result = await db.executeQuery<R>(CompiledQuery.raw(text, [...params]));
      return [...result.rows];
    },
  };
}

/**
 * Creates the plugins' tables (their statements are idempotent): each plugin's statements in one
 * transaction under svc's schema lock, once per version of them, so that instances booting at once
 * on one database neither collide nor deadlock.
 */
// deno-lint-ignore no-explicit-any
export async function ensurePluginTables(db: Kysely<any>, plugins: readonly SvcPlugin[]): Promise<void> {
  for (const plugin of plugins) {
    try {
      await applyDdlOnce(db, `plugin:${plugin.name}`, plugin.tables ?? []);
    } catch (err) {
      throw new PluginError(`plugin ${plugin.name}: tables: ${(err as Error).message.split("\n")[0]}`);
    }
  }
}

/** The event catalog with the plugins' kinds. */
export function pluginEventCatalog(plugins: readonly SvcPlugin[]): readonly EventCatalogEntry[] {
  try {
    return extendEventCatalog(plugins.flatMap((plugin) =>
      (plugin.events ?? []).map((event) => ({
        kind: event.kind,
        description: `${event.description} (plugin ${plugin.name})`,
        securityLedger: event.securityLedger ?? isSecurityLedgerKind(event.kind),
        ...(event.payload !== undefined ? { payload: event.payload } : {}),
      }))
    ));
  } catch (err) {
    throw new PluginError(`plugins: events: ${(err as Error).message}`);
  }
}

/** Merges every plugin's claims for a token; reserved claims and failures of one plugin are dropped. */
export function claimMerger(
  plugins: readonly SvcPlugin[],
  logError: (line: string) => void,
): (request: ClaimRequest) => Promise<Record<string, unknown>> {
  const contributors = plugins.filter((plugin) => plugin.claims !== undefined);
  return async (request) => {
    const out: Record<string, unknown> = {};
    for (const plugin of contributors) {
      let claims: Record<string, unknown>;
      try {
        claims = await plugin.claims!(request);
      } catch (err) {
        logError(`plugin ${plugin.name}: claims failed: ${(err as Error).message.split("\n")[0]}`);
        continue;
      }
      for (const [name, value] of Object.entries(claims)) {
        if (!RESERVED_CLAIMS.has(name) && !(name in out) && value !== undefined) out[name] = value;
      }
    }
    return out;
  };
}

/** A plugin with its context, ready to mount, check, start and stop. */
export interface InstalledPlugin {
  /** The plugin, as the host passed it to svc. */
  readonly plugin: SvcPlugin;
  /** What svc gives this plugin; passed to its hooks (such as `discoverSignIn`). */
  readonly context: PluginContext;
}

/**
 * Home-realm discovery over the installed plugins' sign-in steps: the first plugin whose
 * `discoverSignIn` answers a path wins; a plugin that throws or answers something that is not a
 * path of svc is skipped and logged (sign-in then continues as usual).
 */
export function signInDiscoverer(
  installed: readonly InstalledPlugin[],
  logError: (line: string) => void,
): SignInDiscoverer {
  const steps = installed.filter((entry) => entry.plugin.discoverSignIn !== undefined);
  return async (request) => {
    for (const { plugin, context } of steps) {
      let answer: SignInStepAnswer | null;
      try {
        answer = await plugin.discoverSignIn!(context, request);
      } catch (err) {
        logError(`plugin ${plugin.name}: sign-in discovery failed: ${(err as Error).message.split("\n")[0]}`);
        continue;
      }
      if (answer === null) continue;
      if (!isSvcPath(answer.path)) {
        logError(`plugin ${plugin.name}: sign-in discovery answered a path that is not a path of svc`);
        continue;
      }
      return answer;
    }
    return null;
  };
}

/** A path of svc: one leading `/`, never `//host` or a backslash, no control characters. */
function isSvcPath(path: unknown): path is string {
  // deno-lint-ignore no-control-regex
  return typeof path === "string" && /^\/(?![/\\])/.test(path) && !/[\\\u0000-\u001f\u007f]/.test(path) &&
    path.length <= 4096;
}

/** What {@link pluginAdmin} needs: svc's storage, subject snapshots and event publisher. */
export interface PluginAdminDeps {
  /** Where admin mutations write, with their audit entries. */
  readonly storage: Storage;
  /** The callers' subject snapshots, for `fence` and `scope`. */
  readonly snapshots: SubjectSnapshots;
  /** Records the events of admin mutations in their transaction; without it, none are recorded. */
  readonly publisher?: EventPublisher;
  /** The permissions the installed plugins declare (the authority rule judges them with svc's). */
  readonly pluginPermissions?: readonly string[];
  /** The plugin these helpers are for: its name prefixes its service actors' ids (default `plugin`). */
  readonly pluginName?: string;
  /** The clock of suspensions (default: the system clock). */
  readonly clock?: Clock;
  /** Told of the sessions a suspension ends (the auth stack's ended-session set). */
  readonly sessions?: SessionEndAnnouncer;
}

/** The grant that confines a component to one organization: every organization permission there. */
const ORGANIZATION_WIDE = "*:*:*";

/** The admin helpers plugins get in their context (`PluginContext.admin`). */
export function pluginAdmin(deps: PluginAdminDeps): PluginAdmin {
  const pluginName = deps.pluginName ?? "plugin";
  const serviceActor = (actorId: string): AuditActor => ({ id: `${pluginName}:${actorId}`, kind: "System" });
  const suspensionDeps = () => ({
    storage: deps.storage,
    clock: deps.clock ?? systemClock,
    publisher: deps.publisher,
    sessions: deps.sessions,
    snapshots: deps.snapshots,
  });
  return {
    async fence(c, permissions) {
      return (await realmOnlyFence(c, deps.snapshots, { global: permissions })).principal;
    },
    scope(c, permissions) {
      return realmOnlyFence(c, deps.snapshots, permissions);
    },
    async requireAuthorityOver(caller, subject) {
      await requireAuthorityOver(deps, { principal: caller, global: true, orgId: null }, subject);
    },
    async mutate(caller, work) {
      refuseUnderImpersonation(caller);
      return (await runAdminMutation(deps, caller.realmId, auditActor(caller), work)).value;
    },
    async mutateAsService(realmId, actorId, work) {
      return (await runAdminMutation(deps, realmId, serviceActor(actorId), work)).value;
    },
    async suspendUser(realmId, userId, actorId, options = {}) {
      const report = await suspendUser(suspensionDeps(), realmId, userId, serviceActor(actorId), {
        reason: options.reason,
        authorize: options.authorize === undefined ? undefined : (tx) => options.authorize!(tx),
      });
      const swept = report.sessionsEnded + report.refreshTokensRevoked + report.apiKeysRevoked;
      return { changed: !report.wasSuspended || swept > 0 };
    },
    async reactivateUser(realmId, userId, actorId, options = {}) {
      const before = await deps.storage.users.get(userId);
      const after = await reactivateUser(suspensionDeps(), realmId, userId, serviceActor(actorId), {
        authorize: options.authorize === undefined ? undefined : (tx) => options.authorize!(tx),
      });
      return { changed: before?.status !== after.status };
    },
    async requireConfinedToOrganization(realmId, orgId, subject, tx) {
      const grants = await subjectGrantsOf(deps, realmId, subject, tx);
      if (grants === null) return;
      const authority = callerAuthority(
        {
          callerId: `${pluginName}:organization:${orgId}`,
          realmId,
          realmWide: false,
          orgId,
          grants: [{
            pattern: ORGANIZATION_WIDE,
            effect: "Allow",
            orgId: orgId.toLowerCase(),
            source: pluginName,
          }],
        },
        permissionUniverseOf(deps),
      );
      const missing = authority.missingOver(grants);
      if (missing.length > 0) throw new SubjectBeyondAuthorityError(missing);
    },
    async requireMayHandOutRoles(scope, roleIds) {
      const grants: Grant[] = [];
      for (const id of roleIds) grants.push(...await handedOutBy(deps.storage, { kind: "Role", id }) ?? []);
      if (grants.length === 0) return;
      const contexts = grants.flatMap((g) => g.orgId ? [g.orgId] : []);
      const missing = (await authorityOf(deps, scope, contexts)).missingOver(grants);
      if (missing.length > 0) {
        throw new EscalationRefusedError([...new Set(missing.map((m) => m.permission))].sort());
      }
    },
    async eraseUser(realmId, userId, actorId) {
      await eraseUser(suspensionDeps(), realmId, userId, serviceActor(actorId));
      await deps.snapshots.invalidateUser(userId);
    },
    async invalidateUser(userId) {
      await deps.snapshots.invalidateUser(userId);
    },
  };
}

/**
 * The extension grants of installed plugins, once their contexts exist (`PluginContext.tokenGrants`
 * reads it late, so every context sees every plugin's grants). A grant type served twice is kept
 * for the first plugin and reported.
 */
export function tokenGrantRegistry(): {
  readonly list: () => readonly PluginTokenGrant[];
  install(installed: readonly InstalledPlugin[], logError: (line: string) => void): void;
} {
  let grants: readonly PluginTokenGrant[] = [];
  return {
    list: () => grants,
    install(installed, logError) {
      const byType = new Map<string, PluginTokenGrant>();
      for (const { plugin, context } of installed) {
        for (const grant of plugin.tokenGrants?.(context) ?? []) {
          if (byType.has(grant.grantType)) {
            logError(`plugin ${plugin.name}: grant type ${grant.grantType} is already served; ignored`);
          } else byType.set(grant.grantType, grant);
        }
      }
      grants = [...byType.values()];
    },
  };
}
