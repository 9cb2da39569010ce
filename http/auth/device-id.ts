/**
 * The device id of a sign-in request, which the risk gate's known-device signal and the
 * new-device alert key on (only its SHA-256 is stored). Browsers need no client code: svc
 * gives each one a long-lived random id in the httpOnly `svc_device` cookie on its first sign-in
 * answer, and the browser sends it back. API clients present an id in the `X-Svc-Device` header
 * (16 to 128 of `A-Z a-z 0-9 _ -`); a bearer sign-in answer that issued a new id also carries it
 * in that header, for the client to keep. The body's `deviceFingerprint` (older clients) still
 * counts, last.
 *
 * One id per request, in this order: the cookie, the header, the fingerprint, else a fresh one.
 * A value only makes a device known when the server recorded it at an earlier sign-in of the
 * same user, so a forged or client-chosen id counts as new, and a header or fingerprint never
 * overrides the cookie the server issued.
 *
 * @module
 */
import type { Context } from "hono";
import { setCookie } from "hono/cookie";
import { type RandomSource, randomToken } from "../../core/random.ts";
import type { SvcEnv } from "../request-id.ts";
import { type CookieSettings, readCookie, sitePath } from "./cookies.ts";

/** The device cookie (httpOnly, long-lived). */
export const DEVICE_COOKIE = "svc_device";
/** The header an API client presents its device id in (and a bearer sign-in answer issues it in). */
export const DEVICE_HEADER = "X-Svc-Device";
/** How long the device cookie lives: 400 days, the most browsers keep a cookie. */
export const DEVICE_COOKIE_MAX_AGE_SECONDS = 400 * 24 * 3600;

const DEVICE_ID = /^[A-Za-z0-9_-]{16,128}$/;

/** The device id of a request and whether the client presented it (or the server just drew it). */
export interface RequestDevice {
  readonly id: string;
  readonly presented: boolean;
}

const resolved = new WeakMap<Context<SvcEnv>, RequestDevice>();

/**
 * The request's device id (see the module doc for the order); `fingerprint` is the body's
 * `deviceFingerprint`, if any. The first call decides, later calls for the same request agree.
 */
export function requestDevice(
  c: Context<SvcEnv>,
  random: RandomSource,
  fingerprint?: string | null,
): RequestDevice {
  const known = resolved.get(c);
  if (known) return known;
  const cookie = readCookie(c, DEVICE_COOKIE);
  const header = c.req.header(DEVICE_HEADER)?.trim();
  const presented = [cookie, header].find((v) => v !== undefined && DEVICE_ID.test(v)) ??
    (fingerprint || undefined);
  const device = presented !== undefined
    ? { id: presented, presented: true }
    : { id: randomToken(random, 32), presented: false };
  resolved.set(c, device);
  return device;
}

/**
 * On a sign-in answer: when the request presented no device id, sets the `svc_device` cookie
 * (httpOnly, Secure and SameSite per the cookie settings, path = the path base) and, for bearer
 * clients, the `X-Svc-Device` header with the new id.
 */
export function issueDevice(
  c: Context<SvcEnv>,
  settings: CookieSettings,
  random: RandomSource,
  transport: "bearer" | "cookie",
): void {
  const device = requestDevice(c, random);
  if (device.presented) return;
  setCookie(c, DEVICE_COOKIE, device.id, {
    secure: settings.secure,
    sameSite: settings.sameSite,
    path: sitePath(settings),
    httpOnly: true,
    maxAge: DEVICE_COOKIE_MAX_AGE_SECONDS,
  });
  if (transport === "bearer") c.header(DEVICE_HEADER, device.id);
}
