/**
 * The cookie transport for browsers (spec 5.4): the access token in `svc_at` and the refresh
 * token in `svc_rt`, both httpOnly; the double-submit CSRF token in `svc_csrf` (readable by
 * the page, which echoes it in the `X-Svc-Csrf` header of every state-changing request).
 *
 * Paths respect the host's path base: `svc_at` and `svc_csrf` are scoped to the path base
 * (or `/`), and `svc_rt` only to the refresh endpoint, `<path base>/auth/refresh`, so
 * the long-lived token travels with no other request.
 *
 * @module
 */
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { SvcConfig } from "../../core/config/mod.ts";
import { type RandomSource, randomToken } from "../../core/random.ts";
import type { SvcEnv } from "../request-id.ts";

/** The access-token cookie. */
export const ACCESS_COOKIE = "svc_at";
/** The refresh-token cookie (scoped to the refresh endpoint). */
export const REFRESH_COOKIE = "svc_rt";
/** The double-submit CSRF cookie (not httpOnly). */
export const CSRF_COOKIE = "svc_csrf";
/** The header that must echo the CSRF cookie on state-changing requests. */
export const CSRF_HEADER = "X-Svc-Csrf";
/** The refresh endpoint, relative to the path base. */
export const REFRESH_PATH = "/auth/refresh";

/** How svc sets its cookies. */
export interface CookieSettings {
  /** The path base ("" for the root). */
  readonly pathBase: string;
  /** Whether the cookies carry `Secure` (sent over HTTPS only). */
  readonly secure: boolean;
  /** The `SameSite` attribute of every svc cookie. */
  readonly sameSite: "Strict" | "Lax" | "None";
}

/** Cookie settings from the configuration (`auto`: Secure unless the base URL is http). */
export function cookieSettings(config: SvcConfig): CookieSettings {
  const secure = config.cookies.secure === "always" ||
    (config.cookies.secure === "auto" && new URL(config.server.baseUrl).protocol === "https:");
  return { pathBase: config.server.pathBase, secure, sameSite: config.cookies.sameSite };
}

/** The path of the access and CSRF cookies. */
export function sitePath(settings: CookieSettings): string {
  return settings.pathBase === "" ? "/" : settings.pathBase;
}

/** The path of the refresh cookie: the refresh endpoint only. */
export function refreshPath(settings: CookieSettings): string {
  return `${settings.pathBase}${REFRESH_PATH}`;
}

/** What the cookies carry after sign-in or refresh. */
export interface CookieTokens {
  /** The access token (a JWT), put in the `svc_at` cookie. */
  readonly accessToken: string;
  /** Seconds. */
  readonly expiresIn: number;
  /** Absent when only the access token changes (organization switch). */
  readonly refreshToken?: string;
  /** Seconds the refresh cookie lives. */
  readonly refreshMaxAge?: number;
}

/**
 * Sets the session cookies, with a fresh CSRF token; returns the CSRF token (the page may
 * also read it from the `svc_csrf` cookie).
 */
export function setSessionCookies(
  c: Context<SvcEnv>,
  settings: CookieSettings,
  tokens: CookieTokens,
  random: RandomSource,
): string {
  const base = { secure: settings.secure, sameSite: settings.sameSite } as const;
  setCookie(c, ACCESS_COOKIE, tokens.accessToken, {
    ...base,
    path: sitePath(settings),
    httpOnly: true,
    maxAge: tokens.expiresIn,
  });
  if (tokens.refreshToken !== undefined) {
    setCookie(c, REFRESH_COOKIE, tokens.refreshToken, {
      ...base,
      path: refreshPath(settings),
      httpOnly: true,
      maxAge: tokens.refreshMaxAge,
    });
  }
  const csrf = randomToken(random, 32);
  setCookie(c, CSRF_COOKIE, csrf, {
    ...base,
    path: sitePath(settings),
    httpOnly: false,
    maxAge: tokens.refreshMaxAge ?? tokens.expiresIn,
  });
  return csrf;
}

/** Clears every session cookie (logout). */
export function clearSessionCookies(c: Context<SvcEnv>, settings: CookieSettings): void {
  const base = { secure: settings.secure, sameSite: settings.sameSite } as const;
  deleteCookie(c, ACCESS_COOKIE, { ...base, path: sitePath(settings), httpOnly: true });
  deleteCookie(c, REFRESH_COOKIE, { ...base, path: refreshPath(settings), httpOnly: true });
  deleteCookie(c, CSRF_COOKIE, { ...base, path: sitePath(settings) });
}

/** A cookie of the request, or undefined. */
export function readCookie(c: Context<SvcEnv>, name: string): string | undefined {
  const value = getCookie(c, name);
  return value === undefined || value === "" ? undefined : value;
}
