/**
 * Every route module of a svc server, in installation order: the one list `svc start` serves
 * and tests walk (for example, to check that every mutating `/svc-admin` route appends to the
 * admin audit chain). Plugins add theirs after these.
 *
 * @module
 */
import type { AccountFlows } from "../core/accounts/flows.ts";
import type { EventPublisher } from "../core/events/publisher.ts";
import type { SessionEndAnnouncer } from "../core/sessions/ended.ts";
import type { SubjectSnapshots } from "../core/snapshots/service.ts";
import type { Storage } from "../core/storage/storage.ts";
import type { RouteInstaller } from "./app.ts";
import type { AdminRouteDeps, TxtResolver } from "./admin/deps.ts";
import type { AbuseGate } from "../core/abuse/gate.ts";
import type { KeyRing } from "../core/keys/ring.ts";
import type { PasswordService } from "../core/passwords/service.ts";
import { directoryRoutes } from "./admin/directory/mod.ts";
import { policyRoutes } from "./admin/policies.ts";
import { roleAssignmentRoutes } from "./admin/role-assignments.ts";
import { roleRoutes } from "./admin/roles.ts";
import { adminUserRoutes } from "./admin/users.ts";
import { apiKeyRoutes } from "./admin/api-keys.ts";
import { serviceAccountRoutes } from "./admin/service-accounts.ts";
import { signingKeyRoutes } from "./admin/signing-keys.ts";
import type { SessionService } from "../core/sessions/service.ts";
import type { TokenService } from "../core/tokens/service.ts";
import { breakGlassRoutes } from "./admin/break-glass.ts";
import { breakGlassGuard } from "./auth/break-glass-guard.ts";
import { impersonationOrgFence } from "./auth/impersonation-org-fence.ts";
import { impersonationRoutes } from "./admin/impersonation.ts";
import { importRoutes } from "./admin/imports.ts";
import { shadowRoutes } from "./admin/shadow.ts";
import { mailRoutes } from "./admin/mail.ts";
import { accountPageRoutes, hostedSettingsRoutes } from "./routes/account-pages.ts";
import { invitationPasskeyRoutes } from "./routes/invitation-passkey.ts";
import type { PasskeyService } from "../core/passkeys/service.ts";
import type { RequestThrottle } from "../core/abuse/request-throttle.ts";
import { auditRoutes } from "./routes/audit.ts";
import { authzRoutes } from "./routes/authz.ts";
import { webhookRoutes } from "./routes/webhooks.ts";
import type { SvcConfig } from "../core/config/mod.ts";
import { staticAppRoutes } from "./static-app.ts";
import { app as adminConsole } from "../console/generated/admin.ts";
import { oidcClientRoutes } from "./admin/oidc-clients.ts";
import { type SignInDiscoverer, signInDiscoveryRoutes } from "./routes/sign-in-discovery.ts";
import { setupRoutes } from "./routes/setup.ts";

/** What the route list is built from: the assembled stacks and the shared services. */
export interface SvcRoutesDeps {
  readonly storage: Storage;
  readonly snapshots: SubjectSnapshots;
  readonly publisher: EventPublisher;
  /** The auth stack's routes (tokens, sessions, profile, JWKS). */
  readonly auth: {
    readonly routes: readonly RouteInstaller[];
    readonly endedSessions?: SessionEndAnnouncer;
    readonly keys: KeyRing;
    /** Mints consent tokens (impersonation). */
    readonly tokens: TokenService;
    /** Signs impersonation sessions in. */
    readonly sessions: SessionService;
  };
  /** The login stack's routes (login, MFA, account flows, invitations, factors). */
  readonly login: {
    readonly routes: readonly RouteInstaller[];
    readonly passwords: PasswordService;
    readonly accounts: AccountFlows;
    /** The abuse gate (break-glass drills share its lockout). */
    readonly abuse?: AbuseGate;
  };
  /** The passkey routes, service and options throttle. */
  readonly passkeys: {
    readonly routes: RouteInstaller;
    readonly passkeys: PasskeyService;
    readonly throttle: RequestThrottle;
  };
  /** Wakes the webhook dispatcher after a delivery was queued. */
  readonly wake?: () => void;
  /** DNS TXT lookups of the runtime, for organization domain verification. */
  readonly resolveTxt?: TxtResolver;
  /** The plugins' sign-in steps (home-realm discovery); none: discovery answers `{}`. */
  readonly signInDiscovery?: SignInDiscoverer;
  /** The permissions the installed plugins declare (the authority rule judges them with svc's). */
  readonly pluginPermissions?: readonly string[];
}

