/**
 * The abuse gate, step 1 of the password login pipeline (spec 5.2, limits in spec 8). Four
 * windowed layers, each with its own limit, window and failure mode:
 *
 * | Layer                | Counts                                          | Default             |
 * | -------------------- | ----------------------------------------------- | ------------------- |
 * | `perIp`              | attempts from one IP                            | 30 per 5 minutes    |
 * | `perIpAccount`       | attempts from one IP at one account             | 10 per 15 minutes   |
 * | `accountLockout`     | failed attempts at one account, from any IP     | 5 per 15 minutes    |
 * | `credentialStuffing` | distinct identifiers tried from one IP          | 200 per 10 minutes  |
 *
 * A layer allows up to its limit: the attempt that would be number `limit + 1` in the window
 * (for the lockout: the attempt after the `limit`-th failure) is `Blocked`. Counter windows
 * are anchored at their first hit and end `window` later (then the count restarts); the
 * distinct set slides (an identifier stays counted for a window after it was last tried).
 * Every attempt counts, including refused ones; a blocked client does not extend a counter's
 * window, so it resets on time.
 *
 * Limits hold under concurrency: each counted layer takes its slot with one conditional,
 * atomic reservation ({@link CounterStore.reserve}) before anything else runs, so however many
 * attempts race, at most `limit` per window get through a layer. The lockout reserves a
 * failure before the password is checked: an attempt that fails keeps its slot (it is the
 * failure); one whose password was right gives it back ({@link AbuseGate.release}); a refused
 * attempt (blocked by another layer, or sent to the CAPTCHA) never held one. A successful
 * sign-in clears the account's failures ({@link AbuseGate.recordSuccess}).
 *
 * Adaptive CAPTCHA: when a provider is configured and any layer is past `captchaAtPercent` of
 * its limit (default half), the outcome is `CaptchaRequired` unless the attempt carries a
 * token the provider accepts. Blocking always wins over the CAPTCHA.
 *
 * Identifiers are normalised (trimmed, lowercased) and hashed with the realm before they
 * reach the store, and so are IP addresses; IPv6 addresses are counted per /64 (configurable),
 * IPv4-mapped IPv6 as IPv4.
 *
 * When the counter store fails, each failing layer follows its failure mode: `open` (the
 * default) skips the layer, `closed` blocks the attempt. Either way the gate emits
 * `abuse.counter_store_unavailable` (one event per call, naming the failing layers).
 *
 * Break-glass accounts (`LoginAttempt.breakGlassStamp`): the emergency account must stay usable
 * when strangers guess at it, so its `accountLockout` layer counts failures per address and
 * account (one address can lock out only itself), and its per-account counters are keyed by the
 * account's credential stamp, which every password rotation changes (a rotation resets them).
 * Its password is generated with high entropy, so per-address limits bound guessing enough.
 *
 * @module
 */
import { normalizeEmail } from "../accounts/email.ts";
import type { Clock } from "../clock.ts";
import type { SvcConfig } from "../config/schema.ts";
import type { FailMode } from "./settings.ts";
import { sha256Hex } from "../digest.ts";
import type { EventSink } from "../events/sink.ts";
import { formatIp, parseIp } from "../net/ip.ts";
import type { CaptchaProvider } from "./captcha.ts";
import type { CounterReservation, CounterStore, DistinctRequest, ReserveRequest } from "./counter-store.ts";

type Settled<T> = PromiseSettledResult<T>;

/** The gate's decision (spec section 3). */
export type AbuseOutcome = "Allowed" | "Blocked" | "CaptchaRequired";

/** The four layers. */
export type AbuseLayerName = "perIp" | "perIpAccount" | "accountLockout" | "credentialStuffing";

export type { FailMode } from "./settings.ts";

/** A counting layer's settings. */
export interface AbuseLayerLimit {
  /** Attempts allowed per window. */
  readonly limit: number;
  /** The window's length in seconds. */
  readonly windowSeconds: number;
  /** What happens when the counter store is down. */
  readonly failMode: FailMode;
}

/** The four layers' settings (the shape of `config.abuse`, without the CAPTCHA part). */
export interface AbuseLimits {
  /** Attempts per client IP. */
  readonly perIp: AbuseLayerLimit;
  /** Attempts per client IP and account. */
  readonly perIpAccount: AbuseLayerLimit;
  /** Failed attempts per account (the lockout). */
  readonly accountLockout: AbuseLayerLimit;
  /** Distinct accounts tried from one IP (credential stuffing). */
  readonly credentialStuffing: {
    readonly distinctIdentifiers: number;
    readonly windowSeconds: number;
    readonly failMode: FailMode;
  };
}

