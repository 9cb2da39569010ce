/**
 * Account flows over HTTP (spec 5.5):
 *
 * - `POST /auth/password/forgot` `{ email, realm? }`: always 202 `{ "status": "accepted" }`; the
 *   reset link is mailed in the background when the user exists, so the answer and its timing
 *   are the same either way.
 * - `POST /auth/password/reset` `{ token, password }`: 200 `{ "status": "password_reset" }`;
 *   every refresh token of the user is revoked.
 * - `POST /auth/email/verify/request` (signed-in user): 202 `{ "status": "sent" | "already_verified" }`.
 * - `POST /auth/email/verify` `{ token }`: 200 `{ userId, email, emailVerified: true }`.
 * - `POST /auth/invitation/accept` `{ token, password, displayName? }`: 200 `{ userId, email }`.
 * - `POST /svc-admin/users/invite` `{ email, orgId?, displayName? }`: 201 `{ userId, email, orgId,
 *   expiresAt, userCreated }`, fenced by `svc:global:users-invite` (any organization of the realm)
 *   or `svc:org:users-invite` (the caller's own organization only).
 *
 * @module
 */
import * as v from "valibot";
import type { AccountFlows } from "../../core/accounts/flows.ts";
import { MAX_PASSWORD_LENGTH } from "../../core/accounts/flows.ts";
import { USERS_INVITE_GLOBAL, USERS_INVITE_ORG } from "../../core/definitions/svc-permissions.ts";
import { ForbiddenError } from "../../core/errors.ts";
import type { SubjectSnapshots } from "../../core/snapshots/service.ts";
import type { RealmStore } from "../../storage/contract/realms.ts";
import type { RouteInstaller } from "../app.ts";
import { covers, fence } from "../auth/fence.ts";
import { parseBody } from "../validate.ts";
import { requireUser } from "./auth.ts";
import { UUID_PATTERN } from "../../core/ids.ts";

const text = (what: string, max: number) =>
  v.pipe(v.string(`${what} must be a string`), v.minLength(1, `${what} must not be empty`), v.maxLength(max));
const email = v.pipe(
  v.string("email must be a string"),
  v.trim(),
  v.maxLength(320),
  v.regex(/^[^\s@<>,;"]+@[^\s@<>,;"]+$/, "email must be an email address"),
);
const password = v.pipe(v.string("password must be a string"), v.maxLength(MAX_PASSWORD_LENGTH));
const token = text("token", 8192);

/** The body of `POST /auth/password/forgot`. */
export const ForgotPasswordSchema = v.strictObject({
  email: text("email", 320),
  realm: v.optional(v.nullable(text("realm", 200))),
});
/** The body of `POST /auth/password/reset`. */
export const ResetPasswordSchema = v.strictObject({ token, password });
/** The body of `POST /auth/email/verify`. */
export const VerifyEmailSchema = v.strictObject({ token });
/** The body of `POST /auth/invitation/accept`. */
export const AcceptInvitationSchema = v.strictObject({
  token,
  password,
  displayName: v.optional(v.nullable(text("displayName", 200))),
});
/** The body of `POST /svc-admin/users/invite`. */
export const InviteUserSchema = v.strictObject({
  email,
  orgId: v.optional(
    v.nullable(v.pipe(v.string("orgId must be a string"), v.regex(UUID_PATTERN, "orgId must be a UUID"))),
  ),
  displayName: v.optional(v.nullable(text("displayName", 200))),
});

/** What the account routes need. */
export interface AccountRouteDeps {
  accounts: AccountFlows;
  realms: RealmStore;
  snapshots: SubjectSnapshots;
  /** Runs work after the answer (the forgot-password mail); failures are reported, never answered. */
  background: (work: () => Promise<unknown>) => void;
}

/** The account routes. */
export function accountRoutes(deps: AccountRouteDeps): RouteInstaller {
  return (app) => {
    app.post("/auth/password/forgot", async (c) => {
      const body = await parseBody(c, ForgotPasswordSchema);
      deps.background(async () => {
        const realm = body.realm
          ? (await deps.realms.get(body.realm)) ?? (await deps.realms.getByName(body.realm))
          : await deps.realms.getDefault();
        await deps.accounts.forgotPassword(realm?.id ?? null, body.email);
      });
      c.header("Cache-Control", "no-store");
      return c.json({ status: "accepted" }, 202);
    });

    app.post("/auth/password/reset", async (c) => {
      const body = await parseBody(c, ResetPasswordSchema);
      await deps.accounts.resetPassword(body.token, body.password);
      return c.json({ status: "password_reset" });
    });

    app.post("/auth/email/verify/request", async (c) => {
      const principal = await requireUser(c);
      const sent = await deps.accounts.requestEmailVerification(principal.userId);
      return c.json({ status: sent ? "sent" : "already_verified" }, 202);
    });

    app.post("/auth/email/verify", async (c) => {
      const body = await parseBody(c, VerifyEmailSchema);
      const user = await deps.accounts.confirmEmailVerification(body.token);
      return c.json({ userId: user.id, email: user.email, emailVerified: user.emailVerified });
    });

    app.post("/auth/invitation/accept", async (c) => {
      const body = await parseBody(c, AcceptInvitationSchema);
      const accepted = await deps.accounts.acceptInvitation(body.token, body.password, body.displayName);
      return c.json({ userId: accepted.userId, email: accepted.email });
    });

    app.post("/svc-admin/users/invite", async (c) => {
      const scope = await fence(c, deps.snapshots, {
        global: [USERS_INVITE_GLOBAL],
        org: [USERS_INVITE_ORG],
      }, "You may not invite users.");
      const body = await parseBody(c, InviteUserSchema);
      const orgId = body.orgId ?? null;
      if (!covers(scope, orgId)) throw new ForbiddenError("You may not invite users there.");
      const invitation = await deps.accounts.invite({
        realmId: scope.principal.realmId,
        inviterId: scope.principal.userId,
        email: body.email,
        orgId,
        displayName: body.displayName,
      });
      return c.json({
        userId: invitation.userId,
        email: invitation.email,
        orgId: invitation.orgId,
        expiresAt: invitation.expiresAt.toISOString(),
        userCreated: invitation.userCreated,
      }, 201);
    });
  };
}
