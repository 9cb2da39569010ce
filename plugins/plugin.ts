/**
 * The plugin contract (v2): a typed object whose every part is optional. A plugin may bring
 * routes, the permissions those routes check, an event subscriber, a config section (a valibot
 * schema validated at boot with svc's one-line errors and listed by `svc help`), its own tables
 * (created idempotently with svc's, every name prefixed by the plugin), a readiness check,
 * start/stop hooks, claim contributors for the access and ID tokens plugins issue, steps in the
 * sign-in flow (home-realm discovery: an email typed at sign-in sends the browser to the plugin,
 * for example to an upstream identity provider), extension grants served at token endpoints, and
 * the event kinds it emits (added to the event catalog). Its admin routes fence and audit through
 * {@link PluginContext.admin}, and document themselves with `documented()` for the OpenAPI document.
 *
 * Built-in plugins are enabled with `SVC_PLUGINS=oidc-provider,…`; hosts pass their own to the CLI
 * (`runCli(args, runtime, { plugins })`). A plugin reaches svc only through the
 * {@link PluginContext} it is given and what `mod.ts` exports.
 *
 * @module
 */
import type { Context } from "hono";
import type * as v from "valibot";
import type { AdminMutationContext, AdminMutationResult } from "../core/audit/mutation.ts";
import { parsePermissionId } from "../core/authz/mod.ts";
import type { Clock } from "../core/clock.ts";
import type { SvcConfig } from "../core/config/mod.ts";
import { SvcError } from "../core/errors.ts";
import type { PermissionDefinition } from "../core/definitions/svc-permissions.ts";
import { EVENT_FAMILIES } from "../core/events/catalog.ts";
import type { EventPayload } from "../core/events/payload.ts";
import type { OutboundFetch } from "../core/net/outbound.ts";
import type { EventSink, EventSubscriber } from "../core/events/sink.ts";
import type { KeyRing } from "../core/keys/ring.ts";
import type { LoginPipeline } from "../core/login/pipeline.ts";
import type { RandomSource } from "../core/random.ts";
import type { SessionService } from "../core/sessions/service.ts";
import type { TokenService } from "../core/tokens/service.ts";
import type { RouteInstaller } from "../http/app.ts";
import type { FenceScope } from "../http/auth/fence.ts";
import type { Authenticator, Principal } from "../http/auth/principal.ts";
import type { CookieSettings } from "../http/auth/cookies.ts";
import type { Storage } from "../core/storage/storage.ts";

/** One environment variable of a plugin's config section. */
export interface PluginSetting {
  /** The variable, `SVC_<PLUGIN>_…` (for example `SVC_OIDC_SIGN_IN_URL`). */
  readonly env: string;
  /** The field of the section it sets. */
  readonly key: string;
  /** What it means, for `svc help`. */
  readonly doc: string;
  /** The default as text, for `svc help` (default: "unset"). */
  readonly defaultText?: string;
  /** Never echo the value in errors. */
  readonly secret?: boolean;
}

/**
 * A plugin's config section: the file's `plugins.config.<name>` object, with the fields named by
 * `settings` overridden by their environment variables (as text), validated by `schema`.
 */
export interface PluginConfigSection<C> {
  /** Validates the section; its output is `context.config`. */
  readonly schema: v.GenericSchema<unknown, C>;
  /** The section's fields that environment variables set, for `svc help`. */
  readonly settings?: readonly PluginSetting[];
}

/** An event kind a plugin emits, for the catalog. */
export interface PluginEventKind {
  /** `<family>.<name>`: a family of spec 6 (`oidc.code_reused`) or the plugin's own (`reports.generated`). */
  readonly kind: string;
  /** When it is emitted. */
  readonly description: string;
  /** Whether events that name a user are written to their security-event ledger. */
  readonly securityLedger?: boolean;
  /**
   * The fields of the events' `data` (built with `eventField`), shown in the event reference and
   * checked in svc's test beds. Never a secret.
   */
  readonly payload?: EventPayload;
}

/** What a claim contributor is asked about: the token being issued. */
export interface ClaimRequest {
  /** `access` or `id` token. */
  readonly token: "access" | "id";
  /** The realm the token is issued in. */
  readonly realmId: string;
  /** The user (or service account) the token is about. */
  readonly subject: string;
  /** The client (audience) the token is for. */
  readonly clientId: string;
  /** Scopes granted. */
  readonly scopes: readonly string[];
}

