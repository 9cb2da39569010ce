/**
 * The settings of the Prometheus endpoint (`SvcConfig.metrics`): its valibot section, its written-
 * out types and its variable. `core/config/schema.ts` composes it into the whole configuration.
 *
 * @module
 */
import * as v from "valibot";
import { type Exactly, rule } from "../settings/fields.ts";
import type { EnvSetting } from "../settings/env.ts";

/** `SvcConfig.metrics`: the Prometheus endpoint. */
export type MetricsConfig = { token?: string };

/** `SvcConfigInput.metrics`: the Prometheus endpoint, as a config file gives it. */
export type MetricsConfigInput = { token?: string };

/** The `metrics` section of the configuration. */
export const metricsSettingsSchema = v.optional(
  v.strictObject({
    /** Bearer token of `GET /metrics`; unset: the route is not served. */
    token: v.optional(
      v.pipe(
        v.string(rule("is not text", "a token of at least 32 characters")),
        v.minLength(32, rule("is too short", "a token of at least 32 characters")),
      ),
    ),
  }),
  {},
);

/** The `SVC_*` variables of `metrics`. */
export const METRICS_ENV_SETTINGS: readonly EnvSetting[] = [
  {
    name: "SVC_METRICS_TOKEN",
    path: "metrics.token",
    kind: "string",
    doc: "bearer token of GET /metrics (Prometheus), at least 32 characters; unset: no metrics route",
    defaultText: "unset",
    secret: "hide",
  },
];

// The written-out types are exactly what the schema infers: `deno check` fails otherwise.
const _metricsOutput: Exactly<v.InferOutput<typeof metricsSettingsSchema>, MetricsConfig> = true;
const _metricsInput: Exactly<v.InferInput<typeof metricsSettingsSchema>, MetricsConfigInput | undefined> =
  true;
