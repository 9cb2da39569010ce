/**
 * Account flows over HTTP (spec 5.5):
 *
 * - `POST /auth/password/forgot` `{ email, realm? }`: always 202 `{ "status": "accepted" }`; the
 *   reset link is mailed in the background when the user exists and the request is within the
 *   forgot-password throttle (per account and per IP), so the answer and its timing are the same
 *   either way.
 * - `POST /auth/password/reset` `{ token, password }`: 200 `{ "status": "password_reset" }`;
 *   every refresh token of the user is revoked.
 * - `POST /auth/email/verify/request` (signed-in user): 202 `{ "status": "sent" | "already_verified" }`;
 *   past the verification throttle (per account and per IP) the answer is the same and nothing is sent.
 * - `POST /auth/email/verify` `{ token }`: 200 `{ userId, email, emailVerified: true }`.
 * - `POST /auth/invitation/describe` `{ token }`: 200 `{ email, organization }` for a live
 *   invitation (what the accept page names); `invalid_token` otherwise, the same for every cause.
 * - `POST /auth/invitation/accept` `{ token, password?, displayName? }`: 200 `{ userId, email }`;
 *   a new account chooses its `password`; an account that has one accepts signed in, without it.
 * - `POST /auth/sign-up` `{ email, realm?, captchaToken? }`: self sign-up, only where the realm's
 *   `selfSignUp` is on (else 403 `sign_up_closed`). Through the abuse gate like a password login
 *   (429 `login_blocked`, 401 `captcha_required`), then always 202 `{ "status": "accepted" }`:
 *   the mail (a link to finish, or to an existing account's owner a note that someone tried) goes
 *   out after the answer, so neither the answer nor its timing tells whether the address has an
 *   account (see `AccountFlows.signUp`).
 * - `POST /svc-admin/users/invite` `{ email, orgId?, displayName? }`: 201 `{ userId, email, orgId,
 *   expiresAt }`, fenced by `svc:global:users-invite` (any organization of the realm) or
 *   `svc:org:users-invite` (the caller's own organization only, the default `orgId` for them).
 *   The answer never depends on accounts outside the caller's fence, and the membership is
 *   created on acceptance (see `AccountFlows.invite`).
 *
 * @module
 */
import * as v from "valibot";
import type { RequestThrottle } from "../../core/abuse/request-throttle.ts";
import type { AccountFlows } from "../../core/accounts/flows.ts";
import { EmailAddressSchema, EmailLookupSchema } from "../../core/accounts/email.ts";
import { MAX_PASSWORD_LENGTH, SignUpClosedError } from "../../core/accounts/flows.ts";
import type { AbuseGate } from "../../core/abuse/gate.ts";
import { CaptchaRequiredError, LoginBlockedError } from "../../core/login/errors.ts";
import { USERS_INVITE_GLOBAL, USERS_INVITE_ORG } from "../../core/definitions/svc-permissions.ts";
import { ForbiddenError, NotFoundError } from "../../core/errors.ts";
import type { SubjectSnapshots } from "../../core/snapshots/service.ts";
import type { RealmStore } from "../../core/storage/realms.ts";
import type { UserStore } from "../../core/storage/users.ts";
import {
  documented,
  type DocumentedInstaller,
  errorResponses,
  type OperationDoc,
} from "../openapi/operation.ts";
import { auditActor } from "../auth/audit-actor.ts";
import { covers, fence } from "../auth/fence.ts";
import { clientIp } from "../client-ip.ts";
import { mailLocaleOf } from "../../core/mail/messages.ts";
import { noStore } from "../security-headers.ts";
import { parseBody } from "../validate.ts";
import { requireUser } from "./auth.ts";
import { UUID_PATTERN } from "../../core/ids.ts";

const text = (what: string, max: number) =>
  v.pipe(v.string(`${what} must be a string`), v.minLength(1, `${what} must not be empty`), v.maxLength(max));