/**
 * What a sign-in step is asked at home-realm discovery: the email a person typed on the sign-in
 * page. A step decides from the email's domain only (never from whether an account exists), so
 * that its answer tells nobody who has an account.
 */
export interface SignInDiscoveryRequest {
  /** The email as typed, trimmed and lowercased. */
  readonly email: string;
  /** The part after the last `@`, lowercased. */
  readonly domain: string;
  /** The realm signing in. */
  readonly realmId: string;
  /** Where the browser goes after sign-in (already checked against the allowed origins), or null. */
  readonly returnTo: string | null;
}

/** A sign-in step's answer: send the browser to this path of svc (below the path base). */
export interface SignInStepAnswer {
  /** A path of one of the plugin's routes, such as `/federation/start?provider=…`; starts with one `/`. */
  readonly path: string;
}

/** Raw SQL on the plugin's own tables (`$1`, `$2` … placeholders). */
export interface PluginSql {
  /** Runs one statement and answers its rows. */
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]>;
}

/**
 * What a plugin's admin routes use, as svc's own admin routes do: the permission fence and
 * audited mutations (one entry in the realm's admin audit chain per change).
 */
export interface PluginAdmin {
  /**
   * The caller, who must hold one of `permissions` (global ones) realm-wide, by grants pinned
   * to no organization: 401 without a caller, 403 when none applies.
   */
  fence(c: Context, permissions: readonly string[]): Promise<Principal>;
  /**
   * The caller's scope for a capability held realm-wide (`global`: by grants pinned to no
   * organization; a global permission is realm-only for organization administrators) or in the
   * caller's own organization (`org`): 401 without a caller, 403 when neither applies.
   * `covers(scope, orgId)` tells whether it reaches an organization's resource (show anything
   * else as 404).
   */
  scope(
    c: Context,
    permissions: { readonly global: readonly string[]; readonly org?: readonly string[] },
  ): Promise<FenceScope>;
  /**
   * Throws 403 `subject_beyond_authority` unless `caller`, acting realm-wide, may act on the
   * subject (a user or service account of its realm; an unknown one passes, for the route to
   * refuse): everything the subject holds in any context (svc's and every plugin's permissions)
   * must be held by the caller there. Ask before letting a caller act as or for a subject, such
   * as a trust policy that maps to a service account.
   */
  requireAuthorityOver(
    caller: Principal,
    subject: { readonly kind: "User" | "ServiceAccount"; readonly id: string },
  ): Promise<void>;
  /**
   * Runs an admin change by `caller` in one transaction: `work` writes through `ctx.tx` (its
   * `pluginSql` for the plugin's tables) and answers the audit record, appended to the caller's
   * realm's audit chain in the same transaction, with the events it emits (announced after
   * commit). Refused under impersonation, like svc's own admin changes.
   */
  mutate<T>(
    caller: Principal,
    work: (ctx: AdminMutationContext) => Promise<AdminMutationResult<T>>,
  ): Promise<T>;
  /**
   * Runs a change that a component of the plugin makes on its own credential (a SCIM
   * connection, a directory sync) rather than a signed-in caller, as `mutate` does: one
   * transaction, the realm's audit lock, one audit entry when something changed. The entry's
   * actor kind is `System` and its actor id `<plugin name>:<actorId>` (for example
   * `scim:connection:<id>`), so that a plugin never writes under another's name.
   */
  mutateAsService<T>(
    realmId: string,
    actorId: string,
    work: (ctx: AdminMutationContext) => Promise<AdminMutationResult<T>>,
  ): Promise<T>;
  /**
   * Suspends a user through svc's suspend path, as the plugin's service actor `actorId` (see
   * {@link PluginAdmin.mutateAsService}): status `Suspended`, every session ends at once on every
   * instance, refresh tokens and API keys are revoked, `user.suspended` is emitted, one audit
   * entry (`user.suspend`); a repeat that changes nothing writes none. `authorize` runs in the
   * transaction once the user is found (throwing refuses). NotFoundError for a user of another realm.
   */
  suspendUser(
    realmId: string,
    userId: string,
    actorId: string,
    options?: { readonly reason?: string; readonly authorize?: (tx: Storage) => Promise<void> },
  ): Promise<{ readonly changed: boolean }>;
  /** Reactivates a suspended user as the plugin's service actor (`user.reactivated`, one audit entry; none for an active user). */
  reactivateUser(
    realmId: string,
    userId: string,
    actorId: string,
    options?: { readonly authorize?: (tx: Storage) => Promise<void> },
  ): Promise<{ readonly changed: boolean }>;
  /**
   * Throws 403 `subject_beyond_authority` unless everything `subject` holds (svc's and every
   * plugin's permissions, in every context) applies within organization `orgId` of `realmId` at
   * organization scope: what an administrator of that organization holding every organization
   * permission there, and nothing realm-wide, may act on. Ask before a component bound to one
   * organization (a SCIM connection) changes a user. With `tx`, reads through that transaction.
   * An unknown subject passes (for the caller to refuse).
   */
  requireConfinedToOrganization(
    realmId: string,
    orgId: string,
    subject: { readonly kind: "User" | "ServiceAccount"; readonly id: string },
    tx?: Storage,
  ): Promise<void>;
  /**
   * Throws 403 `escalation_refused` unless the caller of `scope` may hand out every grant the
   * roles `roleIds` carry (where they apply), as svc's role-assignment routes ask; unknown roles
   * pass (for the route to refuse). Ask before letting a caller configure roles that a plugin
   * will later assign on its own (for example a SCIM connection's group-to-role mapping).
   */
  requireMayHandOutRoles(scope: FenceScope, roleIds: readonly string[]): Promise<void>;
  /**
   * Erases a user through svc's erasure path (spec: personal data removed, sessions ended, keys
   * destroyed, `user.erased`), as the plugin's service actor `actorId`, with its audit entry.
   * NotFoundError for a user of another realm.
   */
  eraseUser(realmId: string, userId: string, actorId: string): Promise<void>;
  /** Evicts a user's cached authorization snapshots (after changing its memberships or groups outside `mutate`'s callers' routes). */
  invalidateUser(userId: string): Promise<void>;
}

