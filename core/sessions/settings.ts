/**
 * The settings of sessions (`SvcConfig.sessions`: timeouts; `SvcConfig.cookies`: their cookies;
 * `SvcConfig.impersonation`: the impersonation window): their valibot sections, their written-out
 * types and their `SVC_SESSION_*` / `SVC_COOKIE_*` / `SVC_IMPERSONATION_*` variables.
 * `core/config/schema.ts` composes them into the whole configuration.
 *
 * @module
 */
import * as v from "valibot";
import { type Exactly, int, rule } from "../settings/fields.ts";
import type { EnvSetting } from "../settings/env.ts";

/** `SvcConfig.sessions`: session timeouts. */
export type SessionsConfig = { idleTimeoutSeconds: number; absoluteTimeoutSeconds: number };

/** `SvcConfigInput.sessions`: session timeouts, as a config file gives it. */
export type SessionsConfigInput = { idleTimeoutSeconds?: number; absoluteTimeoutSeconds?: number };

/** The `sessions` section of the configuration. */
export const sessionsSettingsSchema = v.optional(
  v.strictObject({
    /** A session unused this long ends (each refresh moves it forward). */
    idleTimeoutSeconds: v.optional(int(60, 31_536_000, "seconds"), 7 * 86400),
    /** A session ends this long after sign-in, used or not. */
    absoluteTimeoutSeconds: v.optional(int(60, 31_536_000, "seconds"), 30 * 86400),
  }),
  {},
);

/** `SvcConfig.cookies`: the attributes of svc's cookies. */
export type CookiesConfig = { secure: "auto" | "always" | "never"; sameSite: "Strict" | "Lax" | "None" };

/** `SvcConfigInput.cookies`: the attributes of svc's cookies, as a config file gives it. */
export type CookiesConfigInput = {
  secure?: "auto" | "always" | "never";
  sameSite?: "Strict" | "Lax" | "None";
};

/** The `cookies` section of the configuration. */
export const cookiesSettingsSchema = v.optional(
  v.strictObject({
    /** `auto`: Secure unless the base URL is http (development); `always`; `never`. */
    secure: v.optional(
      v.picklist(
        ["auto", "always", "never"],
        rule(
          "is not a cookie security mode",
          '"auto" (Secure unless the base URL is http), "always" or "never"',
        ),
      ),
      "auto",
    ),
    /** The SameSite attribute of every svc cookie. */
    sameSite: v.optional(
      v.picklist(["Strict", "Lax", "None"], rule("is not a SameSite value", '"Strict", "Lax" or "None"')),
      "Lax",
    ),
  }),
  {},
);

/** The `SVC_*` variables of `sessions`. */
export const SESSIONS_ENV_SETTINGS: readonly EnvSetting[] = [
  {
    name: "SVC_SESSION_IDLE_TIMEOUT_SECONDS",
    path: "sessions.idleTimeoutSeconds",
    kind: "int",
    doc: "a session unused this long ends (7 days; each refresh moves it forward)",
  },
  {
    name: "SVC_SESSION_ABSOLUTE_TIMEOUT_SECONDS",
    path: "sessions.absoluteTimeoutSeconds",
    kind: "int",
    doc: "a session ends this long after sign-in (30 days)",
  },
];

/** The `SVC_*` variables of `cookies`. */
export const COOKIES_ENV_SETTINGS: readonly EnvSetting[] = [
  {
    name: "SVC_COOKIE_SECURE",
    path: "cookies.secure",
    kind: "string",
    doc: "Secure cookie attribute: auto (unless the base URL is http), always or never",
  },
  {
    name: "SVC_COOKIE_SAME_SITE",
    path: "cookies.sameSite",
    kind: "string",
    doc: "SameSite attribute of svc cookies: Strict, Lax or None (None needs Secure)",
  },
];

/** `SvcConfig.impersonation`: impersonation windows. */
export type ImpersonationConfig = { windowSeconds: number };

/** `SvcConfigInput.impersonation`: impersonation windows, as a config file gives it. */
export type ImpersonationConfigInput = { windowSeconds?: number };

/** The `impersonation` section of the configuration. */
export const impersonationSettingsSchema = v.optional(
  v.strictObject({
    /** Longest impersonation window (and the default when a start names none). */
    windowSeconds: v.optional(int(60, 86400, "seconds"), 1800),
  }),
  {},
);

/** The `SVC_*` variables of `impersonation`. */
export const IMPERSONATION_ENV_SETTINGS: readonly EnvSetting[] = [
  {
    name: "SVC_IMPERSONATION_WINDOW_SECONDS",
    path: "impersonation.windowSeconds",
    kind: "int",
    doc: "longest impersonation window, and the default when a start names none (token exp capped to it)",
  },
];

// The written-out types are exactly what the schema infers: `deno check` fails otherwise.
const _sessionsOutput: Exactly<v.InferOutput<typeof sessionsSettingsSchema>, SessionsConfig> = true;
const _sessionsInput: Exactly<v.InferInput<typeof sessionsSettingsSchema>, SessionsConfigInput | undefined> =
  true;
const _cookiesOutput: Exactly<v.InferOutput<typeof cookiesSettingsSchema>, CookiesConfig> = true;
const _cookiesInput: Exactly<v.InferInput<typeof cookiesSettingsSchema>, CookiesConfigInput | undefined> =
  true;
const _impersonationOutput: Exactly<v.InferOutput<typeof impersonationSettingsSchema>, ImpersonationConfig> =
  true;
const _impersonationInput: Exactly<
  v.InferInput<typeof impersonationSettingsSchema>,
  ImpersonationConfigInput | undefined
> = true;
