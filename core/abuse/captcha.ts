/**
 * The adaptive CAPTCHA's provider adapters (spec 5.2 step 1). A provider verifies the token the
 * login page got from its widget against the provider's `siteverify` API: a form-encoded POST
 * of the secret, the token and the client IP, bounded by a timeout. A token is accepted only
 * when the provider says `success` and, where the response carries them, the hostname is one
 * the operator expects, the action is the expected one, and (reCAPTCHA v3) the score is high
 * enough. Anything else, including a timeout or an unreadable answer, rejects the token: the
 * gate then keeps demanding a CAPTCHA (it fails closed on the CAPTCHA, never open).
 *
 * Adapters: Cloudflare Turnstile, hCaptcha, Google reCAPTCHA (v2 and v3), and a test adapter.
 * `fetch` is injected, so tests run against a fake.
 *
 * @module
 */
import type { SvcConfig } from "../config/schema.ts";
import { ValidationError } from "../errors.ts";

/** The outcome of verifying one CAPTCHA token. */
export interface CaptchaVerification {
  /** Whether the token is accepted (provider success and every local check). */
  readonly success: boolean;
  /**
   * Why not: the provider's `error-codes`, or svc's own `hostname-mismatch`, `action-mismatch`,
   * `score-too-low`, `timeout`, `network-error`, `http-<status>`, `invalid-response`,
   * `missing-input-response`, `invalid-input-response`.
   */
  readonly errorCodes: readonly string[];
  /** The hostname the provider reported, when it reports one. */
  readonly hostname?: string;
  /** The action the provider reported, when it reports one. */
  readonly action?: string;
  /** The score the provider reported, when it reports one. */
  readonly score?: number;
}

/** What the caller knows about the request that carried the token. */
export interface CaptchaVerifyContext {
  /** The client's IP address, forwarded to the provider as `remoteip`. */
  readonly remoteIp?: string | null;
}

/** A CAPTCHA provider. */
export interface CaptchaProvider {
  /** `turnstile`, `hcaptcha`, `recaptcha`, `test`… */
  readonly name: string;
  /** The public site key the login page embeds in its widget (null when not configured). */
  readonly siteKey: string | null;
  /** Verifies a token; never throws for a bad token or an unreachable provider. */
  verify(token: string, context?: CaptchaVerifyContext): Promise<CaptchaVerification>;
}

/** The subset of `fetch` the adapters use. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** Options shared by the hosted adapters. */
export interface SiteverifyOptions {
  /** The provider's secret key. */
  readonly secret: string;
  /** The public site key (also sent to hCaptcha as `sitekey`, which checks it). */
  readonly siteKey?: string | null;
  /** Hostnames the provider must report (empty or absent: not checked). */
  readonly hostnames?: readonly string[];
  /** The action the provider must report, where it reports one (absent: not checked). */
  readonly action?: string | null;
  /** reCAPTCHA v3 only: the lowest accepted score, 0 to 1 (default 0.5). */
  readonly minScore?: number;
  /** Timeout of the siteverify call in milliseconds (default 5000). */
  readonly timeoutMs?: number;
  /**
   * How siteverify is called: svc's outbound guard (`createOutboundFetch`) in servers, so an
   * `endpoint` override cannot reach a private address; a fake in tests.
   */
  readonly fetch: FetchLike;
  /** Overrides the siteverify URL (for a proxy or the provider's enterprise endpoint). */
  readonly endpoint?: string;
}

/** Cloudflare Turnstile's siteverify endpoint. */
export const TURNSTILE_SITEVERIFY_URL = "https://challenges.cloudflare.com/turnstile/v0/siteverify";
/** hCaptcha's siteverify endpoint. */
export const HCAPTCHA_SITEVERIFY_URL = "https://api.hcaptcha.com/siteverify";
/** Google reCAPTCHA's siteverify endpoint. */
export const RECAPTCHA_SITEVERIFY_URL = "https://www.google.com/recaptcha/api/siteverify";

