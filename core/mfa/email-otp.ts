/**
 * Email one-time codes (spec 2.9, section 3; issue 5 item 4): an enrolled factor and the
 * step-up fallback of the risk gate.
 *
 * `issue` draws a uniform random 6-digit code, stores only its SHA-256 under a challenge id
 * (caller-chosen, such as the id the `mfa+svc` hand-off token carries, or random) with an expiry
 * and an attempt budget, then mails the code. Issuing again under the same id replaces the code,
 * its expiry and its budget (a resend); callers rate-limit resends. `verify` is the store's atomic
 * check: a success deletes the challenge, a wrong code takes one attempt, and once the budget is
 * spent the challenge dies.
 *
 * @module
 */
import type { Clock } from "../clock.ts";
import { type RandomSource, randomToken } from "../random.ts";
import type { MailAddressee, MailTransport } from "../mail/transport.ts";
import { emailOtpMessage, type MailLocale, type MailSettings } from "../mail/messages.ts";
import { type EmailOtpStore, hashOtpCode } from "../storage/email-otp.ts";
import { ValidationError } from "../errors.ts";

/** Digits of an emailed code. */
export const EMAIL_OTP_DIGITS = 6;

/** The configurable email OTP settings: `config.emailOtp`. */
export interface EmailOtpSettings {
  /** Lifetime of a code (default 600). */
  readonly ttlSeconds: number;
  /** Wrong guesses allowed per code (default 5). */
  readonly attempts: number;
}

/** Defaults of {@link EmailOtpSettings} (the spec leaves them open): 10 minutes, 5 attempts. */
export const DEFAULT_EMAIL_OTP_SETTINGS: EmailOtpSettings = Object.freeze({ ttlSeconds: 600, attempts: 5 });

/** What {@link EmailOtpService} needs. */
export interface EmailOtpServiceDeps {
  /** Where challenges (code hashes, expiries, attempt budgets) are kept. */
  readonly store: EmailOtpStore;
  /** Sends the code mail. */
  readonly mail: MailTransport;
  /** Base URL, sender and product name of the message. */
  readonly mailSettings: MailSettings;
  /** Sets each challenge's expiry. */
  readonly clock: Clock;
  /** Draws codes and random challenge ids. */
  readonly random: RandomSource;
  /** `config.emailOtp`; missing fields take {@link DEFAULT_EMAIL_OTP_SETTINGS}. */
  readonly settings?: Partial<EmailOtpSettings>;
}

/** What to issue. */
export interface EmailOtpIssueInput {
  /** Where the code goes. */
  readonly to: string;
  /** The realm and user the code is for (the outbox's fence and erasure key, issue 24). */
  readonly addressee: MailAddressee;
  /**
   * The challenge id (at most 200 characters). Absent: a random 128-bit id. The id is not a
   * secret, but whoever holds it may guess within the budget, so bind it to the login in progress.
   */
  readonly challengeId?: string;
  /** The mail's language (the request's `Accept-Language`; default English). */
  readonly locale?: MailLocale | null;
}

/** An issued challenge. The code itself went only to the mailbox. */
export interface EmailOtpIssued {
  /** The id to verify under: the caller's, or the random one drawn. */
  readonly challengeId: string;
  /** When the code stops working. */
  readonly expiresAt: Date;
  /** Wrong guesses allowed before the challenge dies. */
  readonly attempts: number;
}

/** The outcome of a verification (the store's outcome, plus `ok`). */
export type EmailOtpVerifyResult =
  | { readonly ok: true; readonly outcome: "Success" }
  | { readonly ok: false; readonly outcome: "WrongCode"; readonly remainingAttempts: number }
  | { readonly ok: false; readonly outcome: "TooManyAttempts" | "ExpiredOrMissing" };

/** A uniform random code of `digits` decimal digits (rejection sampling, no modulo bias). */
export function randomOtpCode(random: RandomSource, digits = EMAIL_OTP_DIGITS): string {
  if (!Number.isInteger(digits) || digits < 4 || digits > 9) {
    throw new RangeError("OTP digits must be 4 to 9");
  }
  const range = 10 ** digits;
  const limit = Math.floor(2 ** 32 / range) * range;
  for (;;) {
    const b = random.bytes(4);
    const n = ((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) >>> 0;
    if (n < limit) return String(n % range).padStart(digits, "0");
  }
}

/** A presented code as hashed: whitespace and hyphens removed. */
export function normalizeOtpCode(code: string): string {
  return code.replace(/[\s-]/g, "");
}

/** Email OTP challenges over the challenge store and a mail transport. */
export class EmailOtpService {
  readonly #deps: EmailOtpServiceDeps;
  readonly #settings: EmailOtpSettings;

  /** The service over `deps`; unset settings take {@link DEFAULT_EMAIL_OTP_SETTINGS}. */
  constructor(deps: EmailOtpServiceDeps) {
    this.#deps = deps;
    this.#settings = { ...DEFAULT_EMAIL_OTP_SETTINGS, ...deps.settings };
  }

  /** The TTL and attempt budget in force. */
  get settings(): EmailOtpSettings {
    return this.#settings;
  }

  /**
   * Stores a new challenge (replacing one with the same id) and mails its code. The message is
   * composed (validating the address) before anything is stored.
   */
  async issue(input: EmailOtpIssueInput): Promise<EmailOtpIssued> {
    const challengeId = input.challengeId ?? randomToken(this.#deps.random, 16);
    if (challengeId.length === 0 || challengeId.length > 200) {
      throw new ValidationError("The challenge id must be 1 to 200 characters.", { field: "challengeId" });
    }
    const code = randomOtpCode(this.#deps.random);
    const { ttlSeconds, attempts } = this.#settings;
    const message = emailOtpMessage(this.#deps.mailSettings, {
      to: input.to,
      code,
      ttlSeconds,
      locale: input.locale ?? undefined,
    });
    const expiresAt = new Date(this.#deps.clock.now() + ttlSeconds * 1000);
    await this.#deps.store.store({
      challengeId,
      codeHash: hashOtpCode(code),
      expiresAt,
      remainingAttempts: attempts,
    });
    await this.#deps.mail.send(message, input.addressee);
    return { challengeId, expiresAt, attempts };
  }

  /**
   * Checks a code (whitespace and hyphens ignored). A malformed code counts as a wrong guess.
   * Exactly one success per challenge; see `OtpVerifyResult` for the budget semantics.
   */
  async verify(challengeId: string, code: string): Promise<EmailOtpVerifyResult> {
    const result = await this.#deps.store.verify(challengeId, normalizeOtpCode(code));
    switch (result.outcome) {
      case "Success":
        return { ok: true, outcome: "Success" };
      case "WrongCode":
        return { ok: false, outcome: "WrongCode", remainingAttempts: result.remainingAttempts };
      default:
        return { ok: false, outcome: result.outcome };
    }
  }
}