/** Spec section 8. */
export const DEFAULT_ABUSE_LIMITS: AbuseLimits = Object.freeze<AbuseLimits>({
  perIp: { limit: 30, windowSeconds: 300, failMode: "open" },
  perIpAccount: { limit: 10, windowSeconds: 900, failMode: "open" },
  accountLockout: { limit: 5, windowSeconds: 900, failMode: "open" },
  credentialStuffing: { distinctIdentifiers: 200, windowSeconds: 600, failMode: "open" },
});

/** The event kind emitted when the counter store fails. */
export const ABUSE_COUNTER_STORE_UNAVAILABLE = "abuse.counter_store_unavailable";
/** The event kind emitted when the gate blocks an attempt. */
export const ABUSE_BLOCKED = "abuse.blocked";

/** One login attempt as the gate sees it (before any user lookup). */
export interface LoginAttempt {
  /** The client's IP address. */
  readonly ip: string;
  /** The login name as submitted (an email); normalised by the gate. */
  readonly identifier: string;
  /** The realm the login targets (accounts are per realm). */
  readonly realmId?: string | null;
  /** The CAPTCHA widget's token, when the client sent one. */
  readonly captchaToken?: string | null;
  /**
   * Set when the account is a break-glass account: its credential stamp (changed by every
   * password rotation). The emergency account cannot be locked out by strangers: its lockout
   * counts failures per address (one address locks out only itself), and its counters are keyed
   * by this stamp, so a rotation starts them afresh.
   */
  readonly breakGlassStamp?: string | null;
}

/** How one layer judged an attempt. */
export interface AbuseLayerReport {
  /** The layer. */
  readonly layer: AbuseLayerName;
  /** `ok`, `captcha` (past the CAPTCHA threshold), `blocked`, or `unavailable` (store failed). */
  readonly state: "ok" | "captcha" | "blocked" | "unavailable";
  /** The count this attempt reached in the layer (for the lockout: failures so far + 1); null when unavailable. */
  readonly count: number | null;
  /** The layer's limit. */
  readonly limit: number;
  /** When the layer's window ends (ms since the epoch), when known. */
  readonly resetAt: number | null;
}

/** The gate's answer. */
export interface AbuseDecision {
  /** `Allowed`, `Blocked` or `CaptchaRequired`. */
  readonly outcome: AbuseOutcome;
  /** How each layer judged the attempt. */
  readonly layers: readonly AbuseLayerReport[];
  /** `Blocked` by counters: seconds until every blocking layer has reset; otherwise null. */
  readonly retryAfterSeconds: number | null;
  /** `CaptchaRequired`: what the page needs to render the widget, and why a presented token failed. */
  readonly captcha: {
    readonly provider: string;
    readonly siteKey: string | null;
    readonly errorCodes: readonly string[];
  } | null;
  /** Whether a CAPTCHA token was verified and accepted for this attempt. */
  readonly captchaVerified: boolean;
  /**
   * `Allowed`: the lockout slot this attempt holds (it counts as a failure unless given back
   * with {@link AbuseGate.release}); null otherwise, or when the store did not answer.
   */
  readonly reservation: AttemptReservation | null;
}

/** A lockout slot held by an allowed attempt (opaque to callers: hand it back to the gate). */
export interface AttemptReservation {
  /** The counter the slot is in. */
  readonly key: string;
  /** The end of the window the slot was taken in (a release touches that window only). */
  readonly resetAt: number;
}

/** What {@link AbuseGate} needs. */
export interface AbuseGateOptions {
  /** Where the windowed counters live. */
  readonly store: CounterStore;
  /** The source of the current time. */
  readonly clock: Clock;
  /** Receives `abuse.counter_store_unavailable` and `abuse.blocked`. */
  readonly sink: EventSink;
  /** The layers (default: spec section 8). */
  readonly limits?: AbuseLimits;
  /** The CAPTCHA provider; null or absent: the gate never demands a CAPTCHA. */
  readonly captcha?: CaptchaProvider | null;
  /** A layer past this percentage of its limit demands a CAPTCHA (1 to 100, default 50; 100: never). */
  readonly captchaAtPercent?: number;
  /** IPv6 addresses are counted per prefix of this length (default 64; 128 counts each address). */
  readonly ipv6PrefixBits?: number;
}