/** Tokens longer than this are refused without a call (Turnstile documents 2048 characters). */
const MAX_TOKEN_LENGTH = 4096;

function failure(...errorCodes: string[]): CaptchaVerification {
  return { success: false, errorCodes };
}

interface Flavor {
  readonly name: string;
  readonly endpoint: string;
  /** Whether `sitekey` is sent (hCaptcha checks it against the secret). */
  readonly sendSiteKey: boolean;
  /** Whether a returned score is checked against `minScore` (reCAPTCHA: higher is more human). */
  readonly checkScore: boolean;
}

function siteverifyProvider(flavor: Flavor, options: SiteverifyOptions): CaptchaProvider {
  if (!options.secret) throw new ValidationError(`The ${flavor.name} CAPTCHA adapter needs a secret.`);
  const doFetch: FetchLike = options.fetch;
  const endpoint = options.endpoint ?? flavor.endpoint;
  const timeoutMs = options.timeoutMs ?? 5000;
  const hostnames = new Set((options.hostnames ?? []).map((h) => h.toLowerCase()));
  const minScore = options.minScore ?? 0.5;
  return {
    name: flavor.name,
    siteKey: options.siteKey ?? null,
    async verify(token, context) {
      if (typeof token !== "string" || token.length === 0) return failure("missing-input-response");
      if (token.length > MAX_TOKEN_LENGTH) return failure("invalid-input-response");
      const form = new URLSearchParams({ secret: options.secret, response: token });
      if (context?.remoteIp) form.set("remoteip", context.remoteIp);
      if (flavor.sendSiteKey && options.siteKey) form.set("sitekey", options.siteKey);

      const controller = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, timeoutMs);
      let body: unknown;
      try {
        const response = await doFetch(endpoint, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
          body: form.toString(),
          signal: controller.signal,
          redirect: "error",
        });
        if (!response.ok) {
          await response.body?.cancel();
          return failure(`http-${response.status}`);
        }
        try {
          body = await response.json();
        } catch {
          return failure(timedOut ? "timeout" : "invalid-response");
        }
      } catch (error) {
        const name = (error as { name?: string } | null)?.name;
        return failure(
          timedOut || name === "TimeoutError" || name === "AbortError" ||
            (error as { code?: string } | null)?.code === "outbound_timeout"
            ? "timeout"
            : "network-error",
        );
      } finally {
        clearTimeout(timer);
      }
      return judge(body, {
        hostnames,
        action: options.action ?? null,
        minScore,
        checkScore: flavor.checkScore,
      });
    },
  };
}

function judge(
  body: unknown,
  expect: { hostnames: ReadonlySet<string>; action: string | null; minScore: number; checkScore: boolean },
): CaptchaVerification {
  if (
    typeof body !== "object" || body === null || typeof (body as { success?: unknown }).success !== "boolean"
  ) {
    return failure("invalid-response");
  }
  const b = body as Record<string, unknown>;
  const reported: { hostname?: string; action?: string; score?: number } = {};
  if (typeof b.hostname === "string") reported.hostname = b.hostname;
  if (typeof b.action === "string") reported.action = b.action;
  if (typeof b.score === "number" && Number.isFinite(b.score)) reported.score = b.score;
  const providerCodes = Array.isArray(b["error-codes"])
    ? (b["error-codes"] as unknown[]).filter((c): c is string => typeof c === "string")
    : [];
  if (b.success !== true) {
    return {
      success: false,
      errorCodes: providerCodes.length > 0 ? providerCodes : ["rejected"],
      ...reported,
    };
  }
  const codes: string[] = [];
  if (expect.hostnames.size > 0 && reported.hostname !== undefined) {
    if (!expect.hostnames.has(reported.hostname.toLowerCase())) codes.push("hostname-mismatch");
  }
  if (expect.action !== null && reported.action !== undefined && reported.action !== expect.action) {
    codes.push("action-mismatch");
  }
  if (expect.checkScore && reported.score !== undefined && reported.score < expect.minScore) {
    codes.push("score-too-low");
  }
  return { success: codes.length === 0, errorCodes: codes, ...reported };
}

