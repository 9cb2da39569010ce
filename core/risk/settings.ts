/**
 * The settings of the login risk gate (`SvcConfig.risk`): its valibot section, its written-out
 * types and its `SVC_RISK_*` variables. `core/config/schema.ts` composes it into the whole
 * configuration.
 *
 * @module
 */
import * as v from "valibot";
import { type Exactly, int, nonEmpty } from "../settings/fields.ts";
import type { EnvSetting } from "../settings/env.ts";

/** `SvcConfig.risk`: the login risk gate. */
export type RiskConfig = {
  weights: { newDevice: number; impossibleTravel: number; ipReputation: number; velocity: number };
  stepUpAt: number;
  blockAt: number;
  impossibleTravelKmh: number;
  impossibleTravelMinKm: number;
  velocityLogins: number;
  velocityWindowSeconds: number;
  ipReputationThreshold: number;
  geoipFile?: string;
  ipReputationFile?: string;
};

/** `SvcConfigInput.risk`: the login risk gate, as a config file gives it. */
export type RiskConfigInput = {
  weights?: { newDevice?: number; impossibleTravel?: number; ipReputation?: number; velocity?: number };
  stepUpAt?: number;
  blockAt?: number;
  impossibleTravelKmh?: number;
  impossibleTravelMinKm?: number;
  velocityLogins?: number;
  velocityWindowSeconds?: number;
  ipReputationThreshold?: number;
  geoipFile?: string;
  ipReputationFile?: string;
};

/** The `risk` section of the configuration. */
export const riskSettingsSchema = v.optional(
  v.strictObject({
    weights: v.optional(
      v.strictObject({
        newDevice: v.optional(int(0, 1000), 30),
        impossibleTravel: v.optional(int(0, 1000), 40),
        ipReputation: v.optional(int(0, 1000), 50),
        velocity: v.optional(int(0, 1000), 25),
      }),
      {},
    ),
    stepUpAt: v.optional(int(0, 1000), 40),
    blockAt: v.optional(int(0, 1000), 80),
    /** Impossible travel: a speed from the last login at or above this (km/h) fires the signal. */
    impossibleTravelKmh: v.optional(int(1, 100_000, "km/h"), 1000),
    /** Impossible travel: distances below this (km) never fire (geolocation noise). */
    impossibleTravelMinKm: v.optional(int(0, 20_100, "km"), 500),
    /** Velocity: this many logins of the account within the window (this one included) fire it. */
    velocityLogins: v.optional(int(1, 1_000_000), 10),
    velocityWindowSeconds: v.optional(int(1, 604800, "seconds"), 3600),
    /** IP reputation: a score (0 to 100, higher is worse) at or above this fires the signal. */
    ipReputationThreshold: v.optional(int(0, 100), 50),
    /** CSV of CIDR ranges to country, latitude, longitude (unset: no geolocation). */
    geoipFile: v.optional(nonEmpty("the path of a CSV file: cidr,country,latitude,longitude")),
    /** List of IPs or CIDR ranges with optional scores (unset: no IP reputation). */
    ipReputationFile: v.optional(nonEmpty("the path of a list file: one IP or CIDR range per line")),
  }),
  {},
);

/** The `SVC_*` variables of `risk`. */
export const RISK_ENV_SETTINGS: readonly EnvSetting[] = [
  {
    name: "SVC_RISK_WEIGHT_NEW_DEVICE",
    path: "risk.weights.newDevice",
    kind: "int",
    doc: "risk score added by a new device",
  },
  {
    name: "SVC_RISK_WEIGHT_IMPOSSIBLE_TRAVEL",
    path: "risk.weights.impossibleTravel",
    kind: "int",
    doc: "risk score added by impossible travel",
  },
  {
    name: "SVC_RISK_WEIGHT_IP_REPUTATION",
    path: "risk.weights.ipReputation",
    kind: "int",
    doc: "risk score added by a bad IP reputation",
  },
  {
    name: "SVC_RISK_WEIGHT_VELOCITY",
    path: "risk.weights.velocity",
    kind: "int",
    doc: "risk score added by velocity",
  },
  {
    name: "SVC_RISK_STEP_UP_AT",
    path: "risk.stepUpAt",
    kind: "int",
    doc: "risk score from which MFA step-up is required (at most SVC_RISK_BLOCK_AT)",
  },
  {
    name: "SVC_RISK_BLOCK_AT",
    path: "risk.blockAt",
    kind: "int",
    doc: "risk score from which login is blocked",
  },
  {
    name: "SVC_RISK_IMPOSSIBLE_TRAVEL_KMH",
    path: "risk.impossibleTravelKmh",
    kind: "int",
    doc: "impossible travel: speed from the last login (km/h) at or above which the signal fires",
  },
  {
    name: "SVC_RISK_IMPOSSIBLE_TRAVEL_MIN_KM",
    path: "risk.impossibleTravelMinKm",
    kind: "int",
    doc: "impossible travel: distances below this (km) never fire (geolocation noise)",
  },
  {
    name: "SVC_RISK_VELOCITY_LOGINS",
    path: "risk.velocityLogins",
    kind: "int",
    doc: "velocity: logins of one account per window (this one included) that fire the signal",
  },
  {
    name: "SVC_RISK_VELOCITY_WINDOW_SECONDS",
    path: "risk.velocityWindowSeconds",
    kind: "int",
    doc: "velocity: window",
  },
  {
    name: "SVC_RISK_IP_REPUTATION_THRESHOLD",
    path: "risk.ipReputationThreshold",
    kind: "int",
    doc: "IP reputation score (0-100, higher is worse) at or above which the signal fires",
  },
  {
    name: "SVC_RISK_GEOIP_FILE",
    path: "risk.geoipFile",
    kind: "string",
    doc: "CSV file of CIDR ranges: cidr,country,latitude,longitude (GeoLite2 blocks CSV works too)",
    defaultText: "unset (no geolocation)",
  },
  {
    name: "SVC_RISK_IP_REPUTATION_FILE",
    path: "risk.ipReputationFile",
    kind: "string",
    doc: "list file of IPs or CIDR ranges, each with an optional score 0-100 (default 100: blocklist)",
    defaultText: "unset (no reputation)",
  },
];

// The written-out types are exactly what the schema infers: `deno check` fails otherwise.
const _riskOutput: Exactly<v.InferOutput<typeof riskSettingsSchema>, RiskConfig> = true;
const _riskInput: Exactly<v.InferInput<typeof riskSettingsSchema>, RiskConfigInput | undefined> = true;
