/**
 * The settings of emailed one-time codes (`SvcConfig.emailOtp`): its valibot section, its written-
 * out types and its `SVC_EMAIL_OTP_*` variables. `core/config/schema.ts` composes it into the
 * whole configuration.
 *
 * @module
 */
import * as v from "valibot";
import { type Exactly, int } from "../settings/fields.ts";
import type { EnvSetting } from "../settings/env.ts";

/** `SvcConfig.emailOtp`: emailed one-time codes. */
export type EmailOtpConfig = { ttlSeconds: number; attempts: number };

/** `SvcConfigInput.emailOtp`: emailed one-time codes, as a config file gives it. */
export type EmailOtpConfigInput = { ttlSeconds?: number; attempts?: number };

/** The `emailOtp` section of the configuration. */
export const emailOtpSettingsSchema = v.optional(
  v.strictObject({
    /** How long an emailed one-time code stays valid. */
    ttlSeconds: v.optional(int(60, 3600, "seconds"), 600),
    /** Wrong guesses allowed per emailed code. */
    attempts: v.optional(int(1, 20), 5),
  }),
  {},
);

/** The `SVC_*` variables of `emailOtp`. */
export const EMAIL_OTP_ENV_SETTINGS: readonly EnvSetting[] = [
  {
    name: "SVC_EMAIL_OTP_TTL_SECONDS",
    path: "emailOtp.ttlSeconds",
    kind: "int",
    doc: "lifetime of an emailed one-time code",
  },
  {
    name: "SVC_EMAIL_OTP_ATTEMPTS",
    path: "emailOtp.attempts",
    kind: "int",
    doc: "wrong guesses allowed per emailed one-time code",
  },
];

// The written-out types are exactly what the schema infers: `deno check` fails otherwise.
const _emailOtpOutput: Exactly<v.InferOutput<typeof emailOtpSettingsSchema>, EmailOtpConfig> = true;
const _emailOtpInput: Exactly<v.InferInput<typeof emailOtpSettingsSchema>, EmailOtpConfigInput | undefined> =
  true;
