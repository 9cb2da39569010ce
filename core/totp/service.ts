/**
 * TOTP enrollment and verification (spec 2.3, 5.1; issue 5 item 3).
 *
 * - `startEnrollment` draws a 20-byte secret, stores it encrypted (through a
 *   {@link SecretCipher}, normally the subject-key cipher) as an unconfirmed enrollment and
 *   returns the secret (base32) and its `otpauth://` URI, shown to the user once.
 * - `confirmEnrollment` proves the app holds the secret with a first code; the step of that
 *   code is spent.
 * - `verify` accepts a code of the drift window only if its step is greater than the last
 *   accepted step, recorded with the store's conditional `advanceStep`: after a success the same
 *   or an older code fails even inside the drift window, and of two concurrent presentations
 *   of one code only one succeeds.
 * - `disable` removes the enrollment.
 *
 * @module
 */
import type { Clock } from "../clock.ts";
import type { RandomSource } from "../random.ts";
import type { TotpEnrollmentStore } from "../storage/totp-enrollments.ts";
import { encodeBase32 } from "./base32.ts";
import {
  DEFAULT_TOTP_PARAMETERS,
  matchingTotpSteps,
  type TotpAlgorithm,
  type TotpParameters,
} from "./totp.ts";
import { buildOtpauthUri } from "./uri.ts";

/** Bytes of a new TOTP secret (160 bits, the HMAC-SHA1 block-size recommendation of RFC 4226). */
export const TOTP_SECRET_BYTES = 20;

/**
 * Encrypts and decrypts a subject's secrets. svc's subject-key cipher (AES-256-GCM under the
 * user's own key) fits this shape; deleting the user's key makes the secret unrecoverable.
 */
export interface SecretCipher {
  /** Seals `plaintext` for `subjectId`. */
  encrypt(subjectId: string, plaintext: Uint8Array): Promise<Uint8Array>;
  /** Opens what `encrypt` sealed for the same subject; throws when it cannot. */
  decrypt(subjectId: string, sealed: Uint8Array): Promise<Uint8Array>;
}

/** The configurable TOTP settings: `config.totp`. */
export interface TotpSettings {
  /** Code length, 6 to 8 (spec: 6). */
  readonly digits: number;
  /** Step length in seconds (spec: 30). */
  readonly stepSeconds: number;
  /** Steps accepted either side of the current one (spec: 1). */
  readonly driftSteps: number;
}

/** What {@link TotpService} needs. */
export interface TotpServiceDeps {
  /** Where enrollments (the sealed secret, confirmation and last accepted step) are kept. */
  readonly store: TotpEnrollmentStore;
  /** Seals the secret before it is stored and opens it to check a code. */
  readonly cipher: SecretCipher;
  /** The current time codes are checked against. */
  readonly clock: Clock;
  /** Draws the 20-byte secret of a new enrollment. */
  readonly random: RandomSource;
  /** The issuer shown in authenticator apps, such as `config.relyingParty.name`. No colon. */
  readonly issuer: string;
  /** `config.totp`; missing fields take the spec defaults (6 digits, 30 s, drift 1). */
  readonly settings?: Partial<TotpSettings>;
  /** HMAC hash of new enrollments; default SHA1 (what the spec and every app support). */
  readonly algorithm?: TotpAlgorithm;
}

/** What the user sees once when enrollment starts. */
export interface TotpEnrollmentStart {
  /** The secret as base32 (for manual entry). Never stored in plaintext, never shown again. */
  readonly secret: string;
  /** The `otpauth://totp/…` URI (for the QR code). Holds the secret too. */
  readonly uri: string;
  /** Code length the app must show. */
  readonly digits: number;
  /** Step length in seconds (the URI's `period`). */
  readonly period: number;
  /** HMAC hash of the codes. */
  readonly algorithm: TotpAlgorithm;
}

/** Whether a user has TOTP: no enrollment, one awaiting its first code, or a confirmed one. */
export type TotpStatus = "none" | "pending" | "confirmed";

/** The outcome of confirming an enrollment. */
export type TotpConfirmResult =
  | { readonly ok: true; readonly step: number }
  | { readonly ok: false; readonly reason: "no_pending_enrollment" | "invalid_code" };

/**
 * The outcome of verifying a code. `replayed`: the code matched a step at or before the last
 * accepted one (or a concurrent request spent it first). Callers answer every failure alike.
 */
export type TotpVerifyResult =
  | { readonly ok: true; readonly step: number }
  | { readonly ok: false; readonly reason: "not_enrolled" | "invalid_code" | "replayed" };