/** Normalized (NFKC, trimmed, lowercased, IDNA ASCII domain) and checked: the address as stored. */
const email = EmailAddressSchema;
const password = v.pipe(v.string("password must be a string"), v.maxLength(MAX_PASSWORD_LENGTH));
const token = text("token", 8192);

/** The body of `POST /auth/password/forgot`. */
export const ForgotPasswordSchema = v.strictObject({
  email: EmailLookupSchema,
  realm: v.optional(v.nullable(text("realm", 200))),
});
/** The body of `POST /auth/password/reset`. */
export const ResetPasswordSchema = v.strictObject({ token, password });
/** The body of `POST /auth/email/verify`. */
export const VerifyEmailSchema = v.strictObject({ token });
/** The body of `POST /auth/invitation/describe`. */
export const DescribeInvitationSchema = v.strictObject({ token });
/** The answer of `POST /auth/invitation/describe`. */
export const InvitationDescriptionSchema = v.pipe(
  v.object({
    email: v.pipe(v.string(), v.description("The invited address.")),
    organization: v.pipe(
      v.nullable(v.object({ name: v.string(), displayName: v.string() })),
      v.description("The organization the invitation joins; null for a realm-wide invitation."),
    ),
  }),
  v.title("InvitationDescription"),
);
/** The body of `POST /auth/invitation/accept`. */
export const AcceptInvitationSchema = v.strictObject({
  token,
  password: v.optional(v.nullable(password)),
  displayName: v.optional(v.nullable(text("displayName", 200))),
});
/** The body of `POST /auth/sign-up`. */
export const SignUpSchema = v.strictObject({
  email,
  realm: v.optional(v.nullable(text("realm", 200))),
  captchaToken: v.optional(v.nullable(text("captchaToken", 4096))),
});
/** The body of `POST /svc-admin/users/invite`. */
export const InviteUserSchema = v.strictObject({
  email,
  orgId: v.optional(
    v.nullable(v.pipe(v.string("orgId must be a string"), v.regex(UUID_PATTERN, "orgId must be a UUID"))),
  ),
  displayName: v.optional(v.nullable(text("displayName", 200))),
});

/** The answer of `POST /svc-admin/users/invite`. */
export const InvitationSchema = v.pipe(
  v.object({
    userId: v.string(),
    email: v.string(),
    orgId: v.nullable(v.string()),
    expiresAt: v.pipe(v.string(), v.description("When the invitation link expires (ISO 8601).")),
  }),
  v.title("Invitation"),
);

