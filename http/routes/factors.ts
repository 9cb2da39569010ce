/**
 * The caller's second factors (spec 5.1):
 *
 * - `GET /profile/factors`: `{ totp: "none" | "pending" | "confirmed", recoveryCodesRemaining, emailOtp: true,
 *   emailOtpEnrolled }` (`emailOtp`: available as the step-up fallback; `emailOtpEnrolled`: required at login).
 * - `POST /profile/factors/totp`: starts (or restarts) TOTP enrollment: `{ secret, uri, digits,
 *   period, algorithm }`, shown once; 409 `conflict` when TOTP is already confirmed.
 * - `POST /profile/factors/totp/confirm` `{ code }`: confirms it with a first code:
 *   `{ totp: "confirmed" }`; 401 `invalid_mfa_code` for a wrong code. Event `mfa.totp_enabled`.
 * - `DELETE /profile/factors/totp` `{ code? }`: removes TOTP (204). Event `mfa.totp_disabled`.
 * - `POST /profile/factors/recovery-codes` `{ code? }`: a new set of recovery codes, shown once
 *   (`{ codes: [...] }`); the previous set stops working. Event `mfa.recovery_codes_generated`
 *   (with the `count`, never a code).
 *
 * The events go to the user's security ledger. A proof `code` that is right but whose time step
 * was already used answers 401 `totp_code_replayed` (wait for the next code).
 * - `GET /profile/factors/recovery-codes`: `{ remaining }`.
 * - `POST /profile/factors/email-otp`: starts enrolling email OTP as a second factor: a code goes
 *   to the account's address (202 `{ expiresAt }`).
 * - `POST /profile/factors/email-otp/confirm` `{ code }`: enrolls it with that code
 *   (`{ emailOtp: "enrolled" }`); 401 `invalid_mfa_code` for a wrong, expired or used-up code.
 * - `DELETE /profile/factors/email-otp` `{ code? }`: removes the enrollment (204), with the same
 *   proof as removing TOTP.
 *
 * Removing TOTP and regenerating recovery codes weaken or bypass the second factor, so once TOTP
 * is confirmed they need a proof: a session signed in with a second factor (`mfa` is
 * `MultiFactor`) or a current TOTP code in `code`. A user with email OTP enrolled (and no TOTP) proves
 * it at every password login; every other user without TOTP still gets it when the risk gate asks
 * for step-up (it goes to the account's address).
 *
 * @module
 */
import { mailLocaleOf } from "../../core/mail/messages.ts";
import type { Context } from "hono";
import * as v from "valibot";
import { InvalidMfaCodeError, TotpCodeReplayedError } from "../../core/login/errors.ts";
import { MFA_LEVEL_MULTI_FACTOR, type SecurityEventWriter } from "../../core/login/pipeline.ts";
import { EVENT_KINDS } from "../../core/events/catalog.ts";
import type { Clock } from "../../core/clock.ts";
import { NotFoundError, SvcError } from "../../core/errors.ts";
import type { EmailOtpService } from "../../core/mfa/email-otp.ts";
import type { RecoveryCodeService } from "../../core/mfa/recovery-codes.ts";
import type { TotpService } from "../../core/totp/service.ts";
import type { EmailOtpEnrollmentStore } from "../../core/storage/email-otp-enrollments.ts";
import type { UserStore } from "../../core/storage/users.ts";
import {
  documented,
  type DocumentedInstaller,
  errorResponses,
  type OperationDoc,
} from "../openapi/operation.ts";
import type { Principal } from "../auth/principal.ts";
import type { SvcEnv } from "../request-id.ts";
import { parseBody } from "../validate.ts";
import { noStore } from "../security-headers.ts";
import { requireUser } from "./auth.ts";

const code = v.pipe(v.string("code must be a string"), v.minLength(1), v.maxLength(64));
/** The body of `POST /profile/factors/totp/confirm`. */
export const TotpCodeSchema = v.strictObject({ code });
/** The optional body of the routes that need a second-factor proof. */
export const FactorProofSchema = v.strictObject({ code: v.optional(code) });

/** The answer of `GET /profile/factors`. */
export const FactorsSchema = v.pipe(
  v.object({
    totp: v.picklist(["none", "pending", "confirmed"]),
    recoveryCodesRemaining: v.number(),
    emailOtp: v.pipe(v.boolean(), v.description("Available as the step-up fallback.")),
    emailOtpEnrolled: v.pipe(v.boolean(), v.description("Required at every password login.")),
  }),
  v.title("Factors"),
);

