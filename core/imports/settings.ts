/**
 * The settings of the importers (`SvcConfig.imports`): its valibot section, its written-out types
 * and its variable. `core/config/schema.ts` composes it into the whole configuration.
 *
 * @module
 */
import * as v from "valibot";
import { type Exactly, int } from "../settings/fields.ts";
import type { EnvSetting } from "../settings/env.ts";

/** `SvcConfig.imports`: importers. */
export type ImportsConfig = { maxBytes: number };

/** `SvcConfigInput.imports`: importers, as a config file gives it. */
export type ImportsConfigInput = { maxBytes?: number };

/** The `imports` section of the configuration. */
export const importsSettingsSchema = v.optional(
  v.strictObject({
    /** Largest export body `POST /svc-admin/imports/{kind}` takes (its own limit, not the upload one). */
    maxBytes: v.optional(int(1024, 1_073_741_824, "bytes"), 104_857_600),
  }),
  {},
);

/** The `SVC_*` variables of `imports`. */
export const IMPORTS_ENV_SETTINGS: readonly EnvSetting[] = [
  // variables: imports and shadow mode (issue 15)
  {
    name: "SVC_MAX_IMPORT_BYTES",
    path: "imports.maxBytes",
    kind: "int",
    doc: "largest export body POST /svc-admin/imports/{kind} takes, in bytes (100 MiB)",
  },
];

// The written-out types are exactly what the schema infers: `deno check` fails otherwise.
const _importsOutput: Exactly<v.InferOutput<typeof importsSettingsSchema>, ImportsConfig> = true;
const _importsInput: Exactly<v.InferInput<typeof importsSettingsSchema>, ImportsConfigInput | undefined> =
  true;