/** The route modules of a svc server. */
export function svcRoutes(deps: SvcRoutesDeps): RouteInstaller[] {
  const { storage, snapshots, publisher } = deps;
  const admin: AdminRouteDeps = {
    storage,
    snapshots,
    publisher,
    passwords: deps.login.passwords,
    sessions: deps.auth.endedSessions,
    keys: deps.auth.keys,
    resolveTxt: deps.resolveTxt,
    accounts: deps.login.accounts,
    abuse: deps.login.abuse,
    pluginPermissions: deps.pluginPermissions,
  };
  return [
    // Before the token routes: an impersonation moves only where its actor could impersonate.
    impersonationOrgFence({ storage, snapshots, pluginPermissions: deps.pluginPermissions }),
    // Before the routes it covers: a break-glass caller creates no credential and enrolls no factor.
    breakGlassGuard(storage),
    ...deps.auth.routes,
    authzRoutes(snapshots),
    webhookRoutes({ storage, snapshots, publisher, wake: deps.wake }),
    auditRoutes({ storage, snapshots, publisher, sessions: deps.auth.endedSessions }),
    ...deps.login.routes,
    deps.passkeys.routes,
    invitationPasskeyRoutes({
      accounts: deps.login.accounts,
      passkeys: deps.passkeys.passkeys,
      throttle: deps.passkeys.throttle,
    }),
    // admin API: impersonation and break-glass
    impersonationRoutes({ ...admin, tokens: deps.auth.tokens, signIn: deps.auth.sessions }),
    breakGlassRoutes(admin),
    // admin API: directory (realms, organizations, domains, members, teams, groups)
    ...directoryRoutes(admin),
    // admin API: users
    adminUserRoutes(admin),
    // admin API: roles, grants, role assignments, policies
    roleRoutes(admin),
    roleAssignmentRoutes(admin),
    policyRoutes(admin),
    // admin API: service accounts, API keys, signing keys
    serviceAccountRoutes(admin),
    apiKeyRoutes(admin),
    signingKeyRoutes(admin),
    // admin console (issue 13)
    staticAppRoutes(adminConsole, (config) => config.console.mountPath),
    // hosted account pages and mail (issue 14)
    mailRoutes(admin),
    hostedSettingsRoutes(storage.realms),
    accountPageRoutes,
    signInDiscoveryRoutes(storage, deps.signInDiscovery),
    // imports and shadow mode (issue 15)
    importRoutes(admin),
    shadowRoutes(admin),
    // OIDC and plugins (issue 16)
    oidcClientRoutes(admin),
    // the first-run setup link (issue 27)
    setupRoutes({ storage, passwords: deps.login.passwords }),
  ];
}

/**
 * The mounts of the embedded page apps (static, unauthenticated by design, not API operations):
 * the OpenAPI document and the admin fence matrix leave the routes under them out on purpose.
 * Every `staticAppRoutes` installed above has its mount here.
 */
export function embeddedAppMounts(config: SvcConfig): string[] {
  return [config.console.mountPath, config.account.mountPath];
}

/** Whether a registered route path (relative to the path base) belongs to an embedded page app. */
export function isEmbeddedAppRoute(config: SvcConfig, path: string): boolean {
  return embeddedAppMounts(config).some((mount) => path === mount || path.startsWith(`${mount}/`));
}