const status = <const T extends string[]>(...values: T) => v.object({ status: v.picklist(values) });

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "POST",
    path: "/auth/password/forgot",
    summary: "Ask for a password reset link",
    description: "Always 202, whether or not the account exists; the mail goes out in the background.",
    tags: ["Account"],
    auth: "public",
    body: ForgotPasswordSchema,
    responses: { 202: { description: "Accepted", body: status("accepted") }, ...errorResponses(400) },
  },
  {
    method: "POST",
    path: "/auth/password/reset",
    summary: "Set a new password with a reset token",
    description: "Every refresh token of the user is revoked. A break-glass account's password changes by " +
      "rotation only (403 `break_glass_managed`).",
    tags: ["Account"],
    auth: "public",
    body: ResetPasswordSchema,
    responses: {
      200: { description: "Done", body: status("password_reset") },
      ...errorResponses(400, 401, 403),
    },
  },
  {
    method: "POST",
    path: "/auth/email/verify/request",
    summary: "Mail a verification link to the caller's address",
    tags: ["Account"],
    responses: {
      202: { description: "Sent (or nothing to do)", body: status("sent", "already_verified") },
      ...errorResponses(401, 403),
    },
  },
  {
    method: "POST",
    path: "/auth/email/verify",
    summary: "Verify an email address with its token",
    tags: ["Account"],
    auth: "public",
    body: VerifyEmailSchema,
    responses: {
      200: {
        description: "Verified",
        body: v.object({ userId: v.string(), email: v.string(), emailVerified: v.boolean() }),
      },
      ...errorResponses(400, 401),
    },
  },
  {
    method: "POST",
    path: "/auth/sign-up",
    summary: "Sign up (where the realm allows it): a link to finish arrives by mail",
    description:
      "Always 202 once past the abuse gate, whether or not the address has an account (its owner is told someone tried).",
    tags: ["Account"],
    auth: "public",
    body: SignUpSchema,
    responses: {
      202: { description: "Accepted", body: v.object({ status: v.literal("accepted") }) },
      ...errorResponses(400, 401, 403, 429),
    },
  },
  {
    method: "POST",
    path: "/auth/invitation/describe",
    summary: "What a live invitation is for",
    description:
      "The invited address and the organization, for the accept page. Any token that is not a live invitation (bad, expired, used, its user suspended) is the same `invalid_token`.",
    tags: ["Account"],
    auth: "public",
    body: DescribeInvitationSchema,
    responses: {
      200: { description: "The invitation", body: InvitationDescriptionSchema },
      ...errorResponses(400),
    },
  },
  {
    method: "POST",
    path: "/auth/invitation/accept",
    summary: "Accept an invitation",
    description: "A new account chooses its password; an existing account accepts signed in.",
    tags: ["Account"],
    auth: "optional",
    body: AcceptInvitationSchema,
    responses: {
      200: { description: "Accepted", body: v.object({ userId: v.string(), email: v.string() }) },
      ...errorResponses(400, 401, 403, 409),
    },
  },
  {
    method: "POST",
    path: "/svc-admin/users/invite",
    summary: "Invite a user by email",
    description:
      "An organization administrator invites into its own organization only (the default `orgId`).",
    tags: ["Admin: users"],
    permissions: [USERS_INVITE_GLOBAL, USERS_INVITE_ORG],
    body: InviteUserSchema,
    responses: {
      201: { description: "Invited", body: InvitationSchema },
      ...errorResponses(400, 401, 403, 404, 409),
    },
  },
];

/** What the account routes need. */
export interface AccountRouteDeps {
  accounts: AccountFlows;
  realms: RealmStore;
  snapshots: SubjectSnapshots;
  users: Pick<UserStore, "get">;
  /** Counts forgot-password and verification requests (per account and per IP). */
  throttle: RequestThrottle;
  /** The login abuse gate: self sign-up goes through it too. */
  abuse: Pick<AbuseGate, "check" | "release">;
  /** Runs work after the answer (the forgot-password mail); failures are reported, never answered. */
  background: (work: () => Promise<unknown>) => void;
}

