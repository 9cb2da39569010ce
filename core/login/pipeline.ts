/**
 * The password login pipeline of spec 5.2, in its fixed order:
 *
 * 1. the abuse gate (`Blocked` and `CaptchaRequired` refuse before anything else runs);
 * 2. the user lookup; a miss (unknown realm or user, or a user without a password) runs the
 *    dummy argon2id verification, so timing does not tell an unknown user from a wrong password;
 * 3. the credential verification, then the transparent rehash to argon2id with the configured
 *    parameters when the stored hash has an older tag or weaker parameters;
 * 4. the risk gate (`Block` refuses with the answer of a wrong password: the same error, and
 *    the attempt keeps its lockout slot like a failure, so the wire never tells a blocked right
 *    password from a wrong one; the user learns of it from `login.failed` (`risk_blocked`) in
 *    the ledger and the alert hook's mail);
 *    (a break-glass account skips steps 4 and 5: its session's `mfa` is `BreakGlass`, and the
 *    login sets the realm's LastUseAt and emits `breakglass.login` and `breakglass.rotation_required`);
 * 5. the MFA step-up: a user with TOTP enrolled always proves it; otherwise, when the risk gate
 *    says `StepUpMfa`, an emailed one-time code. The pending login is handed over as an
 *    `mfa+svc` token (subject, realm, requested org, audience, IP) that {@link verifyMfa}
 *    completes; the email OTP challenge is bound to that token's jti.
 *
 * The abuse gate reserves the attempt's lockout slot before any password work: a failure keeps
 * it, a right password gives it back, so concurrent guesses never run more password checks than
 * the lockout allows.
 *
 * The pipeline decides; the HTTP layer signs in (sessions and transports) and then calls
 * {@link LoginPipeline.completeSignIn}, which records the device, clears the account's failure
 * count and writes `login.succeeded` to the user's ledger. A wrong password, an unknown user,
 * a user without a password, a suspended user and a risk block all end in the same
 * `LoginFailedError`.
 *
 * Events (security ledger when they name a user): `login.succeeded`, `login.failed`,
 * `mfa.challenged`, `mfa.succeeded`, `mfa.failed`; the gates emit `abuse.*` and
 * `risk.evaluated`, the device tracker `login.new_device`.
 *
 * @module
 */
import type { MailLocale } from "../mail/catalogue.ts";
import type { AbuseGate } from "../abuse/gate.ts";
import { BREAK_GLASS_EVENTS, MFA_LEVEL_BREAK_GLASS } from "../break-glass/kinds.ts";
import type { Clock } from "../clock.ts";
import { KnownDevices } from "../devices/known-devices.ts";
import { fromBase64Url } from "../encoding.ts";
import type { EmitInTransaction, EventOrigin } from "../events/publisher.ts";
import type { SvcEvent } from "../events/sink.ts";
import type { EmailOtpService } from "../mfa/email-otp.ts";
import type { RecoveryCodeService } from "../mfa/recovery-codes.ts";
import type { PasswordService } from "../passwords/service.ts";
import type { RiskDecision, RiskGate, RiskSignal } from "../risk/gate.ts";
import { loginHistoryOf } from "../risk/providers.ts";
import type { SignInInput } from "../sessions/service.ts";
import { InvalidTokenError } from "../tokens/errors.ts";
import type { TokenService } from "../tokens/service.ts";
import type { TotpService } from "../totp/service.ts";
import { ForbiddenError } from "../errors.ts";
import { resolveOrganizationReference } from "./organization-reference.ts";
import type { User } from "../storage/users.ts";
import type { Storage } from "../storage/storage.ts";
import type { SignInWrites, SignInWritten } from "../storage/security-events.ts";
import {
  CaptchaRequiredError,
  InvalidMfaCodeError,
  LoginBlockedError,
  LoginFailedError,
  TotpCodeReplayedError,
  UnknownAudienceError,
} from "./errors.ts";

/** The session MFA level (`mfa` claim) after a password alone. */
export const MFA_LEVEL_PASSWORD = "Password";
/** The session MFA level after a password and a second factor. */
export const MFA_LEVEL_MULTI_FACTOR = "MultiFactor";

/** A second factor `POST /auth/mfa/verify` completes a pending login with. */
export type MfaFactor = "totp" | "email_otp" | "recovery_code";
/** A factor a pending login may be completed with (`passkey`: through `POST /auth/passkey/mfa/verify`). */
export type PendingFactor = MfaFactor | "passkey";

