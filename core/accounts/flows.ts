/**
 * Account flows (spec 5.5; issue 5 item 6):
 *
 * - forgot password: mails a single-use `pwreset+svc` link when the user exists and is active;
 *   the caller always reports success, whatever happened;
 * - password reset: consumes the token, replaces the password (afterwards exactly one
 *   credential exists) and revokes every refresh token of the subject;
 * - email verification: mails a single-use `everify+svc` link for the user's current address;
 *   confirming it marks the address verified (a token for an address the user no longer has fails);
 * - invitation: creates a user without a credential (and the organization membership) and mails a
 *   single-use `invite+svc` link; accepting it creates the password credential and marks the
 *   address verified (the link proved it).
 *
 * Every token is consumed before anything changes, so each link works once, concurrent or not.
 *
 * @module
 */
import type { Clock } from "../clock.ts";
import { ConflictError, NotFoundError, ValidationError } from "../errors.ts";
import type { SvcEvent } from "../events/sink.ts";
import type { SecurityEventWriter } from "../login/pipeline.ts";
import type { MailMessages } from "../mail/messages.ts";
import type { MailTransport } from "../mail/transport.ts";
import type { PasswordService } from "../passwords/service.ts";
import type { SessionService } from "../sessions/service.ts";
import { InvalidTokenError } from "../tokens/errors.ts";
import type { TokenService } from "../tokens/service.ts";
import { normalizeEmail, type User } from "../../storage/contract/users.ts";
import type { Storage } from "../../storage/storage.ts";

/** Shortest password svc accepts when a user chooses one (reset, invitation). */
export const MIN_PASSWORD_LENGTH = 8;
/** Longest password svc accepts (hashing cost is bounded anyway; this bounds request sizes). */
export const MAX_PASSWORD_LENGTH = 1024;

/** Event kinds of the account flows (the `user.*` family, in the user's ledger). */
export const ACCOUNT_EVENTS = {
  passwordResetRequested: "user.password_reset_requested",
  passwordReset: "user.password_reset",
  emailVerificationRequested: "user.email_verification_requested",
  emailVerified: "user.email_verified",
  invited: "user.invited",
  invitationAccepted: "user.invitation_accepted",
} as const;

/** What {@link AccountFlows} needs. */
export interface AccountFlowDeps {
  readonly storage: Storage;
  readonly passwords: PasswordService;
  readonly tokens: TokenService;
  readonly sessions: SessionService;
  readonly mail: MailTransport;
  readonly messages: MailMessages;
  readonly events: SecurityEventWriter;
  readonly clock: Clock;
}

/** Throws `ValidationError` (field `password`) unless the password may be chosen. */
export function assertChoosablePassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new ValidationError(`The password must have at least ${MIN_PASSWORD_LENGTH} characters.`, {
      field: "password",
    });
  }
  if (password.length > MAX_PASSWORD_LENGTH) {
    throw new ValidationError(`The password must have at most ${MAX_PASSWORD_LENGTH} characters.`, {
      field: "password",
    });
  }
}

/** An invitation as created. */
export interface CreatedInvitation {
  readonly userId: string;
  readonly email: string;
  readonly orgId: string | null;
  readonly expiresAt: Date;
  /** False when the user already existed without a password (the invitation was sent again). */
  readonly userCreated: boolean;
}

/** The account flows. */
export class AccountFlows {
  readonly #d: AccountFlowDeps;

  constructor(deps: AccountFlowDeps) {
    this.#d = deps;
  }

