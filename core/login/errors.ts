/**
 * The errors of the password login pipeline and its second step (spec 5.2, 7). Each has a
 * stable `code`; the HTTP layer answers with its status and the one error shape.
 *
 * @module
 */
import { SvcError } from "../errors.ts";

/**
 * A wrong password, an unknown user, a user without a password, a suspended user, and a right
 * password the risk gate blocked (score 80 or more): one answer, so that it never tells them
 * apart (a block would otherwise confirm the password). Code `invalid_credentials`, 401.
 */
export class LoginFailedError extends SvcError {
  constructor() {
    super("invalid_credentials", "The email or password is incorrect.", 401);
  }
}

/** The abuse gate blocked the attempt. Code `login_blocked`, 429, with `details.retryAfterSeconds`. */
export class LoginBlockedError extends SvcError {
  /** Seconds until the blocking layers reset, when known. */
  readonly retryAfterSeconds: number | null;

  /** `retryAfterSeconds` goes into `details` and onto the error; null when unknown. */
  constructor(retryAfterSeconds: number | null) {
    super("login_blocked", "Too many sign-in attempts; try again later.", 429, { retryAfterSeconds });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * The abuse gate demands a CAPTCHA: send the widget's token as `captchaToken`. Code
 * `captcha_required`, 401, with `details.provider`, `details.siteKey` and `details.errorCodes`
 * (why a presented token was refused; empty when none was sent).
 */
export class CaptchaRequiredError extends SvcError {
  /** The configured provider, its public site key, and why a presented token was refused (empty when none was sent). */
  constructor(captcha: { provider: string; siteKey: string | null; errorCodes: readonly string[] }) {
    super("captcha_required", "Solve the CAPTCHA and send its token as captchaToken.", 401, {
      provider: captcha.provider,
      siteKey: captcha.siteKey,
      errorCodes: [...captcha.errorCodes],
    });
  }
}

/** A second-factor code that is wrong, spent or expired. Code `invalid_mfa_code`, 401. */
export class InvalidMfaCodeError extends SvcError {
  constructor() {
    super("invalid_mfa_code", "The code is incorrect or expired.", 401);
  }
}

/**
 * A TOTP code that was right but whose time step is already spent (used a moment ago, here or
 * in a concurrent request): the next code of the app will do. Code `totp_code_replayed`, 401.
 * Only a caller who already proved the password (or holds the session) can see it.
 */
export class TotpCodeReplayedError extends SvcError {
  constructor() {
    super(
      "totp_code_replayed",
      "That code was just used. Wait for the next code from your authenticator app and enter it.",
      401,
    );
  }
}

/** The requested `audience` is neither svc itself nor an app of the app catalog. Code `unknown_audience`, 400. */
export class UnknownAudienceError extends SvcError {
  constructor() {
    super("unknown_audience", "The audience is not a registered app.", 400);
  }
}
