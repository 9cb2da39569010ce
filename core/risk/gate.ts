/**
 * The risk gate, step 4 of the password login pipeline (spec 5.2, weights in spec 8). Each
 * deterministic signal that fires adds its weight to the score:
 *
 * | Signal              | Weight | Fires when                                                                  |
 * | ------------------- | ------ | --------------------------------------------------------------------------- |
 * | `new_device`        | 30     | the device id is not a known device of the user (or there is none)          |
 * | `impossible_travel` | 40     | distance from the last login ≥ min km and distance / elapsed time ≥ max km/h |
 * | `ip_reputation`     | 50     | the IP's reputation score (0-100, higher is worse) ≥ the threshold          |
 * | `velocity`          | 25     | logins of the user within the window, this one included, ≥ the threshold    |
 *
 * Score under `stepUpAt` (40) gives `Allow`, from `stepUpAt` `StepUpMfa`, from `blockAt` (80)
 * `Block`. An optional external risk-score provider composes with the built-in score: `sum`
 * (default) adds its score, `max` takes the larger of the two. A provider that fails (throws)
 * contributes nothing and is named in the signal's detail; the gate itself never throws for a
 * provider failure. Every decision emits `risk.evaluated` carrying the contributing signals.
 *
 * @module
 */
import type { Clock } from "../clock.ts";
import type { SvcConfig } from "../config/schema.ts";
import type { EventSink } from "../events/sink.ts";
import {
  type GeoLocation,
  type GeoLocator,
  greatCircleKm,
  type IpReputation,
  type LoginHistory,
} from "./providers.ts";

/** The gate's decision (spec section 3). */
export type RiskOutcome = "Allow" | "StepUpMfa" | "Block";

/** The built-in signals, plus `external` for the external provider. */
export type RiskSignalName = "new_device" | "impossible_travel" | "ip_reputation" | "velocity" | "external";

/** One evaluated signal. */
export interface RiskSignal {
  /** The signal. */
  readonly name: RiskSignalName;
  /** Whether it fired (contributes its weight). */
  readonly fired: boolean;
  /** The score it adds when fired (for `external`: the provider's score). */
  readonly weight: number;
  /** What was measured (never secrets); `error` names a failed provider. */
  readonly detail: Readonly<Record<string, unknown>>;
}

/** How the external provider's score composes with the built-in score. */
export type RiskCompose = "sum" | "max";

/** The login being assessed. */
export interface RiskContext {
  /** The user signing in. */
  readonly userId: string;
  /** The realm, when known. */
  readonly realmId?: string | null;
  /** The organization signed in to, when any. */
  readonly orgId?: string | null;
  /** The client IP. */
  readonly ip?: string | null;
  /**
   * The device id of the request (hashed before any lookup). Known only when the server
   * recorded it at an earlier sign-in of this user: a value never seen for the user (forged,
   * client-chosen or freshly issued) counts as new, so a client cannot lower the score.
   */
  readonly deviceId?: string | null;
  /**
   * What the caller already read with the account (issue 29: one statement for a sign-in's
   * reads): whether the device is known to the user, and the user's login history. Each one
   * given replaces the gate's own read of it; a signal whose provider the gate lacks stays
   * skipped whatever is given here.
   */
  readonly prefetched?: {
    /** Whether `deviceId` is a known device of the user (read with the account). */
    readonly deviceKnown?: boolean;
    /** The user's login history as read with the account. */
    readonly history?: LoginHistory;
  };
}

/** What an external risk-score provider is given. */
export interface ExternalRiskInput extends RiskContext {
  /** The built-in signals, evaluated. */
  readonly signals: readonly RiskSignal[];
  /** The built-in score. */
  readonly builtInScore: number;
  /** The client's location, when known. */
  readonly location: GeoLocation | null;
}

/** An external risk-score provider (a fraud service, a rules engine…). */
export interface ExternalRiskProvider {
  /** The provider's name, recorded with its score. */
  readonly name: string;
  /** A score (0 or more; same scale as the weights) and optional reasons for the record. */
  assess(input: ExternalRiskInput): Promise<{ score: number; reasons?: readonly string[] }>;
}

/** Tells known devices from new ones (the known-device service implements it). */
export interface DeviceRecognizer {
  /** Whether the device id is a known device of the user (read only; recording happens after login). */
  isKnown(userId: string, deviceId: string): Promise<boolean>;
}

/** The gate's thresholds and weights (the shape of `config.risk`). */
export interface RiskSettings {
  /** The score each signal adds when it fires. */
  readonly weights: {
    readonly newDevice: number;
    readonly impossibleTravel: number;
    readonly ipReputation: number;
    readonly velocity: number;
  };
  /** A score at or above this asks for a second factor. */
  readonly stepUpAt: number;
  /** A score at or above this blocks the sign-in. */
  readonly blockAt: number;
  /** Impossible travel: the speed (km/h) from the last login that fires the signal. */
  readonly impossibleTravelKmh: number;
  /** Impossible travel: shorter distances (km) never fire it. */
  readonly impossibleTravelMinKm: number;
  /** Velocity: logins of one account per window that fire the signal. */
  readonly velocityLogins: number;
  /** Velocity: the window, in seconds. */
  readonly velocityWindowSeconds: number;
  /** IP reputation: a score (0 to 100) at or above this fires the signal. */
  readonly ipReputationThreshold: number;
}

