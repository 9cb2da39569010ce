/**
 * The settings of TOTP codes (`SvcConfig.totp`): its valibot section, its written-out types and
 * its `SVC_TOTP_*` variables. `core/config/schema.ts` composes it into the whole configuration.
 *
 * @module
 */
import * as v from "valibot";
import { type Exactly, int } from "../settings/fields.ts";
import type { EnvSetting } from "../settings/env.ts";

/** `SvcConfig.totp`: TOTP codes. */
export type TotpConfig = { digits: number; stepSeconds: number; driftSteps: number };

/** `SvcConfigInput.totp`: TOTP codes, as a config file gives it. */
export type TotpConfigInput = { digits?: number; stepSeconds?: number; driftSteps?: number };

/** The `totp` section of the configuration. */
export const totpSettingsSchema = v.optional(
  v.strictObject({
    digits: v.optional(int(6, 8, "digits"), 6),
    stepSeconds: v.optional(int(10, 300, "seconds"), 30),
    driftSteps: v.optional(int(0, 10, "steps"), 1),
  }),
  {},
);

/** The `SVC_*` variables of `totp`. */
export const TOTP_ENV_SETTINGS: readonly EnvSetting[] = [
  { name: "SVC_TOTP_DIGITS", path: "totp.digits", kind: "int", doc: "TOTP code length" },
  { name: "SVC_TOTP_STEP_SECONDS", path: "totp.stepSeconds", kind: "int", doc: "TOTP time step" },
  {
    name: "SVC_TOTP_DRIFT_STEPS",
    path: "totp.driftSteps",
    kind: "int",
    doc: "TOTP steps accepted either side",
  },
];

// The written-out types are exactly what the schema infers: `deno check` fails otherwise.
const _totpOutput: Exactly<v.InferOutput<typeof totpSettingsSchema>, TotpConfig> = true;
const _totpInput: Exactly<v.InferInput<typeof totpSettingsSchema>, TotpConfigInput | undefined> = true;