interface LayerResult {
  readonly layer: AbuseLayerName;
  readonly limit: number;
  readonly failMode: FailMode;
  readonly windowMs: number;
  readonly value: { count: number; resetAt: number | null } | null;
  readonly error?: unknown;
}

/** A reservation as a layer's count: a refused one is one past the limit (blocked). */
function reserved(limit: number) {
  return (r: CounterReservation): { count: number; resetAt: number | null } => ({
    count: r.granted ? r.count : Math.max(r.count, limit) + 1,
    resetAt: r.resetAt,
  });
}

/** The abuse gate. */
export class AbuseGate {
  readonly #store: CounterStore;
  readonly #clock: Clock;
  readonly #sink: EventSink;
  readonly #limits: AbuseLimits;
  readonly #captcha: CaptchaProvider | null;
  readonly #captchaAtPercent: number;
  readonly #ipv6PrefixBits: number;

  /** The gate over its counter store, clock, event sink, limits and CAPTCHA provider. */
  constructor(options: AbuseGateOptions) {
    this.#store = options.store;
    this.#clock = options.clock;
    this.#sink = options.sink;
    this.#limits = options.limits ?? DEFAULT_ABUSE_LIMITS;
    this.#captcha = options.captcha ?? null;
    this.#captchaAtPercent = Math.min(100, Math.max(1, options.captchaAtPercent ?? 50));
    this.#ipv6PrefixBits = options.ipv6PrefixBits ?? 64;
  }

  /** A gate from `config.abuse` (layers and CAPTCHA threshold); the provider comes from `captchaProviderFromConfig`. */
  static fromConfig(
    config: SvcConfig["abuse"],
    deps: { store: CounterStore; clock: Clock; sink: EventSink; captcha?: CaptchaProvider | null },
  ): AbuseGate {
    return new AbuseGate({ ...deps, limits: config, captchaAtPercent: config.captcha.atPercent });
  }

  /** The CAPTCHA provider in use, or null. */
  get captchaProvider(): CaptchaProvider | null {
    return this.#captcha;
  }

  /**
   * Counts an attempt in every layer, reserving its lockout slot, and decides. Call it first,
   * before the user lookup; a failed credential needs nothing more (the slot is the failure);
   * a right password calls {@link release}, a completed sign-in {@link recordSuccess}.
   */
  async check(attempt: LoginAttempt): Promise<AbuseDecision> {
    const keys = this.#keys(attempt);
    const l = this.#limits;
    const ms = (s: number) => s * 1000;
    const reserves: [ReserveRequest, ReserveRequest, ReserveRequest] = [
      { key: keys.ip, limit: l.perIp.limit, windowMs: ms(l.perIp.windowSeconds) },
      { key: keys.ipAccount, limit: l.perIpAccount.limit, windowMs: ms(l.perIpAccount.windowSeconds) },
      { key: keys.account, limit: l.accountLockout.limit, windowMs: ms(l.accountLockout.windowSeconds) },
    ];
    const distinct = {
      key: keys.stuffing,
      member: keys.accountHash,
      windowMs: ms(l.credentialStuffing.windowSeconds),
    };
    const [ip, ipAccount, account, stuffing] = await this.#countAll(reserves, distinct);
    const now = this.#clock.now();
    const results: LayerResult[] = [
      this.#result("perIp", l.perIp, ip, reserved(l.perIp.limit)),
      this.#result("perIpAccount", l.perIpAccount, ipAccount, reserved(l.perIpAccount.limit)),
      // The lockout counts failures, this attempt's reserved one included.
      this.#result("accountLockout", l.accountLockout, account, reserved(l.accountLockout.limit)),
      this.#result(
        "credentialStuffing",
        {
          limit: l.credentialStuffing.distinctIdentifiers,
          windowSeconds: l.credentialStuffing.windowSeconds,
          failMode: l.credentialStuffing.failMode,
        },
        stuffing,
        (n) => ({ count: n, resetAt: null }),
      ),
    ];
    const held = account.status === "fulfilled" && account.value.granted && account.value.resetAt !== null
      ? { key: keys.account, resetAt: account.value.resetAt }
      : null;

