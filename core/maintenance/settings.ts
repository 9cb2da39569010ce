/**
 * The settings of the periodic sweeps (`SvcConfig.maintenance`): its valibot section, its written-
 * out types and its variable. `core/config/schema.ts` composes it into the whole configuration.
 *
 * @module
 */
import * as v from "valibot";
import { type Exactly, int } from "../settings/fields.ts";
import type { EnvSetting } from "../settings/env.ts";

/** `SvcConfig.maintenance`: periodic sweeps. */
export type MaintenanceConfig = { intervalSeconds: number };

/** `SvcConfigInput.maintenance`: periodic sweeps, as a config file gives it. */
export type MaintenanceConfigInput = { intervalSeconds?: number };

/** The `maintenance` section of the configuration. */
export const maintenanceSettingsSchema = v.optional(
  v.strictObject({ intervalSeconds: v.optional(int(0, 86400, "seconds"), 300) }),
  {},
);

/** The `SVC_*` variables of `maintenance`. */
export const MAINTENANCE_ENV_SETTINGS: readonly EnvSetting[] = [
  {
    name: "SVC_MAINTENANCE_INTERVAL_SECONDS",
    path: "maintenance.intervalSeconds",
    kind: "int",
    doc: "how often expired single-use records, sessions, counters and old outbox mail are swept (0: never)",
  },
];

// The written-out types are exactly what the schema infers: `deno check` fails otherwise.
const _maintenanceOutput: Exactly<v.InferOutput<typeof maintenanceSettingsSchema>, MaintenanceConfig> = true;
const _maintenanceInput: Exactly<
  v.InferInput<typeof maintenanceSettingsSchema>,
  MaintenanceConfigInput | undefined
> = true;