/**
 * An extension grant (RFC 6749 section 4.5) a plugin serves at the OAuth token endpoint of
 * another plugin (the OIDC provider's `/oidc/token`), for example RFC 8693 token exchange.
 */
export interface PluginTokenGrant {
  /** The `grant_type` it answers (an absolute URI, such as `urn:ietf:params:oauth:grant-type:token-exchange`). */
  readonly grantType: string;
  /**
   * Answers a token request of this grant type: `form` holds the request's fields. No client was
   * authenticated: the grant carries its own credential. The answer has `Cache-Control: no-store`.
   */
  handle(c: Context, form: Readonly<Record<string, string>>): Promise<Response>;
}

/** What a plugin is given at boot, once svc's services exist. */
export interface PluginContext<C = unknown> {
  /** The plugin's name. */
  readonly name: string;
  /** The plugin's validated config section. */
  readonly config: C;
  /** svc's validated configuration (base URL, path base, token lifetimes…). */
  readonly svcConfig: SvcConfig;
  /** The source of the current time. */
  readonly clock: Clock;
  /** The source of random bytes. */
  readonly random: RandomSource;
  /** svc's stores (through their contracts). */
  readonly storage: Storage;
  /** SQL on the plugin's own tables. */
  readonly sql: PluginSql;
  /** The realms' signing keys (JWKS). */
  readonly keys: KeyRing;
  /** svc's typed tokens. */
  readonly tokens: TokenService;
  /** Sessions: sign-in, refresh rotation with reuse detection, logout. */
  readonly sessions: SessionService;
  /** The password login pipeline (abuse gate, risk, MFA hand-off). */
  readonly login: LoginPipeline;
  /** Resolves a request's caller (bearer, cookie, API key, service account). */
  readonly authenticator: Authenticator;
  /** svc's cookie settings (the cookie transport). */
  readonly cookies: CookieSettings;
  /** Emits events (after commit, to subscribers and webhooks). */
  readonly events: EventSink;
  /** The permission fence and audited mutations for the plugin's admin routes. */
  readonly admin: PluginAdmin;
  /**
   * svc's outbound guard: the only fetch a plugin may use for a server-side request (a JWKS URL,
   * an upstream provider…). Private, loopback and metadata addresses are refused after DNS
   * resolution unless the operator allows them (`outbound.allowPrivate`), redirects are followed
   * only when asked and re-checked per hop, the exchange is timed and the body capped; failures
   * are `OutboundError`s with stable codes. `outbound.refusal(url)` judges a URL without fetching.
   */
  readonly outbound: OutboundFetch;
  /**
   * Whether `plaintext` matches a secret svc stored hashed by its password hasher (`argon2id`,
   * or a verify-only tag such as `bcrypt`), for example an imported OAuth client's secret. False
   * for an unknown tag.
   */
  verifySecret(
    stored: { readonly algorithm: string; readonly hash: string },
    plaintext: string,
  ): Promise<boolean>;
  /** The claims every plugin contributes to a token (reserved claims are dropped). */
  contributeClaims(request: ClaimRequest): Promise<Record<string, unknown>>;
  /** The extension grants plugins serve (see {@link SvcPlugin.tokenGrants}), for a token endpoint. */
  tokenGrants(): readonly PluginTokenGrant[];
  /** Reports an error on stderr (never a secret). */
  logError(line: string): void;
}

