/**
 * What a break-glass caller may not do over HTTP (issue 24): a caller acting as the realm's
 * break-glass account (its session, or anything else acting as that user) is refused with 403
 * `break_glass_managed`, before the route runs, on
 *
 * - creating a credential that would outlive a rotation of its password: an API key (`POST
 *   /svc-admin/api-keys`), a service-account secret (creating a service account, rotating its
 *   secret), an OIDC client (its secret) or a client's keys (`jwks`, `jwksUri` in a `PATCH`);
 * - enrolling a factor: `POST /profile/factors/*` (TOTP, email OTP, recovery codes) and passkey
 *   registration.
 *
 * The break-glass password changes by rotation only; forgot/reset and email changes are refused
 * where they happen (`AccountFlows`, the admin user `PATCH`).
 *
 * Requests without credentials, or with bad ones, pass untouched: the route answers them.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { BreakGlassManagedError, type BreakGlassRefusal } from "../../core/break-glass/guard.ts";
import type { Storage } from "../../core/storage/storage.ts";
import type { RouteInstaller } from "../app.ts";
import type { SvcEnv } from "../request-id.ts";

/** A route refused to break-glass callers. */
interface Rule {
  readonly method: string;
  readonly path: RegExp;
  readonly refusal: BreakGlassRefusal;
  /** When given, the request is refused only if its JSON body has one of these fields. */
  readonly bodyFields?: readonly string[];
}

/** The routes refused to break-glass callers (relative to the mount path). */
export const BREAK_GLASS_RULES: readonly Rule[] = [
  { method: "POST", path: /^\/svc-admin\/api-keys\/?$/, refusal: "credential" },
  { method: "POST", path: /^\/svc-admin\/service-accounts\/?$/, refusal: "credential" },
  { method: "POST", path: /^\/svc-admin\/service-accounts\/[^/]+\/rotate-secret\/?$/, refusal: "credential" },
  { method: "POST", path: /^\/svc-admin\/oidc\/clients\/?$/, refusal: "credential" },
  {
    method: "PATCH",
    path: /^\/svc-admin\/oidc\/clients\/[^/]+\/?$/,
    refusal: "credential",
    bodyFields: ["jwks", "jwksUri"],
  },
  { method: "POST", path: /^\/profile\/factors(?:\/|$)/, refusal: "factor" },
  { method: "POST", path: /^\/auth\/passkey\/register(?:\/options)?\/?$/, refusal: "factor" },
];

/** The rule `method path` falls under, or null. */
export function breakGlassRule(method: string, path: string): Rule | null {
  const upper = method.toUpperCase();
  return BREAK_GLASS_RULES.find((rule) => rule.method === upper && rule.path.test(path)) ?? null;
}

/** The guard, installed before the routes it covers (`svcRoutes` puts it first). */
export function breakGlassGuard(storage: Pick<Storage, "users">): RouteInstaller {
  return (app, deps) => {
    const base = deps.config.server.pathBase.replace(/\/+$/, "");
    const guard: MiddlewareHandler<SvcEnv> = async (c, next) => {
      const path = c.req.path.slice(base.length) || "/";
      const rule = breakGlassRule(c.req.method, path);
      if (rule !== null && await isBreakGlassCaller(c, storage) && await bodyMatches(c, rule)) {
        throw new BreakGlassManagedError(rule.refusal);
      }
      await next();
    };
    app.use("/svc-admin/*", guard);
    app.use("/profile/factors/*", guard);
    app.use("/auth/passkey/*", guard);
  };
}

/** Whether the caller acts as a break-glass user (no caller, or bad credentials: no). */
async function isBreakGlassCaller(c: Context<SvcEnv>, storage: Pick<Storage, "users">): Promise<boolean> {
  const resolve = c.get("principal");
  if (resolve === undefined) return false;
  let principal;
  try {
    principal = await resolve();
  } catch {
    return false;
  }
  if (principal === null || principal.kind === "ServiceAccount") return false;
  const user = await storage.users.get(principal.userId);
  return user !== null && user.realmId === principal.realmId && user.isBreakGlass;
}

async function bodyMatches(c: Context<SvcEnv>, rule: Rule): Promise<boolean> {
  if (rule.bodyFields === undefined) return true;
  try {
    const data: unknown = JSON.parse(await c.req.text());
    return typeof data === "object" && data !== null && rule.bodyFields.some((field) => field in data);
  } catch {
    return false; // the route answers a malformed body
  }
}