/** Spec section 8, and svc's defaults for the signal thresholds. */
export const DEFAULT_RISK_SETTINGS: RiskSettings = Object.freeze({
  weights: { newDevice: 30, impossibleTravel: 40, ipReputation: 50, velocity: 25 },
  stepUpAt: 40,
  blockAt: 80,
  impossibleTravelKmh: 1000,
  impossibleTravelMinKm: 500,
  velocityLogins: 10,
  velocityWindowSeconds: 3600,
  ipReputationThreshold: 50,
});

/** The event kind of every decision. */
export const RISK_EVALUATED = "risk.evaluated";

/** The gate's answer. */
export interface RiskDecision {
  /** `Allow`, `StepUpMfa` or `Block`. */
  readonly outcome: RiskOutcome;
  /** The final score (built-in composed with the external one). */
  readonly score: number;
  /** The sum of the fired built-in signals' weights. */
  readonly builtInScore: number;
  /** Every signal evaluated, fired or not (the external one last, when a provider is set). */
  readonly signals: readonly RiskSignal[];
  /** The client's location, when known (the pipeline may record it with the login). */
  readonly location: GeoLocation | null;
}

/** What {@link RiskGate} needs. Absent providers leave their signals unfired. */
export interface RiskGateOptions {
  /** The source of the current time. */
  readonly clock: Clock;
  /** Receives `risk.evaluated`. */
  readonly sink: EventSink;
  /** Thresholds and weights (default: spec section 8). */
  readonly settings?: RiskSettings;
  /** Tells whether the device is known (the new-device signal). */
  readonly devices?: DeviceRecognizer | null;
  /** Locates IP addresses (impossible travel). */
  readonly geo?: GeoLocator | null;
  /** Scores IP addresses (IP reputation). */
  readonly reputation?: IpReputation | null;
  /** Past logins (impossible travel and velocity). */
  readonly history?: LoginHistory | null;
  /** An external score provider. */
  readonly external?: ExternalRiskProvider | null;
  /** How the external score composes (default `sum`). */
  readonly compose?: RiskCompose;
}

function errorDetail(error: unknown): Record<string, unknown> {
  return { error: "provider_unavailable", message: error instanceof Error ? error.message : String(error) };
}

/** The outcome of a score under the settings' thresholds. */
export function riskOutcome(
  score: number,
  settings: Pick<RiskSettings, "stepUpAt" | "blockAt"> = DEFAULT_RISK_SETTINGS,
): RiskOutcome {
  return score >= settings.blockAt ? "Block" : score >= settings.stepUpAt ? "StepUpMfa" : "Allow";
}

/** The risk gate. */
export class RiskGate {
  readonly #options: RiskGateOptions;
  readonly #settings: RiskSettings;

  /** The gate over its providers and settings. */
  constructor(options: RiskGateOptions) {
    this.#options = options;
    this.#settings = options.settings ?? DEFAULT_RISK_SETTINGS;
  }

  /** A gate from `config.risk`; providers come from `loadRiskProviders` and the caller. */
  static fromConfig(config: SvcConfig["risk"], deps: Omit<RiskGateOptions, "settings">): RiskGate {
    return new RiskGate({ ...deps, settings: config });
  }