  /**
   * Mails a reset link when `email` names an active user of the realm; does nothing otherwise.
   * Callers answer the same way in both cases (and should not await it on the request path).
   */
  async forgotPassword(realmId: string | null, email: string): Promise<void> {
    const d = this.#d;
    if (realmId === null) return;
    const user = await d.storage.users.findByEmail(realmId, email);
    if (user === null || user.status !== "Active") return;
    const { token, claims } = await d.tokens.mint("pwreset+svc", { realm: user.realmId, sub: user.id });
    await d.mail.send(
      d.messages.passwordReset({ to: user.email, token, ttlSeconds: claims.exp - claims.iat }),
    );
    await this.#emit({
      kind: ACCOUNT_EVENTS.passwordResetRequested,
      realmId: user.realmId,
      userId: user.id,
      data: {},
    });
  }

  /**
   * Sets a new password with a reset token: the token is consumed (a second use fails), the
   * password replaces every credential of the user, and every refresh token of the user is
   * revoked. Returns how many refresh tokens were revoked.
   */
  async resetPassword(
    token: string,
    password: string,
  ): Promise<{ userId: string; refreshTokensRevoked: number }> {
    const d = this.#d;
    assertChoosablePassword(password);
    const claims = await d.tokens.consume("pwreset+svc", token);
    const user = await this.#activeUser(claims.sub, claims.realm);
    const hash = await d.passwords.hash(password);
    await d.storage.passwordCredentials.replace(user.id, hash);
    const refreshTokensRevoked = await d.sessions.revokeAllRefreshTokens(user.id);
    await this.#emit({
      kind: ACCOUNT_EVENTS.passwordReset,
      realmId: user.realmId,
      userId: user.id,
      data: { refreshTokensRevoked },
    });
    return { userId: user.id, refreshTokensRevoked };
  }

  /** Mails a verification link for the user's current address; false when it is already verified. */
  async requestEmailVerification(userId: string): Promise<boolean> {
    const d = this.#d;
    const user = await d.storage.users.get(userId);
    if (user === null) throw new NotFoundError("No such user.");
    if (user.emailVerified) return false;
    const { token, claims } = await d.tokens.mint("everify+svc", {
      realm: user.realmId,
      sub: user.id,
      email: user.email,
    });
    await d.mail.send(
      d.messages.emailVerification({ to: user.email, token, ttlSeconds: claims.exp - claims.iat }),
    );
    await this.#emit({
      kind: ACCOUNT_EVENTS.emailVerificationRequested,
      realmId: user.realmId,
      userId: user.id,
      data: {},
    });
    return true;
  }

  /** Consumes a verification token and marks the address verified. */
  async confirmEmailVerification(token: string): Promise<User> {
    const d = this.#d;
    const claims = await d.tokens.consume("everify+svc", token);
    const user = await d.storage.users.get(claims.sub);
    if (user === null || user.realmId !== claims.realm || user.email !== normalizeEmail(claims.email)) {
      throw new InvalidTokenError("claims");
    }
    const updated = user.emailVerified
      ? user
      : await d.storage.users.update(user.id, { emailVerified: true });
    if (!user.emailVerified) {
      await this.#emit({
        kind: ACCOUNT_EVENTS.emailVerified,
        realmId: user.realmId,
        userId: user.id,
        data: {},
      });
    }
    return updated;
  }

  /**
   * Invites `email` into the realm (and into `orgId`, when given): creates the user without a
   * credential, unless a password-less user with that address exists (the invitation is then
   * sent again), and mails the link. ConflictError `user_exists` when the address already has a
   * password.
   */
  async invite(input: {
    realmId: string;
    inviterId: string;
    email: string;
    orgId?: string | null;
    displayName?: string | null;
  }): Promise<CreatedInvitation> {
    const d = this.#d;
    const orgId = input.orgId ?? null;
    let org = null;
    if (orgId !== null) {
      org = await d.storage.organizations.get(orgId);
      if (org === null || org.realmId !== input.realmId) throw new NotFoundError("No such organization.");
    }
    const { user, created } = await d.storage.transaction(async (tx) => {
      const existing = await tx.users.findByEmail(input.realmId, input.email);
      if (existing !== null) {
        if (await tx.passwordCredentials.get(existing.id) !== null) {
          throw new ConflictError("A user with this email already exists.", { reason: "user_exists" });
        }
        return { user: existing, created: false };
      }
      const user = await tx.users.create({
        realmId: input.realmId,
        email: input.email,
        displayName: input.displayName ?? null,
        emailVerified: false,
      });
      return { user, created: true };
    });
    if (orgId !== null && !await d.storage.organizations.isMember(orgId, user.id)) {
      try {
        await d.storage.organizations.addMember(orgId, user.id);
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
      }
    }
    const inviter = await d.storage.users.get(input.inviterId);
    const { token, claims } = await d.tokens.mint("invite+svc", {
      realm: input.realmId,
      email: user.email,
      org: orgId,
      inv: input.inviterId,
    });
    await d.mail.send(d.messages.invitation({
      to: user.email,
      token,
      ttlSeconds: claims.exp - claims.iat,
      inviterName: inviter?.displayName ?? inviter?.email ?? undefined,
      organizationName: org?.displayName ?? undefined,
    }));
    await this.#emit({
      kind: ACCOUNT_EVENTS.invited,
      realmId: input.realmId,
      orgId,
      userId: user.id,
      data: { invitedBy: input.inviterId, userCreated: created },
    });
    return {
      userId: user.id,
      email: user.email,
      orgId,
      expiresAt: new Date(claims.exp * 1000),
      userCreated: created,
    };
  }

  /**
   * Accepts an invitation: consumes the token, creates the password credential of the invited
   * user (who must have none: ConflictError `invitation_accepted` otherwise) and marks the
   * address verified.
   */
  async acceptInvitation(
    token: string,
    password: string,
    displayName?: string | null,
  ): Promise<{ userId: string; email: string; realmId: string }> {
    const d = this.#d;
    assertChoosablePassword(password);
    const preview = await d.tokens.verify("invite+svc", token);
    const user = await d.storage.users.findByEmail(preview.realm, preview.email);
    if (user === null || user.status !== "Active") throw new InvalidTokenError("claims");
    if (await d.storage.passwordCredentials.get(user.id) !== null) {
      throw new ConflictError("This invitation was already accepted; sign in instead.", {
        reason: "invitation_accepted",
      });
    }
    const hash = await d.passwords.hash(password);
    await d.tokens.consume("invite+svc", token);
    await d.storage.passwordCredentials.replace(user.id, hash);
    await d.storage.users.update(user.id, {
      emailVerified: true,
      ...(displayName ? { displayName } : {}),
    });
    await this.#emit({
      kind: ACCOUNT_EVENTS.invitationAccepted,
      realmId: user.realmId,
      orgId: preview.org,
      userId: user.id,
      data: { invitedBy: preview.inv },
    });
    return { userId: user.id, email: user.email, realmId: user.realmId };
  }

  async #activeUser(userId: string, realmId: string): Promise<User> {
    const user = await this.#d.storage.users.get(userId);
    if (user === null || user.realmId !== realmId || user.status !== "Active") {
      throw new InvalidTokenError("claims");
    }
    return user;
  }

  async #emit(event: Omit<SvcEvent, "occurredAt">): Promise<void> {
    const full: SvcEvent = { ...event, occurredAt: this.#d.clock.now() };
    await this.#d.events.transaction((_tx, emit) => emit(full));
  }
}