/** Event kinds of the pipeline. */
export const LOGIN_EVENTS = {
  succeeded: "login.succeeded",
  failed: "login.failed",
  mfaChallenged: "mfa.challenged",
  mfaSucceeded: "mfa.succeeded",
  mfaFailed: "mfa.failed",
} as const;

/** Writes events, recording user-visible ones in the security ledger with their origin (an `EventPublisher`). */
export interface SecurityEventWriter {
  /** Runs `work` in one transaction whose `emit` records events durably with it. */
  transaction<T>(work: (tx: Storage, emit: EmitInTransaction) => Promise<T>): Promise<T>;
  /**
   * Records one event on its own (as `transaction` with a single `emit` would), in as few
   * statements as it can (`EventPublisher.publish`); absent, `transaction` is used.
   */
  publish?(event: SvcEvent, origin?: EventOrigin): Promise<void>;
  /**
   * Records a sign-in's `login.succeeded` with the sign-in's other writes in one statement
   * (`EventPublisher.publishSignIn`); absent, they are written one by one.
   */
  publishSignIn?(
    event: SvcEvent,
    origin: EventOrigin | undefined,
    writes: SignInWrites,
  ): Promise<SignInWritten>;
}

/** Where the request came from. */
export interface LoginOrigin {
  /** The client IP, when the host knows it. */
  readonly ip?: string | null;
  /** The User-Agent (a device description for sessions and the ledger). */
  readonly userAgent?: string | null;
  /**
   * The device id of the request (the `svc_device` cookie, the `X-Svc-Device` header, the
   * legacy `deviceFingerprint`, or one the server just drew); only its SHA-256 is stored.
   */
  readonly deviceId?: string | null;
  /** The language of the request (its `Accept-Language`): the alert mails are written in it. */
  readonly locale?: MailLocale | null;
}

/** `POST /auth/login`. */
export interface LoginRequest extends LoginOrigin {
  /** The login name (an email address). */
  readonly email: string;
  /** The password as typed. */
  readonly password: string;
  /** A realm id or name; the default realm when absent. */
  readonly realm?: string | null;
  /** The organization to act in: its id, name or verified email domain (one of the user's). */
  readonly org?: string | null;
  /** The app the tokens are for; svc itself when absent. */
  readonly audience?: string | null;
  /** The CAPTCHA widget's token, when the page showed one. */
  readonly captchaToken?: string | null;
}

/** `POST /auth/mfa/verify`. */
export interface MfaVerifyRequest extends LoginOrigin {
  /** The `mfa+svc` token the first factor returned. */
  readonly mfaToken: string;
  /** Which second factor the code is for. */
  readonly factor: MfaFactor;
  /** The code the user typed. */
  readonly code: string;
}

/** A login that may be signed in: the HTTP layer creates the session, then calls `completeSignIn`. */
export interface ReadyLogin {
  /** Both factors passed: sign in. */
  readonly kind: "signIn";
  /** What to open the session with. */
  readonly signIn: SignInInput;
  /** Kept for `completeSignIn`. */
  readonly user: User;
  /** Where the request came from. */
  readonly origin: LoginOrigin;
  /** The factors that passed (`password`, `totp`…). */
  readonly factors: readonly string[];
  /** The risk gate's outcome and score, when it ran. */
  readonly risk: { readonly outcome: string; readonly score: number } | null;
  /**
   * Whether the request's device was a known device of the user when the sign-in read the
   * account (then `completeSignIn` records it in the statement of `login.succeeded`).
   */
  readonly deviceKnown?: boolean;
}

/** A login waiting for its second factor. */
export interface PendingMfa {
  /** A second factor is needed. */
  readonly kind: "mfa";
  /** The `mfa+svc` token to present with the second factor. */
  readonly mfaToken: string;
  /** The second factors the user can use. */
  readonly factors: readonly PendingFactor[];
  /** Seconds the hand-off token lives. */
  readonly expiresIn: number;
}

/** What the risk-block alert hook is told (the alert mail to the account). */
export interface RiskBlockAlert {
  /** The account whose sign-in was blocked. */
  readonly user: User;
  /** When. */
  readonly at: Date;
  /** The client IP, when known. */
  readonly ip: string | null;
  /** A description of the device (from the User-Agent). */
  readonly device: string | null;
  /** The risk score that blocked it. */
  readonly score: number;
  /** The signals that fired. */
  readonly signals: readonly RiskSignal[];
  /** The language of the blocked request. */
  readonly locale: MailLocale | null;
}