/** A plugin. */
export interface SvcPlugin<C = unknown> {
  /** A unique name: 1 to 64 of `[a-z0-9-]`. */
  readonly name: string;
  /**
   * Permissions the plugin's routes check, each `<namespace>:<scope>:<action>` in the plugin's
   * own namespace (never the reserved `svc` service). A `global` one is realm-only: an
   * organization administrator never holds it or hands it out through an organization role.
   */
  readonly permissions?: readonly PermissionDefinition[];
  /**
   * The service segment of every permission the plugin declares (`[a-z0-9_-]+`, not `svc`);
   * default: the plugin's name. No two plugins share one.
   */
  readonly permissionNamespace?: string;
  /** Route modules, installed under the path base after svc's own routes. */
  readonly routes?: readonly RouteInstaller[];
  /** Route modules that need svc's services, built from the context (installed after `routes`). */
  mount?(context: PluginContext<C>): readonly RouteInstaller[];
  /** Receives every event svc emits, after its transaction commits; failures never reach svc. */
  readonly onEvent?: EventSubscriber;
  /** The plugin's config section. */
  readonly config?: PluginConfigSection<C>;
  /**
   * SQL statements creating the plugin's tables and indexes, run at every boot after svc's
   * schema: idempotent (`IF NOT EXISTS`), every name prefixed by the plugin (`oidc_provider_…`).
   */
  readonly tables?: readonly string[];
  /** A readiness check reported by `/readyz` as `plugin:<name>`. */
  readiness?(context: PluginContext<C>): Promise<void>;
  /** Runs once the context exists, before serving. */
  start?(context: PluginContext<C>): Promise<void> | void;
  /** Runs at shutdown, before storage closes. */
  stop?(): Promise<void> | void;
  /** Adds claims to the access and ID tokens plugins issue. */
  claims?(request: ClaimRequest): Record<string, unknown> | Promise<Record<string, unknown>>;
  /** The event kinds the plugin emits. */
  readonly events?: readonly PluginEventKind[];
  /**
   * A step in the sign-in flow (home-realm discovery): given the email typed on the hosted
   * sign-in page, answer a path of the plugin to send the browser to (for example an upstream
   * identity provider's start route), or null to let sign-in continue as usual. Decide from the
   * domain only, never from whether the account exists. Served as `POST /auth/sign-in/discover`;
   * the first plugin that answers wins, and a plugin that throws is skipped (and logged).
   */
  discoverSignIn?(
    context: PluginContext<C>,
    request: SignInDiscoveryRequest,
  ): Promise<SignInStepAnswer | null> | SignInStepAnswer | null;
  /** Extension grants the plugin serves at other plugins' token endpoints (built from its context). */
  tokenGrants?(context: PluginContext<C>): readonly PluginTokenGrant[];
}

/** A plugin definition that cannot be installed. Code `plugin_invalid`. */
export class PluginError extends SvcError {
  /** A plugin problem found before boot; the message names the plugin. */
  constructor(message: string) {
    super("plugin_invalid", message, 500);
    this.name = "PluginError";
  }
}

