/**
 * The names break-glass is recognised by: the session MFA level of a break-glass login and the
 * `breakglass.*` event kinds (spec 6).
 *
 * @module
 */

/** The session MFA level (`mfa` claim) of a break-glass login; its principal's audit actor kind is `BreakGlass`. */
export const MFA_LEVEL_BREAK_GLASS = "BreakGlass";

/** Event kinds of break-glass operations. */
export const BREAK_GLASS_EVENTS = {
  /** Any break-glass login. */
  login: "breakglass.login",
  /** After a break-glass login until rotation (at the login, then on readiness evaluations, hourly). */
  rotationRequired: "breakglass.rotation_required",
  /** The CLI created a realm's break-glass account. */
  created: "breakglass.account_created",
  /** The break-glass password was rotated. */
  rotated: "breakglass.rotated",
  /** A drill verified the break-glass password. */
  drill: "breakglass.drill_recorded",
} as const;
