/**
 * What a break-glass account may not do (issue 24): it owns nothing that outlives a rotation of
 * its password. It creates no API key or service credential, enrolls no factor, and its password
 * and email change only through rotation (no forgot/reset, no email change). Each refusal is 403
 * `break_glass_managed`.
 *
 * @module
 */
import { SvcError } from "../errors.ts";

/** What was refused to a break-glass account. */
export type BreakGlassRefusal = "credential" | "factor" | "password_reset" | "email_change";

const MESSAGES: Readonly<Record<BreakGlassRefusal, string>> = {
  credential:
    "A break-glass account creates no API key or service credential: nothing of it outlives rotation.",
  factor: "A break-glass account enrolls no sign-in factor; it signs in with its rotated password only.",
  password_reset: "The break-glass password changes only by rotation.",
  email_change: "The break-glass account's email does not change.",
};

/** A break-glass account (or its session) asked for what only rotation may do (403 `break_glass_managed`). */
export class BreakGlassManagedError extends SvcError {
  constructor(refusal: BreakGlassRefusal) {
    super("break_glass_managed", MESSAGES[refusal], 403, { reason: refusal });
  }
}