/** The answer of `POST /profile/factors/totp`: the secret, shown once. */
export const TotpEnrollmentSchema = v.pipe(
  v.object({
    secret: v.pipe(v.string(), v.description("Base32, for manual entry; shown this once.")),
    uri: v.pipe(v.string(), v.description("The otpauth:// URI (QR code); holds the secret.")),
    digits: v.number(),
    period: v.number(),
    algorithm: v.string(),
  }),
  v.title("TotpEnrollment"),
);

const TAGS = ["Factors"];
const PROOF =
  "Once TOTP is confirmed: a multi-factor session, or a current TOTP code in `code` (else 403 `second_factor_required`).";

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "GET",
    path: "/profile/factors",
    summary: "The caller's second factors",
    tags: TAGS,
    responses: { 200: { description: "The factors", body: FactorsSchema }, ...errorResponses(401, 403) },
  },
  {
    method: "POST",
    path: "/profile/factors/email-otp",
    summary: "Start enrolling email OTP (a code goes to the account's address)",
    tags: TAGS,
    responses: {
      202: { description: "Code sent", body: v.object({ expiresAt: v.string() }) },
      ...errorResponses(401, 403, 404, 429),
    },
  },
  {
    method: "POST",
    path: "/profile/factors/email-otp/confirm",
    summary: "Enroll email OTP with the mailed code",
    tags: TAGS,
    body: TotpCodeSchema,
    responses: {
      200: { description: "Enrolled", body: v.object({ emailOtp: v.literal("enrolled") }) },
      ...errorResponses(400, 401, 403),
    },
  },
  {
    method: "DELETE",
    path: "/profile/factors/email-otp",
    summary: "Remove the email OTP enrollment",
    description: PROOF,
    tags: TAGS,
    body: FactorProofSchema,
    bodyRequired: false,
    responses: { 204: { description: "Removed" }, ...errorResponses(400, 401, 403, 404) },
  },
  {
    method: "POST",
    path: "/profile/factors/totp",
    summary: "Start (or restart) TOTP enrollment",
    tags: TAGS,
    responses: {
      200: { description: "The secret, shown once", body: TotpEnrollmentSchema },
      ...errorResponses(401, 403, 404, 409),
    },
  },
  {
    method: "POST",
    path: "/profile/factors/totp/confirm",
    summary: "Confirm TOTP with a first code",
    tags: TAGS,
    body: TotpCodeSchema,
    responses: {
      200: { description: "Confirmed", body: v.object({ totp: v.literal("confirmed") }) },
      ...errorResponses(400, 401, 403, 409),
    },
  },
  {
    method: "DELETE",
    path: "/profile/factors/totp",
    summary: "Remove TOTP",
    description: PROOF,
    tags: TAGS,
    body: FactorProofSchema,
    bodyRequired: false,
    responses: { 204: { description: "Removed" }, ...errorResponses(400, 401, 403, 404) },
  },
  {
    method: "POST",
    path: "/profile/factors/recovery-codes",
    summary: "A new set of recovery codes (the previous set stops working)",
    description: PROOF,
    tags: TAGS,
    body: FactorProofSchema,
    bodyRequired: false,
    responses: {
      200: { description: "The codes, shown once", body: v.object({ codes: v.array(v.string()) }) },
      ...errorResponses(400, 401, 403),
    },
  },
  {
    method: "GET",
    path: "/profile/factors/recovery-codes",
    summary: "How many recovery codes remain",
    tags: TAGS,
    responses: {
      200: { description: "The count", body: v.object({ remaining: v.number() }) },
      ...errorResponses(401, 403),
    },
  },
];

/** What the factor routes need. */
export interface FactorRouteDeps {
  totp: TotpService;
  recoveryCodes: RecoveryCodeService;
  users: UserStore;
  emailOtp: EmailOtpService;
  emailOtpEnrollments: EmailOtpEnrollmentStore;
  /** Records `mfa.totp_enabled`, `mfa.totp_disabled` and `mfa.recovery_codes_generated` in the user's ledger. */
  events: SecurityEventWriter;
  /** Stamps the events. */
  clock: Clock;
}

/** Records one factor change of the signed-in user durably (security ledger, webhooks, the hub). */
async function recordFactorChange(
  deps: FactorRouteDeps,
  principal: Principal,
  kind: string,
  data: Record<string, unknown> = {},
): Promise<void> {
  await deps.events.transaction((_tx, emit) =>
    emit({ kind, occurredAt: deps.clock.now(), realmId: principal.realmId, userId: principal.userId, data })
  );
}

/** The email OTP challenge of an enrollment, one per user. */
const enrollmentChallenge = (userId: string) => `enroll-email-otp:${userId}`;