/** TOTP as a second factor over the enrollment store. */
export class TotpService {
  readonly #deps: TotpServiceDeps;
  readonly #parameters: TotpParameters;

  /** Takes the dependencies; missing settings and algorithm fall back to the spec defaults. */
  constructor(deps: TotpServiceDeps) {
    this.#deps = deps;
    this.#parameters = {
      ...DEFAULT_TOTP_PARAMETERS,
      ...deps.settings,
      algorithm: deps.algorithm ?? DEFAULT_TOTP_PARAMETERS.algorithm,
    };
  }

  /** The parameters codes are checked with. */
  get parameters(): TotpParameters {
    return this.#parameters;
  }

  /** Whether the user has no enrollment, a pending one or a confirmed one. */
  async status(userId: string): Promise<TotpStatus> {
    const enrollment = await this.#deps.store.get(userId);
    if (!enrollment) return "none";
    return enrollment.confirmedAt ? "confirmed" : "pending";
  }

  /** True when the user has a confirmed enrollment (then every login must prove TOTP). */
  async isEnrolled(userId: string): Promise<boolean> {
    return (await this.status(userId)) === "confirmed";
  }

  /**
   * Starts (or restarts, replacing a pending secret) an enrollment for `account` (the label the
   * app shows, usually the email). Throws `ConflictError` (409) when TOTP is already confirmed:
   * disable it first. Throws `ValidationError` when the account or issuer contains a colon.
   */
  async startEnrollment(userId: string, account: string): Promise<TotpEnrollmentStart> {
    const { digits, stepSeconds, algorithm } = this.#parameters;
    const secret = this.#deps.random.bytes(TOTP_SECRET_BYTES);
    try {
      // Build the URI first: it validates the label before anything is stored.
      const uri = buildOtpauthUri({
        issuer: this.#deps.issuer,
        account,
        secret,
        digits,
        period: stepSeconds,
        algorithm,
      });
      const sealed = await this.#deps.cipher.encrypt(userId, secret);
      await this.#deps.store.begin(userId, sealed);
      return { secret: encodeBase32(secret), uri, digits, period: stepSeconds, algorithm };
    } finally {
      secret.fill(0);
    }
  }

  /**
   * Confirms the pending enrollment with a first code of the drift window; the code's step is
   * spent, so the same code cannot then sign in.
   */
  async confirmEnrollment(userId: string, code: string): Promise<TotpConfirmResult> {
    const enrollment = await this.#deps.store.get(userId);
    if (!enrollment || enrollment.confirmedAt) return { ok: false, reason: "no_pending_enrollment" };
    const steps = await this.#matchingSteps(userId, enrollment.secretCiphertext, code);
    const step = steps[0];
    if (step === undefined) return { ok: false, reason: "invalid_code" };
    // Conditional on still pending: a concurrent confirmation or restart makes this false.
    if (!(await this.#deps.store.confirm(userId, step))) {
      return { ok: false, reason: "no_pending_enrollment" };
    }
    return { ok: true, step };
  }

  /**
   * Verifies a code for a confirmed enrollment. Succeeds only for a step of the drift window
   * greater than the last accepted one, which becomes the last accepted step.
   */
  async verify(userId: string, code: string): Promise<TotpVerifyResult> {
    const enrollment = await this.#deps.store.get(userId);
    if (!enrollment || !enrollment.confirmedAt) return { ok: false, reason: "not_enrolled" };
    const steps = await this.#matchingSteps(userId, enrollment.secretCiphertext, code);
    if (steps.length === 0) return { ok: false, reason: "invalid_code" };
    const last = enrollment.lastAcceptedStep;
    const step = steps.find((s) => last === null || s > last);
    if (step === undefined) return { ok: false, reason: "replayed" };
    // One conditional UPDATE: only a step greater than the stored one applies.
    if (!(await this.#deps.store.advanceStep(userId, step))) return { ok: false, reason: "replayed" };
    return { ok: true, step };
  }

  /** Removes the user's enrollment (pending or confirmed); returns whether there was one. */
  disable(userId: string): Promise<boolean> {
    return this.#deps.store.delete(userId);
  }

  async #matchingSteps(userId: string, sealed: Uint8Array, code: string): Promise<number[]> {
    const secret = await this.#deps.cipher.decrypt(userId, sealed);
    try {
      return matchingTotpSteps(secret, code, this.#deps.clock.now(), this.#parameters);
    } finally {
      secret.fill(0);
    }
  }
}
