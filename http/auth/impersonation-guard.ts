/**
 * The one place where acting under impersonation is limited (spec 4.5, issue 12): a caller whose
 * access token carries `act` is refused with 403 `impersonation_forbidden` on
 *
 * - every state-changing request (any method but GET, HEAD, OPTIONS) under `/svc-admin` and
 *   under the webhook admin mount: no `svc:` admin mutation is made with a borrowed session;
 * - the self-service routes that change the target's credentials or identity: factors
 *   (`/profile/factors/*`), passkey registration, renaming and removal, invitation acceptance, password
 *   reset and email verification, and ending the target's other sessions (`/auth/logout-all`,
 *   `DELETE /profile/sessions/{id}`).
 *
 * One request is let through: `POST /svc-admin/impersonation/{id}/end` with the token of that
 * very impersonation, so the banner's "stop impersonating" works with the borrowed session
 * (it only ends what the actor started). Approving consent is NOT let through: only the target
 * in their own session may approve, never someone acting as them. `POST /auth/logout` stays
 * open (it ends the impersonation session only).
 *
 * Requests without credentials, or with bad ones, pass untouched: the route answers them (401).
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import type { SvcEnv } from "../request-id.ts";
import { ImpersonationForbiddenError } from "../admin/kit.ts";
import type { Principal } from "./principal.ts";

/** A route (relative to the mount path) refused under impersonation. */
interface Rule {
  /** Methods refused; "unsafe": every method but GET, HEAD and OPTIONS. */
  readonly methods: "unsafe" | readonly string[];
  readonly path: RegExp;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The self-service routes refused under impersonation (the admin mounts are added from the options). */
export const SELF_SERVICE_RULES: readonly Rule[] = [
  { methods: "unsafe", path: /^\/profile\/factors(?:\/|$)/ },
  { methods: ["POST"], path: /^\/auth\/passkey\/register(?:\/options)?\/?$/ },
  // Renaming (PATCH) and removing (DELETE) one of the target's passkeys.
  { methods: ["PATCH", "DELETE"], path: /^\/auth\/passkey\/[^/]+\/?$/ },
  { methods: "unsafe", path: /^\/auth\/invitation(?:\/|$)/ },
  { methods: "unsafe", path: /^\/auth\/password(?:\/|$)/ },
  { methods: "unsafe", path: /^\/auth\/email(?:\/|$)/ },
  { methods: ["POST"], path: /^\/auth\/logout-all\/?$/ },
  { methods: ["DELETE"], path: /^\/profile\/sessions\/[^/]+\/?$/ },
];

/** The one admin request an impersonation token may make: ending that impersonation. */
const OWN_END = /^\/svc-admin\/impersonation\/([0-9a-fA-F-]{36})\/end\/?$/;

/** Options of {@link impersonationGuard}. */
export interface ImpersonationGuardOptions {
  /** The mount path of every route (`config.server.pathBase`). */
  readonly pathBase: string;
  /** Admin mounts outside `/svc-admin` (the webhook admin mount, when configured elsewhere). */
  readonly adminMounts?: readonly string[];
}

/** Whether `method path` (relative to the mount path) is refused for a caller acting as `act`. */
export function refusedUnderImpersonation(
  method: string,
  path: string,
  act: NonNullable<Principal["act"]>,
  adminMounts: readonly string[] = [],
): boolean {
  const own = OWN_END.exec(path);
  if (
    method.toUpperCase() === "POST" && own !== null &&
    own[1].toLowerCase() === act.impersonationId.toLowerCase()
  ) {
    return false;
  }
  return guarded(method, path, adminMounts);
}

/** Whether `method path` is refused to every impersonation token but the exception above. */
function guarded(method: string, path: string, adminMounts: readonly string[]): boolean {
  const upper = method.toUpperCase();
  const unsafe = !SAFE_METHODS.has(upper);
  const underAdmin = ["/svc-admin", ...adminMounts].some((mount) =>
    path === mount || path.startsWith(mount.endsWith("/") ? mount : `${mount}/`)
  );
  if (underAdmin && unsafe) return true;
  return SELF_SERVICE_RULES.some((rule) =>
    rule.path.test(path) && (rule.methods === "unsafe" ? unsafe : rule.methods.includes(upper))
  );
}

/** The middleware (installed by `createApp` after authentication). */
export function impersonationGuard(options: ImpersonationGuardOptions): MiddlewareHandler<SvcEnv> {
  const base = options.pathBase.replace(/\/+$/, "");
  return async (c, next) => {
    const full = c.req.path;
    if (base === "" || full === base || full.startsWith(`${base}/`)) {
      const path = base === "" ? full : full.slice(base.length) || "/";
      // The caller is resolved only for guarded routes (every other request pays nothing).
      if (guarded(c.req.method, path, options.adminMounts ?? [])) {
        const act = await actOf(c.get("principal"));
        if (act && refusedUnderImpersonation(c.req.method, path, act, options.adminMounts)) {
          throw new ImpersonationForbiddenError();
        }
      }
    }
    await next();
  };
}

/** The caller's `act`, or null (no caller, bad credentials: the route answers those). */
async function actOf(principal: (() => Promise<Principal | null>) | undefined) {
  if (principal === undefined) return null;
  try {
    return (await principal())?.act ?? null;
  } catch {
    return null;
  }
}
