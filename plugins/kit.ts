/**
 * Small helpers for plugins, exported through `mod.ts` so a third-party plugin can do what the
 * built-in ones do:
 *
 * - the admin routes' permission pairs (`scopedPermissions`, `globalPermissions`), the 404 for
 *   an id that is no UUID (`uuidParam`) and the fence on a record outside the caller's reach
 *   (`reaches`, `reachable`), a list's organization filter (`listedOrg`) and an update that changed nothing shown
 *   (`unchangedView`);
 * - for sign-in flows: the browser's signed-in user for a request (`signedInUser`), the
 *   organization whose verified email domain a domain is (`verifiedDomainOrganization`), and
 *   signing the browser in once the plugin has resolved the user (`signInBrowser`).
 *
 * @module
 */
import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import type { IssuedTokens } from "../core/sessions/service.ts";
import { EMAIL_DOMAIN, type Organization } from "../core/storage/organizations.ts";
import type { User } from "../core/storage/users.ts";
import { hidden } from "../http/admin/kit.ts";
import { ACCESS_COOKIE, setSessionCookies } from "../http/auth/cookies.ts";
import { covers, type FenceScope } from "../http/auth/fence.ts";
import { clientIp } from "../http/client-ip.ts";
import type { PluginContext } from "./plugin.ts";

/** The permissions of one capability for `PluginAdmin.scope`: realm-wide ones and the caller's organization's. */
export interface ScopePermissions {
  /** Permission ids any of which grants the capability realm-wide. */
  readonly global: readonly string[];
  /** Permission ids any of which grants it in the caller's own organization. */
  readonly org: readonly string[];
}

/** The read and manage capabilities of a plugin's admin resource held realm-wide or per organization. */
export interface ScopedPermissions {
  /** Reading: the read or the manage permission (manage implies read). */
  readonly read: ScopePermissions;
  /** Changing: the manage permission only. */
  readonly manage: ScopePermissions;
}

/** The read and manage capabilities of a plugin's realm-wide admin resource, for `PluginAdmin.fence`. */
export interface GlobalPermissions {
  /** Reading: the read or the manage permission (manage implies read). */
  readonly read: readonly string[];
  /** Changing: the manage permission only. */
  readonly manage: readonly string[];
}

/**
 * The fence arguments of a resource with a read and a manage permission at both scopes: reading
 * takes either (manage implies read), changing takes manage.
 *
 * @example
 * ```ts
 * import { scopedPermissions } from "@svc/svc";
 *
 * const { read, manage } = scopedPermissions({
 *   readGlobal: "reports:global:reports-read",
 *   manageGlobal: "reports:global:reports-manage",
 *   readOrg: "reports:org:reports-read",
 *   manageOrg: "reports:org:reports-manage",
 * });
 * // read: { global: [readGlobal, manageGlobal], org: [readOrg, manageOrg] }
 * ```
 */
export function scopedPermissions(ids: {
  readonly readGlobal: string;
  readonly manageGlobal: string;
  readonly readOrg: string;
  readonly manageOrg: string;
}): ScopedPermissions {
  return {
    read: { global: [ids.readGlobal, ids.manageGlobal], org: [ids.readOrg, ids.manageOrg] },
    manage: { global: [ids.manageGlobal], org: [ids.manageOrg] },
  };
}

/**
 * The fence arguments of a realm-wide resource with a read and a manage permission: reading takes
 * either (manage implies read), changing takes manage.
 */