/** The account routes. */
export function accountRoutes(deps: AccountRouteDeps): DocumentedInstaller {
  return documented((app) => {
    app.post("/auth/password/forgot", async (c) => {
      const body = await parseBody(c, ForgotPasswordSchema);
      const ip = clientIp(c);
      const locale = mailLocaleOf(c.req.header("Accept-Language"));
      deps.background(async () => {
        const realm = body.realm
          ? (await deps.realms.get(body.realm)) ?? (await deps.realms.getByName(body.realm))
          : await deps.realms.getDefault();
        const realmId = realm?.id ?? null;
        // Counted whether or not the account exists; over the limit nothing is sent.
        const { allowed } = await deps.throttle.forgotPassword({ ip, realmId, email: body.email });
        if (allowed) await deps.accounts.forgotPassword(realmId, body.email, locale);
      });
      c.header("Cache-Control", "no-store");
      return c.json({ status: "accepted" }, 202);
    });

    app.post("/auth/sign-up", async (c) => {
      const body = await parseBody(c, SignUpSchema);
      const realm = body.realm
        ? (await deps.realms.get(body.realm)) ?? (await deps.realms.getByName(body.realm))
        : await deps.realms.getDefault();
      if (realm === null || !realm.selfSignUp) throw new SignUpClosedError();
      c.header("Cache-Control", "no-store");
      const attempt = { ip: clientIp(c) ?? "unknown", identifier: body.email, realmId: realm.id };
      const gate = await deps.abuse.check({ ...attempt, captchaToken: body.captchaToken ?? null });
      if (gate.outcome === "Blocked") {
        if (gate.retryAfterSeconds !== null) c.header("Retry-After", String(gate.retryAfterSeconds));
        throw new LoginBlockedError(gate.retryAfterSeconds);
      }
      if (gate.outcome === "CaptchaRequired") throw new CaptchaRequiredError(gate.captcha!);
      // No credential was tried: the lockout slot goes back; the other layers keep the count.
      await deps.abuse.release(attempt, gate);
      const locale = mailLocaleOf(c.req.header("Accept-Language"));
      deps.background(() => deps.accounts.signUp(realm.id, body.email, locale));
      return c.json({ status: "accepted" }, 202);
    });

    app.post("/auth/password/reset", async (c) => {
      const body = await parseBody(c, ResetPasswordSchema);
      await deps.accounts.resetPassword(body.token, body.password);
      return c.json({ status: "password_reset" });
    });

    app.post("/auth/email/verify/request", async (c) => {
      const principal = await requireUser(c);
      const { allowed } = await deps.throttle.emailVerification({
        ip: clientIp(c),
        realmId: principal.realmId,
        userId: principal.userId,
      });
      if (!allowed) {
        const user = await deps.users.get(principal.userId);
        return c.json({ status: user?.emailVerified ? "already_verified" : "sent" }, 202);
      }
      const sent = await deps.accounts.requestEmailVerification(
        principal.userId,
        mailLocaleOf(c.req.header("Accept-Language")),
      );
      return c.json({ status: sent ? "sent" : "already_verified" }, 202);
    });

    app.post("/auth/email/verify", async (c) => {
      const body = await parseBody(c, VerifyEmailSchema);
      const user = await deps.accounts.confirmEmailVerification(body.token);
      return c.json({ userId: user.id, email: user.email, emailVerified: user.emailVerified });
    });

    app.post("/auth/invitation/describe", noStore, async (c) => {
      const body = await parseBody(c, DescribeInvitationSchema);
      return c.json(await deps.accounts.describeInvitation(body.token));
    });

    app.post("/auth/invitation/accept", async (c) => {
      const body = await parseBody(c, AcceptInvitationSchema);
      const principal = await c.get("principal")();
      const accepted = await deps.accounts.acceptInvitation(
        body.token,
        body.password,
        body.displayName,
        principal === null || (principal.kind ?? "User") !== "User"
          ? null
          : { userId: principal.userId, impersonated: Boolean(principal.act) },
      );
      return c.json({ userId: accepted.userId, email: accepted.email });
    });

    app.post("/svc-admin/users/invite", async (c) => {
      const scope = await fence(c, deps.snapshots, {
        global: [USERS_INVITE_GLOBAL],
        org: [USERS_INVITE_ORG],
      }, "You may not invite users.");
      const body = await parseBody(c, InviteUserSchema);
      const orgId = body.orgId?.toLowerCase() ?? (scope.global ? null : scope.orgId);
      if (!covers(scope, orgId)) {
        // Another organization is invisible to an organization administrator (404, as unknown);
        // a realm-wide invitation needs the global permission (403).
        if (orgId === null) throw new ForbiddenError("You may not invite users there.");
        throw new NotFoundError("No such organization.");
      }
      const invitation = await deps.accounts.invite({
        realmId: scope.principal.realmId,
        actor: auditActor(scope.principal),
        inviterId: scope.principal.userId,
        email: body.email,
        orgId,
        displayName: body.displayName,
        realmWide: scope.global,
        locale: mailLocaleOf(c.req.header("Accept-Language")),
      });
      return c.json({
        userId: invitation.userId,
        email: invitation.email,
        orgId: invitation.orgId,
        expiresAt: invitation.expiresAt.toISOString(),
      }, 201);
    });
  }, OPERATIONS);
}