    const unavailable = results.filter((r) => r.value === null);
    if (unavailable.length > 0) this.#reportUnavailable(attempt, unavailable, "check");

    const soft = (limit: number) => Math.floor((limit * this.#captchaAtPercent) / 100);
    const reports: AbuseLayerReport[] = results.map((r) => {
      if (r.value === null) {
        return { layer: r.layer, state: "unavailable", count: null, limit: r.limit, resetAt: null };
      }
      const { count, resetAt } = r.value;
      const state = count > r.limit ? "blocked" : count > soft(r.limit) ? "captcha" : "ok";
      return { layer: r.layer, state, count, limit: r.limit, resetAt };
    });

    const blocked = reports.filter((r) => r.state === "blocked");
    const closed = results.filter((r) => r.value === null && r.failMode === "closed");
    if (blocked.length > 0 || closed.length > 0) {
      await this.#giveBack(attempt, held, "check");
      let retryAfterSeconds: number | null = null;
      if (blocked.length > 0) {
        retryAfterSeconds = Math.max(
          ...blocked.map((r) => {
            const windowMs = results.find((x) => x.layer === r.layer)!.windowMs;
            const until = r.resetAt ?? now + windowMs;
            return Math.max(1, Math.ceil((until - now) / 1000));
          }),
        );
      }
      this.#sink.emit({
        kind: ABUSE_BLOCKED,
        occurredAt: now,
        realmId: attempt.realmId ?? null,
        data: {
          layers: [...blocked.map((r) => r.layer), ...closed.map((r) => r.layer)],
          failClosed: closed.map((r) => r.layer),
          ip: attempt.ip,
        },
      });
      return {
        outcome: "Blocked",
        layers: reports,
        retryAfterSeconds,
        captcha: null,
        captchaVerified: false,
        reservation: null,
      };
    }