export function globalPermissions(read: string, manage: string): GlobalPermissions {
  return { read: [read, manage], manage: [manage] };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The route parameter `name` when it is a UUID (as given, not lower-cased); otherwise 404 "No
 * such `what`." (an id that cannot exist is shown like one that does not).
 */
export function uuidParam(c: Context, name: string, what: string): string {
  const value = c.req.param(name) ?? "";
  if (!UUID.test(value)) throw hidden(what);
  return value;
}

/**
 * Whether the caller's scope reaches a record of realm `realmId` (stored lower-case) and
 * organization `orgId` (null: realm-wide, global scope only).
 */
export function reaches(scope: FenceScope, realmId: string, orgId: string | null): boolean {
  return realmId === scope.principal.realmId.toLowerCase() && covers(scope, orgId);
}

/**
 * The record when it exists and the caller's scope reaches it ({@link reaches}); otherwise 404
 * "No such `what`.", the same answer for what does not exist and what the caller may not see.
 */
export function reachable<T extends { readonly realmId: string; readonly orgId: string | null }>(
  scope: FenceScope,
  record: T | null,
  what: string,
): T {
  if (record === null || !reaches(scope, record.realmId, record.orgId)) throw hidden(what);
  return record;
}

/**
 * The browser's signed-in user for this request: the live session of svc's access cookie, its
 * user active; null without a cookie, for an invalid or expired token, an impersonation token, an
 * ended session or a user not active.
 */
export async function signedInUser(
  ctx: Pick<PluginContext, "tokens" | "storage">,
  c: Context,
): Promise<User | null> {
  const token = getCookie(c, ACCESS_COOKIE);
  if (token === undefined) return null;
  try {
    const claims = await ctx.tokens.verify("at+svc", token);
    if (claims.act !== undefined) return null;
    const session = await ctx.storage.sessions.getActive(claims.sid);
    if (session === null || session.userId !== claims.sub) return null;
    const user = await ctx.storage.users.get(session.userId);
    return user !== null && user.status === "Active" ? user : null;
  } catch {
    return null;
  }
}

/**
 * The organization of realm `realmId` with a verified `EmailDomain` row for `domain` (an email's
 * part after `@`), or null: unverified rows never count; an empty domain or one longer than 253
 * characters is none.
 */
export async function verifiedDomainOrganization(
  ctx: Pick<PluginContext, "storage">,
  realmId: string,
  domain: string,
): Promise<Organization | null> {
  if (domain === "" || domain.length > 253) return null;
  const match = await ctx.storage.organizations.findVerifiedDomain(EMAIL_DOMAIN, domain, { realmId });
  if (match === null || !match.verified) return null;
  return await ctx.storage.organizations.get(match.orgId);
}

/**
 * The organization a list of an org-scoped resource shows, from its optional `?orgId=`: the asked
 * one (or null: all of the realm) for a realm-wide caller, the caller's own otherwise; 404 "No such
 * organization." when the caller's scope does not cover the asked one.
 */
export function listedOrg(scope: FenceScope, requested: string | undefined): string | null {
  if (requested !== undefined && !covers(scope, requested)) throw hidden("organization");
  return scope.global ? requested ?? null : scope.orgId;
}

/**
 * Whether an update left a record as the API shows it: `view` of `before` and of `after` are the
 * same JSON apart from `updatedAt` (an identical repeat, which appends no audit entry).
 */
export function unchangedView<T>(view: (record: T) => object, before: T, after: T): boolean {
  const shown = (record: T) => JSON.stringify({ ...view(record), updatedAt: null });
  return shown(before) === shown(after);
}

/** Who a plugin's sign-in flow signs the browser in as (see {@link signInBrowser}). */
export interface BrowserSignIn {
  /** The realm the user signs in to. */
  readonly realmId: string;
  /** The user the flow resolved. */
  readonly userId: string;
  /** The MFA level the flow reached. */
  readonly mfa: string;
  /** The organization the sign-in belongs to: the session acts in it when the user is a member. */
  readonly orgId: string;
}

/**
 * Signs the browser in after a plugin's sign-in flow resolved the user: a session (acting in
 * `orgId` when the user is a member of it, in none otherwise) recording the client address and
 * device (User-Agent, at most 200 characters), and svc's session cookies set on the answer. The
 * flow emits its own sign-in event.
 */
export async function signInBrowser(
  ctx: Pick<PluginContext, "storage" | "sessions" | "cookies" | "svcConfig" | "random">,
  c: Context,
  input: BrowserSignIn,
): Promise<IssuedTokens> {
  const member = await ctx.storage.organizations.isMember(input.orgId, input.userId);
  const issued = await ctx.sessions.signIn({
    realmId: input.realmId,
    userId: input.userId,
    mfa: input.mfa,
    orgId: member ? input.orgId : null,
    ipAddress: clientIp(c),
    deviceDescription: c.req.header("User-Agent")?.slice(0, 200) ?? null,
  });
  setSessionCookies(c, ctx.cookies, {
    accessToken: issued.tokens.accessToken,
    expiresIn: issued.tokens.expiresIn,
    refreshToken: issued.tokens.refreshToken,
    refreshMaxAge: ctx.svcConfig.tokens.refreshTokenTtlSeconds,
  }, ctx.random);
  return issued;
}