/** What {@link LoginPipeline} needs. */
export interface LoginPipelineDeps {
  /** The stores. */
  readonly storage: Storage;
  /** Password verification and rehashing. */
  readonly passwords: PasswordService;
  /** The abuse gate (step 1). */
  readonly abuse: AbuseGate;
  /** The risk gate (step 4). */
  readonly risk: RiskGate;
  /** Known devices (the new-device signal and alert). */
  readonly devices: KnownDevices;
  /** TOTP verification. */
  readonly totp: TotpService;
  /** Emailed one-time codes. */
  readonly emailOtp: EmailOtpService;
  /** Recovery codes. */
  readonly recoveryCodes: RecoveryCodeService;
  /** Mints and checks the `mfa+svc` hand-off token. */
  readonly tokens: TokenService;
  /** Where login events go, durably. */
  readonly events: SecurityEventWriter;
  /** The source of the current time. */
  readonly clock: Clock;
  /** Tells the account that a sign-in with its right password was blocked (the alert mail); failures are reported, never answered. */
  readonly onRiskBlock?: (alert: RiskBlockAlert) => Promise<void>;
  /**
   * Whether the risk gate's login history is `storage.loginHistory` (the default), which the
   * sign-in's one read already holds; false when the gate was given another history, which it
   * then asks itself.
   */
  readonly historyInStorage?: boolean;
  /** Told about failures that do not fail the login (a rehash or event that could not be stored). */
  readonly onError?: (message: string, error: unknown) => void;
}

/** The prefix of an email OTP challenge id bound to an `mfa+svc` token (then its jti). */
const MFA_CHALLENGE_PREFIX = "mfa:";
/** The first factor recorded in `mfa+svc`. */
const PASSWORD_AMR = "password";
/** How far the abuse gate sees a login whose IP the host did not tell. */
const UNKNOWN_IP = "unknown";

/** The password login pipeline. */
export class LoginPipeline {
  readonly #d: LoginPipelineDeps;

  /** The pipeline over its services and stores. */
  constructor(deps: LoginPipelineDeps) {
    this.#d = deps;
  }

  /** Runs steps 1 to 5 of spec 5.2. Throws the errors of `./errors.ts` (and `ForbiddenError` for a foreign org). */
  async login(request: LoginRequest): Promise<ReadyLogin | PendingMfa> {
    const d = this.#d;
    const ip = request.ip ?? null;
    const audience = await this.#audience(request.audience ?? null);
    // Everything the sign-in reads (realm, account, credential, device, login history, enrolled
    // factors) is read first, in one statement: reads only, with no side effect, and the same
    // statement whether or not the account exists; the abuse gate learns from it whether the
    // account is a break-glass one, which strangers must not lock out. No password work and no
    // count happens before the gate.
    const read = await d.storage.signIns.read({
      realm: request.realm ?? null,
      email: request.email,
      deviceHash: request.deviceId ? KnownDevices.fingerprintHash(request.deviceId) : null,
    });
    const realmId = read.realm?.id ?? null;
    const user = read.user;
    const attempt = {
      ip: ip ?? UNKNOWN_IP,
      identifier: request.email,
      realmId,
      breakGlassStamp: user !== null && user.isBreakGlass ? read.credentialStamp : null,
    };

    // 1. Abuse gate.
    const gate = await d.abuse.check({ ...attempt, captchaToken: request.captchaToken ?? null });
    if (gate.outcome === "Blocked") throw new LoginBlockedError(gate.retryAfterSeconds);
    if (gate.outcome === "CaptchaRequired") throw new CaptchaRequiredError(gate.captcha!);

    // 2. User lookup (read above); a miss does the same argon2id work as a wrong password.
    const credential = user === null ? null : read.credential;
    // From here on the attempt holds a lockout slot: every failure below keeps it.
    if (user === null || credential === null) {
      await d.passwords.verifyAgainstDummy(request.password);
      await this.#emit(
        {
          kind: LOGIN_EVENTS.failed,
          realmId,
          userId: user?.id ?? null,
          data: { reason: "invalid_credentials" },
        },
        request,
      );
      throw new LoginFailedError();
    }

