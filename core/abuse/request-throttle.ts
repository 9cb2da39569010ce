/**
 * Request throttles beside the login abuse gate (issue 19 item 6): requests that make svc send
 * mail or create state for an anonymous caller are counted in the abuse counter store and
 * refused past their limit.
 *
 * | Throttle            | Counts                                    | Default            |
 * | ------------------- | ----------------------------------------- | ------------------ |
 * | `forgotPassword`    | reset mails per account, requests per IP  | 3 / 10 per hour    |
 * | `emailVerification` | verification mails per account, per IP    | 3 / 10 per hour    |
 * | `passkeyOptions`    | passkey login options per IP              | 30 per 5 minutes   |
 *
 * Each request adds one to every counter of its throttle (the store's atomic increment), and it
 * is allowed when every counter is within its limit, so at most `limit` requests per window get
 * through, concurrent or not. Counters are fixed windows anchored at their first hit. Keys hold
 * only SHA-256 digests: an account is the digest of its realm and normalised address (so an
 * unknown address is counted like a real one), an IP the digest of its counting bucket (IPv6 per
 * /64 by default). When the store fails the throttle lets the request through and emits
 * `abuse.counter_store_unavailable`.
 *
 * @module
 */
import { normalizeEmail } from "../accounts/email.ts";
import type { Clock } from "../clock.ts";
import { sha256Hex } from "../digest.ts";
import { EVENT_KINDS } from "../events/catalog.ts";
import type { EventSink } from "../events/sink.ts";
import { ipCountingBucket } from "../net/ip.ts";
import type { CounterStore, CounterValue } from "./counter-store.ts";

/** At most `limit` requests per `windowSeconds`. */
export interface ThrottleRule {
  readonly limit: number;
  readonly windowSeconds: number;
}

/** The throttles' settings (the shape of `config.throttle`). */
export interface RequestThrottleLimits {
  readonly forgotPassword: { readonly perAccount: ThrottleRule; readonly perIp: ThrottleRule };
  readonly emailVerification: { readonly perAccount: ThrottleRule; readonly perIp: ThrottleRule };
  readonly passkeyOptions: { readonly perIp: ThrottleRule };
}

/** The defaults (the configuration schema's). */
export const DEFAULT_REQUEST_THROTTLE_LIMITS: RequestThrottleLimits = Object.freeze({
  forgotPassword: {
    perAccount: { limit: 3, windowSeconds: 3600 },
    perIp: { limit: 10, windowSeconds: 3600 },
  },
  emailVerification: {
    perAccount: { limit: 3, windowSeconds: 3600 },
    perIp: { limit: 10, windowSeconds: 3600 },
  },
  passkeyOptions: { perIp: { limit: 30, windowSeconds: 300 } },
});

/** A throttle's answer. */
export interface ThrottleDecision {
  /** Whether the request may go ahead (every counter within its limit, or the store failed). */
  readonly allowed: boolean;
  /** Refused: seconds until every exceeded counter has reset; allowed: null. */
  readonly retryAfterSeconds: number | null;
}

/** What {@link RequestThrottle} needs. */
export interface RequestThrottleOptions {
  readonly store: CounterStore;
  readonly clock: Clock;
  /** Receives `abuse.counter_store_unavailable`. */
  readonly sink: EventSink;
  readonly limits?: RequestThrottleLimits;
  /** IPv6 addresses are counted per prefix of this length (default 64). */
  readonly ipv6PrefixBits?: number;
}

interface Counted {
  readonly key: string;
  readonly rule: ThrottleRule;
}

/** The request throttles. */
export class RequestThrottle {
  readonly #o: RequestThrottleOptions;
  readonly #limits: RequestThrottleLimits;

  /** The throttles over `options.store`, with `options.limits` or {@link DEFAULT_REQUEST_THROTTLE_LIMITS}. */
  constructor(options: RequestThrottleOptions) {
    this.#o = options;
    this.#limits = options.limits ?? DEFAULT_REQUEST_THROTTLE_LIMITS;
  }

  /** Counts a forgot-password request for `email` in `realmId` from `ip`. */
  forgotPassword(
    input: { ip: string | null; realmId: string | null; email: string },
  ): Promise<ThrottleDecision> {
    const l = this.#limits.forgotPassword;
    const account = sha256Hex(`${input.realmId ?? ""}\n${normalizeEmail(input.email)}`);
    return this.#count("forgotPassword", input.realmId, [
      { key: `throttle:forgot:acct:${account}`, rule: l.perAccount },
      ...this.#ip("forgot", input.ip, l.perIp),
    ]);
  }

  /** Counts an email verification request of `userId` from `ip`. */
  emailVerification(
    input: { ip: string | null; realmId: string; userId: string },
  ): Promise<ThrottleDecision> {
    const l = this.#limits.emailVerification;
    return this.#count("emailVerification", input.realmId, [
      { key: `throttle:verify:acct:${sha256Hex(input.userId.toLowerCase())}`, rule: l.perAccount },
      ...this.#ip("verify", input.ip, l.perIp),
    ]);
  }

  /** Counts a passkey login options request from `ip`. */
  passkeyOptions(input: { ip: string | null }): Promise<ThrottleDecision> {
    return this.#count(
      "passkeyOptions",
      null,
      this.#ip("passkey-options", input.ip, this.#limits.passkeyOptions.perIp),
    );
  }

  /** The per-IP counter; none when the host did not tell the client address. */
  #ip(name: string, ip: string | null, rule: ThrottleRule): Counted[] {
    if (ip === null) return [];
    return [{
      key: `throttle:${name}:ip:${sha256Hex(ipCountingBucket(ip, this.#o.ipv6PrefixBits ?? 64))}`,
      rule,
    }];
  }

  async #count(
    throttle: string,
    realmId: string | null,
    counters: readonly Counted[],
  ): Promise<ThrottleDecision> {
    const settled = await Promise.allSettled(
      // A store that throws instead of rejecting is down all the same.
      counters.map(async (c) => await this.#o.store.increment(c.key, c.rule.windowSeconds * 1000)),
    );
    const now = this.#o.clock.now();
    const failed = settled.filter((s): s is PromiseRejectedResult => s.status === "rejected");
    if (failed.length > 0) {
      const error = failed[0].reason;
      this.#o.sink.emit({
        kind: EVENT_KINDS.abuseCounterStoreUnavailable,
        occurredAt: now,
        realmId,
        data: {
          operation: "throttle",
          throttle,
          error: error instanceof Error ? error.message : String(error),
        },
      });
    }
    const exceeded = settled.flatMap((s, i) =>
      s.status === "fulfilled" && s.value.count > counters[i].rule.limit
        ? [{ value: s.value, rule: counters[i].rule }]
        : []
    );
    if (exceeded.length === 0) return { allowed: true, retryAfterSeconds: null };
    const until = (e: { value: CounterValue; rule: ThrottleRule }) =>
      e.value.resetAt ?? now + e.rule.windowSeconds * 1000;
    return {
      allowed: false,
      retryAfterSeconds: Math.max(...exceeded.map((e) => Math.max(1, Math.ceil((until(e) - now) / 1000)))),
    };
  }
}