  /** Scores a login after its credentials verified; emits `risk.evaluated`. */
  async evaluate(context: RiskContext): Promise<RiskDecision> {
    const now = this.#options.clock.now();
    const ip = context.ip ?? null;
    const location = await this.#locate(ip);
    const [newDevice, travel, reputation, velocity] = await Promise.all([
      this.#newDevice(context),
      this.#impossibleTravel(context, now, location.value, location.error),
      this.#ipReputation(ip),
      this.#velocity(context, now),
    ]);
    const signals: RiskSignal[] = [newDevice, travel, reputation, velocity];
    const builtInScore = signals.reduce((sum, s) => sum + (s.fired ? s.weight : 0), 0);
    let score = builtInScore;

    const external = this.#options.external;
    if (external) {
      let signal: RiskSignal;
      try {
        const { prefetched: _prefetched, ...asked } = context;
        const result = await external.assess({ ...asked, signals, builtInScore, location: location.value });
        if (typeof result.score !== "number" || !Number.isFinite(result.score)) {
          throw new Error(`${external.name} returned a score that is not a finite number`);
        }
        const externalScore = Math.max(0, result.score);
        const compose = this.#options.compose ?? "sum";
        score = compose === "max" ? Math.max(builtInScore, externalScore) : builtInScore + externalScore;
        signal = {
          name: "external",
          fired: externalScore > 0,
          weight: externalScore,
          detail: { provider: external.name, compose, reasons: [...(result.reasons ?? [])] },
        };
      } catch (error) {
        signal = {
          name: "external",
          fired: false,
          weight: 0,
          detail: { provider: external.name, ...errorDetail(error) },
        };
      }
      signals.push(signal);
    }

    const outcome = riskOutcome(score, this.#settings);
    this.#options.sink.emit({
      kind: RISK_EVALUATED,
      occurredAt: now,
      realmId: context.realmId ?? null,
      orgId: context.orgId ?? null,
      userId: context.userId,
      data: {
        outcome,
        score,
        builtInScore,
        signals: signals.filter((s) => s.fired).map((s) => ({ name: s.name, weight: s.weight, ...s.detail })),
        failedProviders: signals.filter((s) => s.detail.error !== undefined).map((s) => s.name),
        ip,
        country: location.value?.country ?? null,
      },
    });
    return { outcome, score, builtInScore, signals, location: location.value };
  }

  async #locate(ip: string | null): Promise<{ value: GeoLocation | null; error?: unknown }> {
    const geo = this.#options.geo;
    if (!geo || !ip) return { value: null };
    try {
      return { value: await geo.locate(ip) };
    } catch (error) {
      return { value: null, error };
    }
  }

  async #newDevice(context: RiskContext): Promise<RiskSignal> {
    const weight = this.#settings.weights.newDevice;
    const devices = this.#options.devices;
    if (!devices) {
      return { name: "new_device", fired: false, weight, detail: { skipped: "no_device_tracking" } };
    }
    if (!context.deviceId) {
      return { name: "new_device", fired: true, weight, detail: { reason: "no_device_id" } };
    }
    try {
      const known = context.prefetched?.deviceKnown ??
        await devices.isKnown(context.userId, context.deviceId);
      return { name: "new_device", fired: !known, weight, detail: {} };
    } catch (error) {
      return { name: "new_device", fired: false, weight, detail: errorDetail(error) };
    }
  }

  /** The history the gate reads: the caller's prefetched one, when the gate has a history at all. */
  #history(context: RiskContext): LoginHistory | null {
    const own = this.#options.history;
    if (!own) return null;
    return context.prefetched?.history ?? own;
  }

  async #impossibleTravel(
    context: RiskContext,
    now: number,
    here: GeoLocation | null,
    geoError: unknown,
  ): Promise<RiskSignal> {
    const weight = this.#settings.weights.impossibleTravel;
    const skip = (detail: Record<string, unknown>): RiskSignal => ({
      name: "impossible_travel",
      fired: false,
      weight,
      detail,
    });
    if (geoError !== undefined) return skip(errorDetail(geoError));
    const userId = context.userId;
    const history = this.#history(context);
    if (!history || !this.#options.geo) return skip({ skipped: "no_history_or_geolocation" });
    if (!here) return skip({ skipped: "location_unknown" });
    try {
      const last = await history.lastLogin(userId);
      if (!last) return skip({ skipped: "no_previous_login" });
      const there = last.location ?? (last.ip ? await this.#options.geo.locate(last.ip) : null);
      if (!there) return skip({ skipped: "previous_location_unknown" });
      const distanceKm = greatCircleKm(there, here);
      const elapsedMs = Math.max(0, now - last.at);
      const speedKmh = elapsedMs === 0
        ? (distanceKm > 0 ? Infinity : 0)
        : distanceKm / (elapsedMs / 3_600_000);
      const fired = distanceKm >= this.#settings.impossibleTravelMinKm &&
        speedKmh >= this.#settings.impossibleTravelKmh;
      return {
        name: "impossible_travel",
        fired,
        weight,
        detail: {
          distanceKm: Math.round(distanceKm),
          elapsedSeconds: Math.round(elapsedMs / 1000),
          speedKmh: Number.isFinite(speedKmh) ? Math.round(speedKmh) : null,
          from: there.country,
          to: here.country,
        },
      };
    } catch (error) {
      return skip(errorDetail(error));
    }
  }

  async #ipReputation(ip: string | null): Promise<RiskSignal> {
    const weight = this.#settings.weights.ipReputation;
    const reputation = this.#options.reputation;
    if (!reputation) {
      return { name: "ip_reputation", fired: false, weight, detail: { skipped: "no_reputation" } };
    }
    if (!ip) return { name: "ip_reputation", fired: false, weight, detail: { skipped: "no_ip" } };
    try {
      const score = await reputation.score(ip);
      const fired = score !== null && score >= this.#settings.ipReputationThreshold;
      return { name: "ip_reputation", fired, weight, detail: { reputation: score } };
    } catch (error) {
      return { name: "ip_reputation", fired: false, weight, detail: errorDetail(error) };
    }
  }

  async #velocity(context: RiskContext, now: number): Promise<RiskSignal> {
    const weight = this.#settings.weights.velocity;
    const userId = context.userId;
    const history = this.#history(context);
    if (!history) return { name: "velocity", fired: false, weight, detail: { skipped: "no_history" } };
    try {
      const windowSeconds = this.#settings.velocityWindowSeconds;
      const logins = (await history.countSince(userId, now - windowSeconds * 1000)) + 1;
      return {
        name: "velocity",
        fired: logins >= this.#settings.velocityLogins,
        weight,
        detail: { logins, windowSeconds },
      };
    } catch (error) {
      return { name: "velocity", fired: false, weight, detail: errorDetail(error) };
    }
  }
}
