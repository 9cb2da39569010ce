/**
 * The settings of the first administrator (`SvcConfig.bootstrap`): its valibot section, its
 * written-out types and its `SVC_BOOTSTRAP_*` variables. `core/config/schema.ts` composes it into
 * the whole configuration.
 *
 * @module
 */
import * as v from "valibot";
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, passwordPolicyProblem } from "./password-policy.ts";
import { email, type Exactly, nonEmpty, rule } from "../settings/fields.ts";
import type { EnvSetting } from "../settings/env.ts";

/** `SvcConfig.bootstrap`: the first administrator. */
export type BootstrapConfig = { adminEmail?: string; adminPassword?: string };

/** `SvcConfigInput.bootstrap`: the first administrator, as a config file gives it. */
export type BootstrapConfigInput = { adminEmail?: string; adminPassword?: string };

/** The `bootstrap` section of the configuration. */
export const bootstrapSettingsSchema = v.optional(
  v.strictObject({
    adminEmail: v.optional(email()),
    /** Must follow the password policy (core/accounts/password-policy.ts): refused at start otherwise. */
    adminPassword: v.optional(
      v.pipe(
        nonEmpty("the first administrator's password"),
        v.check(
          (s) => passwordPolicyProblem(s) === null,
          rule(
            "does not follow the password policy",
            `a password of ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`,
          ),
        ),
      ),
    ),
  }),
  {},
);

/** The `SVC_*` variables of `bootstrap`. */
export const BOOTSTRAP_ENV_SETTINGS: readonly EnvSetting[] = [
  {
    name: "SVC_BOOTSTRAP_ADMIN_EMAIL",
    path: "bootstrap.adminEmail",
    kind: "string",
    doc: "email of the first administrator, created at boot (with SVC_BOOTSTRAP_ADMIN_PASSWORD)",
    defaultText: "unset",
  },
  {
    name: "SVC_BOOTSTRAP_ADMIN_PASSWORD",
    path: "bootstrap.adminPassword",
    kind: "string",
    doc: "password of the first administrator (with SVC_BOOTSTRAP_ADMIN_EMAIL)",
    defaultText: "unset",
    secret: "hide",
  },
];

// The written-out types are exactly what the schema infers: `deno check` fails otherwise.
const _bootstrapOutput: Exactly<v.InferOutput<typeof bootstrapSettingsSchema>, BootstrapConfig> = true;
const _bootstrapInput: Exactly<
  v.InferInput<typeof bootstrapSettingsSchema>,
  BootstrapConfigInput | undefined
> = true;