/** The factor routes. */
export function factorRoutes(deps: FactorRouteDeps): DocumentedInstaller {
  return documented((app) => {
    app.get("/profile/factors", async (c) => {
      const principal = await requireUser(c);
      const [totp, remaining, emailOtpEnrolledAt] = await Promise.all([
        deps.totp.status(principal.userId),
        deps.recoveryCodes.remaining(principal.userId),
        deps.emailOtpEnrollments.enrolledAt(principal.userId),
      ]);
      c.header("Cache-Control", "no-store");
      return c.json({
        totp,
        recoveryCodesRemaining: remaining,
        emailOtp: true,
        emailOtpEnrolled: emailOtpEnrolledAt !== null,
      });
    });

    app.post("/profile/factors/email-otp", async (c) => {
      const principal = await requireUser(c);
      const user = await deps.users.get(principal.userId);
      if (user === null) throw new NotFoundError("No such user.");
      const issued = await deps.emailOtp.issue({
        to: user.email,
        addressee: { realmId: user.realmId, userId: user.id },
        challengeId: enrollmentChallenge(user.id),
        locale: mailLocaleOf(c.req.header("Accept-Language")),
      });
      return c.json({ expiresAt: issued.expiresAt.toISOString() }, 202);
    });

    app.post("/profile/factors/email-otp/confirm", async (c) => {
      const principal = await requireUser(c);
      const body = await parseBody(c, TotpCodeSchema);
      const result = await deps.emailOtp.verify(enrollmentChallenge(principal.userId), body.code);
      if (!result.ok) throw new InvalidMfaCodeError();
      await deps.emailOtpEnrollments.enroll(principal.userId);
      return c.json({ emailOtp: "enrolled" });
    });

    app.delete("/profile/factors/email-otp", async (c) => {
      const principal = await requireUser(c);
      await requireProof(c, deps, principal);
      if (!await deps.emailOtpEnrollments.remove(principal.userId)) {
        throw new NotFoundError("Email OTP is not enrolled.");
      }
      return c.body(null, 204);
    });

    app.post("/profile/factors/totp", noStore, async (c) => {
      const principal = await requireUser(c);
      const user = await deps.users.get(principal.userId);
      if (user === null) throw new NotFoundError("No such user.");
      const started = await deps.totp.startEnrollment(user.id, user.email);
      return c.json(started);
    });

    app.post("/profile/factors/totp/confirm", async (c) => {
      const principal = await requireUser(c);
      const body = await parseBody(c, TotpCodeSchema);
      const result = await deps.totp.confirmEnrollment(principal.userId, body.code);
      if (!result.ok) {
        if (result.reason === "no_pending_enrollment") {
          throw new SvcError("no_pending_enrollment", "Start TOTP enrollment first.", 409);
        }
        throw new InvalidMfaCodeError();
      }
      await recordFactorChange(deps, principal, EVENT_KINDS.mfaTotpEnabled);
      return c.json({ totp: "confirmed" });
    });

    app.delete("/profile/factors/totp", async (c) => {
      const principal = await requireUser(c);
      await requireProof(c, deps, principal);
      if (!await deps.totp.disable(principal.userId)) throw new NotFoundError("TOTP is not enrolled.");
      await recordFactorChange(deps, principal, EVENT_KINDS.mfaTotpDisabled);
      return c.body(null, 204);
    });

    app.post("/profile/factors/recovery-codes", noStore, async (c) => {
      const principal = await requireUser(c);
      await requireProof(c, deps, principal);
      const codes = await deps.recoveryCodes.generate(principal.userId);
      await recordFactorChange(deps, principal, EVENT_KINDS.mfaRecoveryCodesGenerated, {
        count: codes.length,
      });
      return c.json({ codes });
    });

    app.get("/profile/factors/recovery-codes", async (c) => {
      const principal = await requireUser(c);
      return c.json({ remaining: await deps.recoveryCodes.remaining(principal.userId) });
    });
  }, OPERATIONS);
}

/** With TOTP confirmed: a multi-factor session or a current TOTP code; otherwise nothing. */
async function requireProof(c: Context<SvcEnv>, deps: FactorRouteDeps, principal: Principal): Promise<void> {
  const hasBody = c.req.header("Content-Type") !== undefined;
  const body = hasBody ? await parseBody(c, FactorProofSchema) : {};
  if (await deps.totp.status(principal.userId) !== "confirmed") return;
  if (principal.mfa === MFA_LEVEL_MULTI_FACTOR) return;
  const result = body.code === undefined ? null : await deps.totp.verify(principal.userId, body.code);
  if (result !== null && !result.ok && result.reason === "replayed") throw new TotpCodeReplayedError();
  if (result === null || !result.ok) {
    throw new SvcError(
      "second_factor_required",
      "Send a current TOTP code as code, or sign in with your second factor first.",
      403,
    );
  }
}