/** Cloudflare Turnstile (reports hostname and action). */
export function turnstileProvider(options: SiteverifyOptions): CaptchaProvider {
  return siteverifyProvider(
    { name: "turnstile", endpoint: TURNSTILE_SITEVERIFY_URL, sendSiteKey: false, checkScore: false },
    options,
  );
}

/**
 * hCaptcha (reports hostname; sends `sitekey`). Its enterprise `score` is a risk score (higher
 * is worse), so `minScore` does not apply to it.
 */
export function hcaptchaProvider(options: SiteverifyOptions): CaptchaProvider {
  return siteverifyProvider(
    { name: "hcaptcha", endpoint: HCAPTCHA_SITEVERIFY_URL, sendSiteKey: true, checkScore: false },
    options,
  );
}

/** Google reCAPTCHA v2 (hostname) and v3 (hostname, action, score checked against `minScore`). */
export function recaptchaProvider(options: SiteverifyOptions): CaptchaProvider {
  return siteverifyProvider(
    { name: "recaptcha", endpoint: RECAPTCHA_SITEVERIFY_URL, sendSiteKey: false, checkScore: true },
    options,
  );
}

/** A provider for tests and local development: accepts exactly `passToken` (default `test-pass`). */
export class TestCaptchaProvider implements CaptchaProvider {
  /** Always `test`. */
  readonly name = "test";
  /** The site key handed to the widget (default `test-site-key`). */
  readonly siteKey: string | null;
  readonly #passToken: string;
  /** Every verification asked for, in order. */
  readonly calls: { token: string; remoteIp: string | null }[] = [];

  /** Accepts `passToken` (default `test-pass`) and reports `siteKey` (default `test-site-key`). */
  constructor(options: { passToken?: string; siteKey?: string } = {}) {
    this.#passToken = options.passToken ?? "test-pass";
    this.siteKey = options.siteKey ?? "test-site-key";
  }

  /** Records the call in `calls`; succeeds only for the pass token, otherwise fails with `invalid-input-response`. */
  verify(token: string, context?: CaptchaVerifyContext): Promise<CaptchaVerification> {
    this.calls.push({ token, remoteIp: context?.remoteIp ?? null });
    return Promise.resolve(
      token === this.#passToken ? { success: true, errorCodes: [] } : failure("invalid-input-response"),
    );
  }
}

/**
 * The provider the configuration names (`abuse.captcha`), or null for `none`. Throws a
 * `ValidationError` naming `SVC_ABUSE_CAPTCHA_SECRET` when a provider is chosen without a secret;
 * `deps.fetch` (the outbound guard) is required for a provider.
 */
export function captchaProviderFromConfig(
  config: SvcConfig["abuse"]["captcha"],
  deps: { fetch?: FetchLike } = {},
): CaptchaProvider | null {
  if (config.provider === "none") return null;
  if (!config.secret) {
    throw new ValidationError(
      `SVC_ABUSE_CAPTCHA_PROVIDER is ${config.provider} but SVC_ABUSE_CAPTCHA_SECRET is not set; set it to the provider's secret key.`,
    );
  }
  if (deps.fetch === undefined) {
    throw new Error("a CAPTCHA provider needs svc's outbound guard (deps.fetch) to call siteverify");
  }
  const options: SiteverifyOptions = {
    secret: config.secret,
    siteKey: config.siteKey ?? null,
    hostnames: config.hostnames,
    action: config.action ?? null,
    minScore: config.minScorePercent / 100,
    timeoutMs: config.timeoutMs,
    fetch: deps.fetch,
  };
  switch (config.provider) {
    case "turnstile":
      return turnstileProvider(options);
    case "hcaptcha":
      return hcaptchaProvider(options);
    case "recaptcha":
      return recaptchaProvider(options);
  }
}