    const pressured = reports.some((r) => r.state === "captcha");
    if (!pressured || this.#captcha === null) {
      return {
        outcome: "Allowed",
        layers: reports,
        retryAfterSeconds: null,
        captcha: null,
        captchaVerified: false,
        reservation: held,
      };
    }
    const captcha = this.#captcha;
    let errorCodes: readonly string[] = [];
    if (attempt.captchaToken) {
      const verification = await captcha.verify(attempt.captchaToken, { remoteIp: attempt.ip })
        .catch(() => ({ success: false, errorCodes: ["provider-error"] }));
      if (verification.success) {
        return {
          outcome: "Allowed",
          layers: reports,
          retryAfterSeconds: null,
          captcha: null,
          captchaVerified: true,
          reservation: held,
        };
      }
      errorCodes = verification.errorCodes;
    }
    await this.#giveBack(attempt, held, "check");
    return {
      outcome: "CaptchaRequired",
      layers: reports,
      retryAfterSeconds: null,
      captcha: { provider: captcha.name, siteKey: captcha.siteKey, errorCodes },
      captchaVerified: false,
      reservation: null,
    };
  }

  /** Every layer's hit: one round trip where the store batches them, else one call per layer. */
  async #countAll(
    reserves: readonly [ReserveRequest, ReserveRequest, ReserveRequest],
    distinct: DistinctRequest,
  ): Promise<
    [Settled<CounterReservation>, Settled<CounterReservation>, Settled<CounterReservation>, Settled<number>]
  > {
    const store = this.#store;
    if (store.reserveAll && new Set(reserves.map((r) => r.key)).size === reserves.length) {
      try {
        const { reservations: [a, b, c], distinct: n } = await store.reserveAll(reserves, distinct);
        const ok = <T>(value: T): Settled<T> => ({ status: "fulfilled", value });
        return [ok(a), ok(b), ok(c), ok(n)];
      } catch (reason) {
        const failed = { status: "rejected" as const, reason };
        return [failed, failed, failed, failed];
      }
    }
    const [a, b, c] = reserves;
    return await Promise.allSettled([
      store.reserve(a.key, a.limit, a.windowMs),
      store.reserve(b.key, b.limit, b.windowMs),
      store.reserve(c.key, c.limit, c.windowMs),
      store.addDistinct(distinct.key, distinct.member, distinct.windowMs),
    ]);
  }

  /**
   * Gives back the lockout slot of an allowed attempt whose password was right (it is no
   * failure). Without a release, the slot stays counted as a failed attempt.
   */
  async release(attempt: Omit<LoginAttempt, "captchaToken">, decision: AbuseDecision): Promise<void> {
    await this.#giveBack(attempt, decision.reservation, "release");
  }

  /**
   * The counter {@link recordSuccess} clears, when the caller may clear it in a statement of its
   * own (the counters are in svc storage: `CounterStore.inStorage`); null otherwise.
   */
  successCounterKey(attempt: Omit<LoginAttempt, "captchaToken">): string | null {
    return this.#store.inStorage === true ? this.#keys(attempt).account : null;
  }

  /** Clears the account's failures after a successful login. */
  async recordSuccess(attempt: Omit<LoginAttempt, "captchaToken">): Promise<void> {
    const { account } = this.#keys(attempt);
    try {
      await this.#store.reset(account);
    } catch (error) {
      this.#reportUnavailable(attempt, [this.#lockoutResult(error)], "recordSuccess");
    }
  }

  async #giveBack(
    attempt: { realmId?: string | null },
    reservation: AttemptReservation | null,
    operation: "check" | "release",
  ): Promise<void> {
    if (reservation === null) return;
    try {
      await this.#store.release(reservation.key, reservation.resetAt);
    } catch (error) {
      this.#reportUnavailable(attempt, [this.#lockoutResult(error)], operation);
    }
  }

  #lockoutResult(error: unknown): LayerResult {
    const l = this.#limits.accountLockout;
    return {
      layer: "accountLockout",
      limit: l.limit,
      failMode: l.failMode,
      windowMs: l.windowSeconds * 1000,
      value: null,
      error,
    };
  }

  #result<T>(
    layer: AbuseLayerName,
    limit: { limit: number; windowSeconds: number; failMode: FailMode },
    settled: PromiseSettledResult<T>,
    map: (value: T) => { count: number; resetAt: number | null },
  ): LayerResult {
    const base = {
      layer,
      limit: limit.limit,
      failMode: limit.failMode,
      windowMs: limit.windowSeconds * 1000,
    };
    return settled.status === "fulfilled"
      ? { ...base, value: map(settled.value) }
      : { ...base, value: null, error: settled.reason };
  }

  #reportUnavailable(
    attempt: { realmId?: string | null },
    failed: readonly LayerResult[],
    operation: "check" | "release" | "recordSuccess",
  ): void {
    const error = failed.find((r) => r.error !== undefined)?.error;
    this.#sink.emit({
      kind: ABUSE_COUNTER_STORE_UNAVAILABLE,
      occurredAt: this.#clock.now(),
      realmId: attempt.realmId ?? null,
      data: {
        operation,
        layers: failed.map((r) => ({ layer: r.layer, failMode: r.failMode })),
        error: error instanceof Error ? error.message : String(error),
      },
    });
  }

  #keys(
    attempt: { ip: string; identifier: string; realmId?: string | null; breakGlassStamp?: string | null },
  ) {
    // Digests only: counter keys never hold an address (erasure has nothing to find there).
    const ip = sha256Hex(this.#ipBucket(attempt.ip));
    const accountHash = sha256Hex(`${attempt.realmId ?? ""}\n${normalizeEmail(attempt.identifier)}`);
    const stamp = attempt.breakGlassStamp ?? null;
    if (stamp !== null) {
      // A break-glass account: its lockout is per address, and a rotation (a new stamp) resets it.
      const epoch = sha256Hex(`${accountHash}\n${stamp}`);
      return {
        ip: `ip:${ip}`,
        ipAccount: `bgipacct:${ip}:${epoch}`,
        account: `bgacct:${ip}:${epoch}`,
        stuffing: `stuff:${ip}`,
        accountHash,
      };
    }
    return {
      ip: `ip:${ip}`,
      ipAccount: `ipacct:${ip}:${accountHash}`,
      account: `acct:${accountHash}`,
      stuffing: `stuff:${ip}`,
      accountHash,
    };
  }

  #ipBucket(text: string): string {
    const ip = parseIp(text.trim());
    if (!ip) return `raw:${text.trim().toLowerCase().slice(0, 100)}`;
    if (ip.version === 4) return formatIp(ip);
    const bits = BigInt(128 - Math.min(128, Math.max(0, this.#ipv6PrefixBits)));
    return `${formatIp({ version: 6, value: (ip.value >> bits) << bits })}/${128 - Number(bits)}`;
  }
}