const NAME = /^[a-z0-9-]{1,64}$/;
const KIND = /^[a-z0-9_]+(?:\.[a-z0-9_]+)+$/;
const FAMILIES = new Set<string>(EVENT_FAMILIES);
const CREATE = /^\s*create\s+(?:unique\s+)?(table|index)\s+if\s+not\s+exists\s+("?)([a-z0-9_]+)\2(.*)$/is;
const ON_TABLE = /^\s+on\s+("?)([a-z0-9_]+)\1/i;
const ENV_NAME = /^SVC_[A-Z0-9_]+$/;

/** The prefix of a plugin's tables: its name with `-` as `_`, then `_` (`oidc_provider_`). */
export function pluginTablePrefix(name: string): string {
  return `${name.replaceAll("-", "_")}_`;
}

/** The service segment of a plugin's permissions: its `permissionNamespace`, else its name. */
export function permissionNamespaceOf(plugin: Pick<SvcPlugin, "name" | "permissionNamespace">): string {
  return plugin.permissionNamespace ?? plugin.name;
}

/**
 * Checks a plugin definition and returns it unchanged (literal types kept).
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
export function definePlugin<C = unknown>(plugin: SvcPlugin<C>): SvcPlugin<C> {
  if (!NAME.test(plugin.name)) {
    throw new PluginError(`plugin ${JSON.stringify(plugin.name)}: a name is 1 to 64 of [a-z0-9-]`);
  }
  const at = `plugin ${plugin.name}`;
  for (const permission of plugin.permissions ?? []) {
    try {
      parsePermissionId(permission.id);
    } catch (error) {
      if (!(error instanceof SvcError)) throw error;
      throw new PluginError(`${at}: permission ${JSON.stringify(permission.id)}: ${error.message}`);
    }
    if (permission.id.startsWith("svc:")) {
      throw new PluginError(`${at}: permission ${permission.id}: the svc service is reserved`);
    }
    const namespace = permissionNamespaceOf(plugin);
    if (!permission.id.startsWith(`${namespace}:`)) {
      throw new PluginError(
        `${at}: permission ${permission.id}: a plugin's permissions are in its own namespace (${namespace}:…)`,
      );
    }
  }
  const prefix = pluginTablePrefix(plugin.name);
  for (const statement of plugin.tables ?? []) {
    const match = CREATE.exec(statement);
    if (match === null) {
      throw new PluginError(
        `${at}: tables: each statement is CREATE TABLE|INDEX IF NOT EXISTS <name> …; got ${
          JSON.stringify(statement.trim().slice(0, 60))
        }`,
      );
    }
    const [, what, , name, rest] = match;
    const names = [name];
    if (what.toLowerCase() === "index") {
      const on = ON_TABLE.exec(rest);
      if (on === null) throw new PluginError(`${at}: index ${name}: ON <table> is missing`);
      names.push(on[2]);
    }
    for (const n of names) {
      if (!n.toLowerCase().startsWith(prefix)) {
        throw new PluginError(`${at}: table or index ${n}: its name must start with ${prefix}`);
      }
    }
  }
  const pluginFamily = plugin.name.replaceAll("-", "_");
  for (const event of plugin.events ?? []) {
    const family = event.kind.slice(0, event.kind.indexOf("."));
    if (!KIND.test(event.kind) || (!FAMILIES.has(family) && family !== pluginFamily)) {
      throw new PluginError(
        `${at}: event ${
          JSON.stringify(event.kind)
        }: a kind is <family>.<name> of [a-z0-9_], in a family of svc or the plugin's own (${pluginFamily}.*)`,
      );
    }
  }
  for (const setting of plugin.config?.settings ?? []) {
    if (!ENV_NAME.test(setting.env)) {
      throw new PluginError(`${at}: setting ${setting.env}: a variable name is SVC_ then [A-Z0-9_]`);
    }
  }
  return plugin;
}

/**
 * Checks a set of plugins together: unique names, no permission, event kind, table or variable
 * published twice.
 */
export function checkPlugins(plugins: readonly SvcPlugin[]): void {
  const names = new Set<string>();
  const owners = new Map<string, string>();
  const claim = (what: string, key: string, plugin: string) => {
    const owner = owners.get(`${what} ${key}`);
    if (owner !== undefined) {
      throw new PluginError(`plugin ${plugin}: ${what} ${key} is already published by plugin ${owner}`);
    }
    owners.set(`${what} ${key}`, plugin);
  };
  for (const plugin of plugins) {
    definePlugin(plugin);
    if (names.has(plugin.name)) throw new PluginError(`plugin ${plugin.name}: installed twice`);
    names.add(plugin.name);
    for (const { id } of plugin.permissions ?? []) claim("permission", id, plugin.name);
    if ((plugin.permissions ?? []).length > 0) {
      claim("permission namespace", permissionNamespaceOf(plugin), plugin.name);
    }
    for (const { kind } of plugin.events ?? []) claim("event", kind, plugin.name);
    for (const { env } of plugin.config?.settings ?? []) claim("variable", env, plugin.name);
  }
}