    // 3. Credential verification, then rehash-on-login.
    let valid = false;
    let needsRehash = false;
    try {
      ({ valid, needsRehash } = await d.passwords.verify(credential, request.password));
    } catch (error) {
      // An unknown tag cannot verify anything; the caller sees a wrong password.
      d.onError?.(`login: password credential of user ${user.id} cannot be verified`, error);
    }
    if (!valid || user.status !== "Active") {
      await this.#emit({
        kind: LOGIN_EVENTS.failed,
        realmId,
        userId: user.id,
        data: { reason: valid ? "user_suspended" : "invalid_credentials" },
      }, request);
      throw new LoginFailedError();
    }
    let rehashed = false;
    if (needsRehash) {
      try {
        const next = await d.passwords.hash(request.password);
        rehashed = await d.storage.passwordCredentials.rehash(user.id, credential, next);
      } catch (error) {
        d.onError?.(`login: rehash of user ${user.id} failed`, error);
      }
    }

    // The organization asked for is checked only after the steps of spec 5.2 that can refuse a
    // right password (the risk gate below), so that its answer (403) never tells a blocked right
    // password from a wrong one; and a refusal keeps the attempt's lockout slot.
    // The reference may be a name or a verified domain: resolved among the user's own
    // organizations only (./organization-reference.ts), an unknown one refused as a foreign one.
    const orgReference = request.org ?? null;
    const orgId = orgReference === null
      ? null
      : await resolveOrganizationReference(d.storage.organizations, user, orgReference);
    const checkOrganization = async () => {
      if (orgReference === null) return;
      if (orgId === null || !await d.storage.organizations.isMember(orgId, user.id)) {
        throw new ForbiddenError("You are not a member of this organization.");
      }
    };

    // A break-glass account (spec 3, 5.2): no risk block and no MFA step-up (the abuse gate above
    // still applies); every such login is recorded before the session exists.
    if (user.isBreakGlass) {
      await checkOrganization();
      await d.abuse.release(attempt, gate);
      await this.#recordBreakGlassLogin(user, request);
      return {
        kind: "signIn",
        signIn: {
          realmId: user.realmId,
          userId: user.id,
          mfa: MFA_LEVEL_BREAK_GLASS,
          orgId,
          audience,
          ipAddress: ip,
          deviceDescription: describeDevice(request.userAgent),
        },
        user,
        origin: request,
        factors: [PASSWORD_AMR],
        risk: null,
      };
    }

    // 4. Risk gate. A block answers as a wrong password does and keeps the lockout slot.
    const risk = await d.risk.evaluate({
      userId: user.id,
      realmId: user.realmId,
      orgId,
      ip,
      deviceId: request.deviceId ?? null,
      prefetched: {
        deviceKnown: read.deviceKnown,
        ...(d.historyInStorage === false ? {} : { history: loginHistoryOf(read.history) }),
      },
    });
    if (risk.outcome === "Block") {
      await this.#emit({
        kind: LOGIN_EVENTS.failed,
        realmId,
        userId: user.id,
        data: { reason: "risk_blocked", score: risk.score, signals: firedSignals(risk) },
      }, request);
      await this.#alertRiskBlock(user, risk, request);
      throw new LoginFailedError();
    }
    await checkOrganization();
    await d.abuse.release(attempt, gate);

    // 5. MFA step-up: TOTP when enrolled; else email OTP when enrolled, or when the risk gate asks.
    const totpEnrolled = read.totpConfirmed;
    const emailOtpEnrolled = !totpEnrolled && read.emailOtpEnrolled;
    if (totpEnrolled || emailOtpEnrolled || risk.outcome === "StepUpMfa") {
      const factors: PendingFactor[] = [totpEnrolled ? "totp" : "email_otp"];
      // A registered passkey completes the login too, through POST /auth/passkey/mfa/verify.
      if ((await d.storage.passkeyCredentials.listByUser(user.id)).length > 0) factors.push("passkey");
      if (await d.recoveryCodes.remaining(user.id) > 0) factors.push("recovery_code");
      const minted = await d.tokens.mint("mfa+svc", {
        realm: user.realmId,
        sub: user.id,
        org: orgId,
        ip,
        amr: PASSWORD_AMR,
        aud: audience,
      });
      if (!totpEnrolled) {
        await d.emailOtp.issue({
          to: user.email,
          addressee: { realmId: user.realmId, userId: user.id },
          challengeId: MFA_CHALLENGE_PREFIX + minted.claims.jti,
          locale: request.locale ?? null,
        });
      }
      await this.#emit({
        kind: LOGIN_EVENTS.mfaChallenged,
        realmId,
        userId: user.id,
        orgId,
        data: {
          factors,
          reason: totpEnrolled ? "totp_enrolled" : "risk_step_up",
          riskScore: risk.score,
          rehashed,
        },
      }, request);
      return {
        kind: "mfa",
        mfaToken: minted.token,
        factors,
        expiresIn: minted.claims.exp - minted.claims.iat,
      };
    }

    return {
      kind: "signIn",
      signIn: {
        realmId: user.realmId,
        userId: user.id,
        mfa: MFA_LEVEL_PASSWORD,
        orgId,
        audience,
        ipAddress: ip,
        deviceDescription: describeDevice(request.userAgent),
      },
      user,
      origin: request,
      factors: [PASSWORD_AMR],
      risk: { outcome: risk.outcome, score: risk.score },
      deviceKnown: read.deviceKnown,
    };
  }

  /**
   * Completes a pending login with a second factor. The `mfa+svc` token is verified (type,
   * signature, expiry, not yet used); the factor is checked; only then is the token's jti
   * consumed, so a wrong code leaves the token usable (within the abuse gate's limits: each
   * attempt counts, each failure counts against the account) and a completed login cannot be
   * completed twice.
   */
  async verifyMfa(request: MfaVerifyRequest): Promise<ReadyLogin> {
    const d = this.#d;
    const claims = await d.tokens.verify("mfa+svc", request.mfaToken, {
      audience: unverifiedAudience(request.mfaToken),
    });
    if (await d.storage.consumedTokens.isConsumed(claims.jti)) throw new InvalidTokenError("consumed");
    const audience = await this.#audience(claims.aud);
    const user = await d.storage.users.get(claims.sub);
    if (user === null || user.realmId !== claims.realm || user.status !== "Active") {
      throw new InvalidTokenError("claims");
    }
    const ip = request.ip ?? claims.ip ?? null;
    const attempt = { ip: ip ?? UNKNOWN_IP, identifier: user.email, realmId: user.realmId };
    // Rate limits apply to second-factor guesses too; a CAPTCHA is not demanded at this step.
    const gate = await d.abuse.check(attempt);
    if (gate.outcome === "Blocked") throw new LoginBlockedError(gate.retryAfterSeconds);

    const outcome = request.factor === "recovery_code"
      ? await this.#spendRecoveryCode(user.id, claims.jti, new Date(claims.exp * 1000), request.code)
      : await this.#checkFactor(user, claims.jti, request.factor, request.code);
    // A concurrent attempt completed the login first (the slot stays: nothing was verified here).
    if (outcome === "consumed") throw new InvalidTokenError("consumed");
    if (outcome !== "ok") {
      // The attempt's lockout slot stays: it is the failure.
      await this.#emit({
        kind: LOGIN_EVENTS.mfaFailed,
        realmId: user.realmId,
        userId: user.id,
        orgId: claims.org,
        data: { factor: request.factor, reason: outcome },
      }, request);
      if (outcome === "replayed") throw new TotpCodeReplayedError();
      throw new InvalidMfaCodeError();
    }
    await d.abuse.release(attempt, gate);
    if (
      request.factor !== "recovery_code" &&
      !await d.storage.consumedTokens.consume(claims.jti, new Date(claims.exp * 1000))
    ) {
      throw new InvalidTokenError("consumed");
    }
    const data: Record<string, unknown> = { factor: request.factor };
    if (request.factor === "recovery_code") {
      data.recoveryCodesRemaining = await d.recoveryCodes.remaining(user.id);
    }
    await this.#emit({
      kind: LOGIN_EVENTS.mfaSucceeded,
      realmId: user.realmId,
      userId: user.id,
      orgId: claims.org,
      data,
    }, request);
    return {
      kind: "signIn",
      signIn: {
        realmId: user.realmId,
        userId: user.id,
        mfa: MFA_LEVEL_MULTI_FACTOR,
        orgId: claims.org,
        audience,
        ipAddress: ip,
        deviceDescription: describeDevice(request.userAgent),
      },
      user,
      origin: { ...request, ip },
      factors: [claims.amr, request.factor],
      risk: null,
    };
  }

  /**
   * After the session exists: clears the account's failure count, records the device (a
   * first sighting emits `login.new_device` and mails the alert) and writes `login.succeeded`
   * (with the IP, which the risk gate's login history reads). Failures here never fail the login.
   */
  async completeSignIn(login: ReadyLogin, sessionId: string): Promise<void> {
    const d = this.#d;
    const { user, origin } = login;
    const ip = origin.ip ?? null;
    const attempt = {
      ip: ip ?? UNKNOWN_IP,
      identifier: user.email,
      realmId: user.realmId,
      breakGlassStamp: await this.#breakGlassStamp(user),
    };
    const sighting = origin.deviceId
      ? {
        userId: user.id,
        realmId: user.realmId,
        orgId: login.signIn.orgId ?? null,
        fingerprint: origin.deviceId,
        description: describeDevice(origin.userAgent),
        ip,
        locale: origin.locale ?? null,
      }
      : null;
    const succeeded = (newDevice: boolean): Omit<SvcEvent, "occurredAt"> => ({
      kind: LOGIN_EVENTS.succeeded,
      realmId: user.realmId,
      userId: user.id,
      orgId: login.signIn.orgId ?? null,
      data: {
        sessionId,
        mfa: login.signIn.mfa,
        factors: login.factors,
        audience: login.signIn.audience ?? null,
        newDevice,
        risk: login.risk,
      },
    });
    // One statement (issue 29): the failures cleared, the device's last-seen time moved and
    // `login.succeeded` recorded, when the counters are in svc storage and the device (if any)
    // was known when the sign-in read the account (a new device takes the path below, which tells
    // from its insert whether it is new). Should that statement fail, the path below runs.
    const counterKey = d.abuse.successCounterKey(attempt);
    if (
      d.events.publishSignIn !== undefined && counterKey !== null &&
      (sighting === null || login.deviceKnown === true)
    ) {
      try {
        const written = await d.events.publishSignIn(
          { ...succeeded(false), occurredAt: d.clock.now() },
          { ipAddress: ip, deviceDescription: describeDevice(origin.userAgent) },
          {
            clearCounter: counterKey,
            device: sighting === null ? null : {
              userId: user.id,
              fingerprintHash: KnownDevices.fingerprintHash(sighting.fingerprint),
              description: sighting.description,
            },
          },
        );
        // The device was forgotten between the read and this statement: a first sighting again.
        if (sighting !== null && written.device?.isNew === true) {
          await d.devices.announceNew(sighting, written.device.record).catch((error) =>
            d.onError?.(`login: device of user ${user.id} not announced`, error)
          );
        }
        return;
      } catch (error) {
        d.onError?.(`login: sign-in of user ${user.id} not recorded in one statement`, error);
      }
    }
    await d.abuse.recordSuccess(attempt);
    let newDevice = false;
    if (sighting !== null) {
      try {
        newDevice = (await d.devices.recordLogin(sighting)).isNew;
      } catch (error) {
        d.onError?.(`login: device of user ${user.id} not recorded`, error);
      }
    }
    await this.#emit(succeeded(newDevice), origin);
  }

  /**
   * A break-glass login: LastUseAt set and rotation required (one statement), `breakglass.login`
   * and the first `breakglass.rotation_required`, in one transaction. A failure fails the login:
   * no break-glass session goes unrecorded.
   */
  async #recordBreakGlassLogin(user: User, origin: LoginOrigin): Promise<void> {
    const where: EventOrigin = {
      ipAddress: origin.ip ?? null,
      deviceDescription: describeDevice(origin.userAgent),
    };
    await this.#d.events.transaction(async (tx, emit) => {
      const state = await tx.breakGlass.recordLogin(user.realmId);
      const base = { occurredAt: this.#d.clock.now(), realmId: user.realmId, userId: user.id };
      await emit({
        ...base,
        kind: BREAK_GLASS_EVENTS.login,
        data: { lastUseAt: state.lastUseAt?.toISOString() ?? null },
      }, where);
      await emit({
        ...base,
        kind: BREAK_GLASS_EVENTS.rotationRequired,
        data: { lastUseAt: state.lastUseAt?.toISOString() ?? null, reason: "login" },
      }, where);
    });
  }

  /** A break-glass account's credential stamp (its abuse counters' epoch); null for any other. */
  async #breakGlassStamp(user: User | null): Promise<string | null> {
    if (user === null || !user.isBreakGlass) return null;
    return await this.#d.storage.users.credentialStamp(user.id);
  }

  async #alertRiskBlock(user: User, risk: RiskDecision, origin: LoginOrigin): Promise<void> {
    const hook = this.#d.onRiskBlock;
    if (!hook) return;
    try {
      await hook({
        user,
        at: new Date(this.#d.clock.now()),
        ip: origin.ip ?? null,
        device: describeDevice(origin.userAgent),
        score: risk.score,
        signals: risk.signals.filter((s) => s.fired),
        locale: origin.locale ?? null,
      });
    } catch (error) {
      this.#d.onError?.(`login: risk-block alert of user ${user.id} not sent`, error);
    }
  }

  /**
   * A recovery code is spent only by the attempt that wins the `mfa+svc` token: the token's jti
   * and the code are consumed in one transaction (the token first, so concurrent attempts queue
   * on it), and a wrong code or a token another attempt consumed rolls both back.
   */
  async #spendRecoveryCode(
    userId: string,
    jti: string,
    expiresAt: Date,
    code: string,
  ): Promise<"ok" | "consumed" | "invalid_code"> {
    const d = this.#d;
    try {
      return await d.storage.transaction(async (tx) => {
        if (!await tx.consumedTokens.consume(jti, expiresAt)) throw new RecoveryCodeNotSpent("consumed");
        if (!await d.recoveryCodes.consume(userId, code, tx.recoveryCodes)) {
          throw new RecoveryCodeNotSpent("invalid_code");
        }
        return "ok" as const;
      });
    } catch (error) {
      if (error instanceof RecoveryCodeNotSpent) return error.outcome;
      throw error;
    }
  }

  async #checkFactor(
    user: User,
    jti: string,
    factor: Exclude<MfaFactor, "recovery_code">, // a recovery code is spent in #spendRecoveryCode
    code: string,
  ): Promise<"ok" | string> {
    const d = this.#d;
    switch (factor) {
      case "totp": {
        const result = await d.totp.verify(user.id, code);
        return result.ok ? "ok" : result.reason;
      }
      case "email_otp": {
        const result = await d.emailOtp.verify(MFA_CHALLENGE_PREFIX + jti, code);
        return result.ok ? "ok" : result.outcome;
      }
    }
  }

  /** svc itself (the issuer) when absent; otherwise an app of the app catalog. */
  async #audience(audience: string | null): Promise<string> {
    const issuer = this.#d.tokens.issuer;
    if (audience === null || audience === "" || audience === issuer) return issuer;
    if (await this.#d.storage.appCatalog.get(audience) === null) throw new UnknownAudienceError();
    return audience;
  }

  async #emit(event: Omit<SvcEvent, "occurredAt">, origin: LoginOrigin): Promise<void> {
    const full: SvcEvent = { ...event, occurredAt: this.#d.clock.now() };
    const where: EventOrigin = {
      ipAddress: origin.ip ?? null,
      deviceDescription: describeDevice(origin.userAgent),
    };
    try {
      const events = this.#d.events;
      if (events.publish) await events.publish(full, where);
      else await events.transaction((_tx, emit) => emit(full, where));
    } catch (error) {
      this.#d.onError?.(`login: event ${event.kind} not recorded`, error);
    }
  }
}

/** Rolls back the transaction of a recovery code attempt that did not win (the outcome says why). */
class RecoveryCodeNotSpent extends Error {
  constructor(readonly outcome: "consumed" | "invalid_code") {
    super(outcome);
  }
}

/** The `aud` of a token before verification (verification then checks the signature over it). */
function unverifiedAudience(token: string): string {
  const payload = token.split(".")[1];
  if (payload === undefined || payload.length > 8192) throw new InvalidTokenError("malformed");
  try {
    const aud = JSON.parse(new TextDecoder().decode(fromBase64Url(payload))).aud;
    if (typeof aud === "string" && aud.length > 0 && aud.length <= 2000) return aud;
  } catch {
    // falls through
  }
  throw new InvalidTokenError("malformed");
}

/** A short, single-line device description from a User-Agent. */
export function describeDevice(userAgent: string | null | undefined): string | null {
  if (!userAgent) return null;
  // deno-lint-ignore no-control-regex
  const clean = userAgent.replace(/[\u0000-\u001f\u007f]/g, " ").trim();
  return clean === "" ? null : clean.slice(0, 200);
}

function firedSignals(risk: RiskDecision): string[] {
  return risk.signals.filter((s) => s.fired).map((s) => s.name);
}
