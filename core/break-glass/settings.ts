/**
 * The settings of break-glass drills (`SvcConfig.breakGlass`): its valibot section, its written-
 * out types and its `SVC_BREAK_GLASS_*` variables. `core/config/schema.ts` composes it into the
 * whole configuration.
 *
 * @module
 */
import * as v from "valibot";
import { type Exactly, flag, type FlagInput, int } from "../settings/fields.ts";
import type { EnvSetting } from "../settings/env.ts";

/** `SvcConfig.breakGlass`: break-glass drills. */
export type BreakGlassConfig = { drillWindowDays: number; drillRequiredForReadiness: boolean };

/** `SvcConfigInput.breakGlass`: break-glass drills, as a config file gives it. */
export type BreakGlassConfigInput = { drillWindowDays?: number; drillRequiredForReadiness?: FlagInput };

/** The `breakGlass` section of the configuration. */
export const breakGlassSettingsSchema = v.optional(
  v.strictObject({
    /** A break-glass drill is due this long after the last one. */
    drillWindowDays: v.optional(int(1, 3650, "days"), 90),
    /** Whether an overdue drill turns `/readyz` to 503 (default: reported only). */
    drillRequiredForReadiness: v.optional(flag(), false),
  }),
  {},
);

/** The `SVC_*` variables of `breakGlass`. */
export const BREAK_GLASS_ENV_SETTINGS: readonly EnvSetting[] = [
  {
    name: "SVC_BREAK_GLASS_DRILL_WINDOW_DAYS",
    path: "breakGlass.drillWindowDays",
    kind: "int",
    doc: "days after a break-glass drill before the next one is due (readiness check break_glass_drill)",
  },
  {
    name: "SVC_BREAK_GLASS_DRILL_REQUIRED_FOR_READINESS",
    path: "breakGlass.drillRequiredForReadiness",
    kind: "string",
    doc: "true: an overdue break-glass drill turns /readyz to 503; false: reported in the body only",
  },
];

// The written-out types are exactly what the schema infers: `deno check` fails otherwise.
const _breakGlassOutput: Exactly<v.InferOutput<typeof breakGlassSettingsSchema>, BreakGlassConfig> = true;
const _breakGlassInput: Exactly<
  v.InferInput<typeof breakGlassSettingsSchema>,
  BreakGlassConfigInput | undefined
> = true;
