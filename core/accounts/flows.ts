/**
 * Account flows (spec 5.5; issue 5 item 6):
 *
 * - forgot password: mails a single-use `pwreset+svc` link when the user exists and is active;
 *   the caller always reports success, whatever happened;
 * - password reset: in one transaction, spends the token, checks and rotates the credential
 *   stamp it carries (any password change since the link was minted kills it), replaces the
 *   password (afterwards exactly one credential exists), ends every session of the subject and
 *   revokes every refresh token; a failure anywhere leaves everything, the token included, as it was;
 * - email verification: mails a single-use `everify+svc` link for the user's current address;
 *   confirming it marks the address verified (a token for an address the user no longer has fails);
 * - invitation: an audited admin mutation that creates a user without a credential for an unknown
 *   address and mails a single-use `invite+svc` link carrying the organization; accepting it
 *   creates the password credential (or, for an account that has one, needs the user signed
 *   in), marks the address verified and creates the organization membership: nobody joins an
 *   organization without accepting.
 *
 * Every token is consumed before anything changes, so each link works once, concurrent or not.
 *
 * @module
 */
import type { Clock } from "../clock.ts";
import { BreakGlassManagedError } from "../break-glass/guard.ts";
import { type AuditActor, runAdminMutation } from "../audit/mutation.ts";
import {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  SvcError,
  UnauthenticatedError,
  ValidationError,
} from "../errors.ts";
import type { SvcEvent } from "../events/sink.ts";
import type { SecurityEventWriter } from "../login/pipeline.ts";
import { type MailLocale, type MailMessages, realmMessages } from "../mail/messages.ts";
import type { MailTransport } from "../mail/transport.ts";
import type { PasswordService } from "../passwords/service.ts";
import { endAllSessionsOfUser, type SessionService } from "../sessions/service.ts";
import { InvalidTokenError } from "../tokens/errors.ts";
import type { TokenService } from "../tokens/service.ts";
import type { User } from "../storage/users.ts";
import { normalizeEmail } from "./email.ts";
import type { Storage } from "../storage/storage.ts";

import { assertChoosablePassword } from "./password-policy.ts";
/** The password policy (`password-policy.ts`), re-exported where the flows always offered it. */
export { assertChoosablePassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from "./password-policy.ts";

/** Event kinds of the account flows (the `user.*` family, in the user's ledger). */
export const ACCOUNT_EVENTS = {
  passwordResetRequested: "user.password_reset_requested",
  passwordReset: "user.password_reset",
  emailVerificationRequested: "user.email_verification_requested",
  emailVerified: "user.email_verified",
  emailChangeRequested: "user.email_change_requested",
  emailChanged: "user.email_changed",
  invited: "user.invited",
  invitationAccepted: "user.invitation_accepted",
  signUpRequested: "user.sign_up_requested",
} as const;

/** What {@link AccountFlows} needs. */
export interface AccountFlowDeps {
  /** Users, tokens consumed, credentials and organizations; the flows' transactions run on it. */
  readonly storage: Storage;
  /** Hashes the passwords users choose (reset, invitation). */
  readonly passwords: PasswordService;
  /** Mints, verifies and consumes the single-use `pwreset+svc`, `everify+svc` and `invite+svc` tokens. */
  readonly tokens: TokenService;
  /** Sessions, ended with the user's refresh tokens on a password reset. */
  readonly sessions: SessionService;
  /** Sends the flows' mails. */
  readonly mail: MailTransport;
  /** Builds the flows' mails (the server's branding; a realm's branding is laid over it). */
  readonly messages: MailMessages;
  /** Records the flows' `user.*` events, inside their transactions. */
  readonly events: SecurityEventWriter;
  /** Stamps the events' `occurredAt`. */
  readonly clock: Clock;
}

/**
 * An invitation as sent. The same shape whether or not the address already had an account, so
 * that an organization admin learns nothing about accounts outside the organization.
 */
export interface CreatedInvitation {
  /** The account the invitation is for. */
  readonly userId: string;
  /** The invited address, as stored on the account. */
  readonly email: string;
  /** The organization joined on acceptance, or null. */
  readonly orgId: string | null;
  /** When the invitation link expires. */
  readonly expiresAt: Date;
}

/** Self sign-up is off for the realm. Code `sign_up_closed`, 403. */
export class SignUpClosedError extends SvcError {
  constructor() {
    super("sign_up_closed", "Accounts here are created by invitation only.", 403);
  }
}

/** The account flows. */
export class AccountFlows {
  readonly #d: AccountFlowDeps;

  /** Wires the flows to their dependencies. */
  constructor(deps: AccountFlowDeps) {
    this.#d = deps;
  }

  /**
   * Mails a reset link (in `locale`, default English) when `email` names an active user of the
   * realm that is not a break-glass account; does nothing otherwise.
   * Callers answer the same way in both cases (and should not await it on the request path).
   */
  async forgotPassword(realmId: string | null, email: string, locale?: MailLocale): Promise<void> {
    const d = this.#d;
    if (realmId === null) return;
    const user = await d.storage.users.findByEmail(realmId, email);
    // A break-glass password changes only by rotation: nothing is sent, and the caller answers alike.
    if (user === null || user.status !== "Active" || user.isBreakGlass) return;
    const stamp = await d.storage.users.credentialStamp(user.id);
    if (stamp === null) return;
    const { token, claims } = await d.tokens.mint("pwreset+svc", {
      realm: user.realmId,
      sub: user.id,
      stamp,
    });
    await d.mail.send(
      (await this.#messagesFor(user.realmId)).passwordReset({
        to: user.email,
        token,
        ttlSeconds: claims.exp - claims.iat,
        locale,
      }),
      { realmId: user.realmId, userId: user.id },
    );
    await this.#emit({
      kind: ACCOUNT_EVENTS.passwordResetRequested,
      realmId: user.realmId,
      userId: user.id,
      data: {},
    });
  }

  /**
   * Sets a new password with a reset token, in one transaction: the token is spent (a second use
   * fails), its credential stamp must still be the user's (then it is rotated), the password
   * replaces every credential of the user, every session ends and every refresh token is
   * revoked. Returns the counts. A break-glass account is refused (403 `break_glass_managed`).
   */
  async resetPassword(
    token: string,
    password: string,
  ): Promise<{ userId: string; sessionsEnded: number; refreshTokensRevoked: number }> {
    const d = this.#d;
    assertChoosablePassword(password);
    const claims = await d.tokens.verify("pwreset+svc", token);
    const user = await this.#activeUser(claims.sub, claims.realm);
    if (user.isBreakGlass) throw new BreakGlassManagedError("password_reset");
    // Hashing is slow: before the transaction, which then holds its locks briefly.
    const hash = await d.passwords.hash(password);
    const ended = await d.storage.transaction(async (tx) => {
      if (!await tx.consumedTokens.consume(claims.jti, new Date(claims.exp * 1000))) {
        throw new InvalidTokenError("consumed");
      }
      // Compare-and-swap: of two links minted under one stamp, the first reset wins.
      if (!await tx.users.rotateCredentialStamp(user.id, claims.stamp)) throw new InvalidTokenError("stale");
      await tx.passwordCredentials.replace(user.id, hash);
      return await endAllSessionsOfUser(tx, user.id, d.clock.now());
    });
    await d.sessions.announceEnded(ended.sessions);
    const result = {
      userId: user.id,
      sessionsEnded: ended.sessions.length,
      refreshTokensRevoked: ended.refreshTokensRevoked,
    };
    await this.#emit({
      kind: ACCOUNT_EVENTS.passwordReset,
      realmId: user.realmId,
      userId: user.id,
      data: { sessionsEnded: result.sessionsEnded, refreshTokensRevoked: result.refreshTokensRevoked },
    });
    return result;
  }

  /** Mails a verification link for the user's current address; false when it is already verified. */
  async requestEmailVerification(userId: string, locale?: MailLocale): Promise<boolean> {
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
      (await this.#messagesFor(user.realmId)).emailVerification({
        to: user.email,
        token,
        ttlSeconds: claims.exp - claims.iat,
        locale,
      }),
      { realmId: user.realmId, userId: user.id },
    );
    await this.#emit({
      kind: ACCOUNT_EVENTS.emailVerificationRequested,
      realmId: user.realmId,
      userId: user.id,
      data: {},
    });
    return true;
  }

  /**
   * Tells the user by mail that an administrator reset sign-in methods of their account
   * (`factors`: how each is named to the user). Nothing is sent to an erased user; false then.
   */
  async notifyFactorsReset(
    userId: string,
    factors: readonly string[],
    locale?: MailLocale,
  ): Promise<boolean> {
    const d = this.#d;
    const user = await d.storage.users.get(userId);
    if (user === null || user.anonymizedAt !== null || factors.length === 0) return false;
    await d.mail.send(
      (await this.#messagesFor(user.realmId)).factorsReset({
        to: user.email,
        resetAt: new Date(d.clock.now()),
        factors,
        locale,
      }),
      { realmId: user.realmId, userId: user.id },
    );
    return true;
  }

  /**
   * An organization administrator's change of `userId`'s address to `email`, pending until the
   * owner of the new address confirms it through a mailed `everify+svc` link (naming the new
   * address and the one it replaces). When `email` already names an account of the realm, its
   * owner gets a notice instead (no link) and nothing else happens: the caller's answer is the
   * same either way, so it never learns whether the address is taken. A break-glass account's
   * email never changes (403 `break_glass_managed`).
   */
  async requestEmailChange(userId: string, email: string, locale?: MailLocale): Promise<void> {
    const d = this.#d;
    const user = await d.storage.users.get(userId);
    if (user === null) throw new NotFoundError("No such user.");
    if (user.isBreakGlass) throw new BreakGlassManagedError("email_change");
    const address = normalizeEmail(email);
    if (address === user.email) return;
    const messages = await this.#messagesFor(user.realmId);
    const owner = await d.storage.users.findByEmail(user.realmId, address);
    if (owner !== null) {
      // Told to the owner of the address, not to the caller; an erased account gets nothing.
      if (owner.anonymizedAt === null) {
        await d.mail.send(messages.emailChangeInUse({ to: owner.email, locale }), {
          realmId: owner.realmId,
          userId: owner.id,
        });
      }
      return;
    }
    const { token, claims } = await d.tokens.mint("everify+svc", {
      realm: user.realmId,
      sub: user.id,
      email: address,
      prev: user.email,
    });
    await d.mail.send(
      messages.emailChange({ to: address, token, ttlSeconds: claims.exp - claims.iat, locale }),
      { realmId: user.realmId, userId: user.id },
    );
    await this.#emit({
      kind: ACCOUNT_EVENTS.emailChangeRequested,
      realmId: user.realmId,
      userId: user.id,
      data: {},
    });
  }

  /**
   * Consumes a verification token and marks the address verified; a pending change's token
   * (`prev`) first replaces the address, if `prev` is still the user's and nobody took the new one.
   */
  async confirmEmailVerification(token: string): Promise<User> {
    const d = this.#d;
    const claims = await d.tokens.consume("everify+svc", token);
    if (claims.prev !== undefined) return await this.#confirmEmailChange(claims.sub, claims.realm, claims);
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
   * Invites `email` into the realm, or into organization `orgId`, as one audited admin
   * mutation (action `user.invite`). Nobody joins an organization here: the organization
   * travels in the `invite+svc` token and the membership is created when the invitation is
   * accepted ({@link acceptInvitation}).
   *
   * - An unknown address gets a user without a credential (the link lets them choose a password).
   * - A known address keeps its account untouched: without a password the link lets them choose
   *   one; with a password it is an invitation to join `orgId`, accepted signed in.
   * - The answer depends only on accounts inside the caller's fence. `realmWide` callers (a
   *   global fence) get ConflictError `user_exists` when the address has a password and there is
   *   nothing to join (`orgId` null). Any caller gets ConflictError `already_member` when the
   *   address already is an active member of `orgId` (inside an org admin's fence). For an org
   *   admin, a new address and any account of another organization answer alike.
   * - Mail goes only to an active account; an invitation for a suspended one answers alike and
   *   sends nothing.
   */
  async invite(input: {
    realmId: string;
    /** Who invites, for the audit entry. */
    actor: AuditActor;
    /** The user named as the inviter in the token and the mail. */
    inviterId: string;
    email: string;
    orgId?: string | null;
    displayName?: string | null;
    /** Whether the caller's fence covers the whole realm. */
    realmWide: boolean;
    /** The mail's language (the inviter's `Accept-Language`; default English). */
    locale?: MailLocale;
  }): Promise<CreatedInvitation> {
    const d = this.#d;
    const orgId = input.orgId?.toLowerCase() ?? null;
    const { value } = await runAdminMutation(
      { storage: d.storage, publisher: d.events },
      input.realmId,
      input.actor,
      async ({ tx, emit }) => {
        let org = null;
        if (orgId !== null) {
          org = await tx.organizations.get(orgId);
          if (org === null || org.realmId !== input.realmId.toLowerCase()) {
            throw new NotFoundError("No such organization.");
          }
        }
        let user = await tx.users.findByEmail(input.realmId, input.email);
        const created = user === null;
        const hasPassword = user !== null && await tx.passwordCredentials.get(user.id) !== null;
        if (user !== null && hasPassword) {
          if (orgId !== null && await tx.organizations.isMember(orgId, user.id)) {
            throw new ConflictError("This user already is a member of the organization.", {
              reason: "already_member",
            });
          }
          if (orgId === null && input.realmWide) {
            throw new ConflictError("A user with this email already exists.", { reason: "user_exists" });
          }
        }
        user ??= await tx.users.create({
          realmId: input.realmId,
          email: input.email,
          displayName: input.displayName ?? null,
          emailVerified: false,
        });
        const mailed = user.status === "Active";
        await emit({
          kind: ACCOUNT_EVENTS.invited,
          occurredAt: d.clock.now(),
          realmId: user.realmId,
          orgId,
          userId: user.id,
          data: { invitedBy: input.inviterId },
        });
        return {
          value: { user, org, hasPassword, mailed },
          audit: {
            action: "user.invite",
            target: user.id,
            orgId,
            after: { email: user.email, orgId, userCreated: created, existingAccount: hasPassword, mailed },
          },
        };
      },
    );
    const { user, org, hasPassword, mailed } = value;
    const { token, claims } = await d.tokens.mint("invite+svc", {
      realm: user.realmId,
      email: user.email,
      org: orgId,
      inv: input.inviterId,
    });
    if (mailed) {
      const inviter = await d.storage.users.get(input.inviterId);
      await d.mail.send(
        (await this.#messagesFor(user.realmId)).invitation({
          to: user.email,
          token,
          ttlSeconds: claims.exp - claims.iat,
          inviterName: inviter?.displayName ?? inviter?.email ?? undefined,
          organizationName: org?.displayName ?? undefined,
          existingAccount: hasPassword,
          locale: input.locale,
        }),
        { realmId: user.realmId, userId: user.id },
      );
    }
    return { userId: user.id, email: user.email, orgId, expiresAt: new Date(claims.exp * 1000) };
  }

  /**
   * Accepts an invitation and joins its organization (if it names one). The token is consumed
   * first (it works once); then, in one transaction:
   *
   * - an invited user without a password chooses one (`password` required): the credential is
   *   created and the address marked verified (the link proved it);
   * - an invited user who already has a password accepts signed in as that user (`caller`, not
   *   under impersonation): `UnauthenticatedError` without a caller, `ForbiddenError` for any
   *   other caller, ConflictError `invitation_accepted` when a `password` is given (an
   *   invitation never replaces a password).
   */
  async acceptInvitation(
    token: string,
    password: string | null | undefined,
    displayName?: string | null,
    caller: { readonly userId: string; readonly impersonated: boolean } | null = null,
  ): Promise<{ userId: string; email: string; realmId: string }> {
    const d = this.#d;
    const preview = await d.tokens.verify("invite+svc", token);
    const user = await d.storage.users.findByEmail(preview.realm, preview.email);
    if (user === null || user.status !== "Active") throw new InvalidTokenError("claims");
    const hasPassword = await d.storage.passwordCredentials.get(user.id) !== null;
    let hash = null;
    if (hasPassword) {
      if (password) {
        throw new ConflictError("This account already has a password; sign in and accept without one.", {
          reason: "invitation_accepted",
        });
      }
      if (caller === null) throw new UnauthenticatedError("Sign in as the invited user to accept.");
      if (caller.userId !== user.id || caller.impersonated) {
        throw new ForbiddenError("Only the invited user may accept this invitation.");
      }
    } else {
      if (!password) throw new ValidationError("Choose a password to accept.", { field: "password" });
      assertChoosablePassword(password);
      hash = await d.passwords.hash(password);
    }
    await d.tokens.consume("invite+svc", token);
    await d.events.transaction(async (tx, emit) => {
      if (hash !== null) {
        if (await tx.passwordCredentials.get(user.id) !== null) {
          throw new ConflictError("This invitation was already accepted; sign in instead.", {
            reason: "invitation_accepted",
          });
        }
        await tx.passwordCredentials.replace(user.id, hash);
        await tx.users.update(user.id, { emailVerified: true, ...(displayName ? { displayName } : {}) });
      }
      await joinInvitedOrganization(tx, user, preview.org);
      await emit({
        kind: ACCOUNT_EVENTS.invitationAccepted,
        occurredAt: d.clock.now(),
        realmId: user.realmId,
        orgId: preview.org,
        userId: user.id,
        data: { invitedBy: preview.inv },
      });
    });
    return { userId: user.id, email: user.email, realmId: user.realmId };
  }

  /**
   * A self sign-up (off unless the realm's `selfSignUp` is on; then callers answer alike whatever
   * happens here, and run it off the request path). An unknown address gets a user without any
   * credential and a link to finish (choose a password or register a passkey: an `invite+svc`
   * token whose inviter is the person themselves, accepted like an invitation); an address whose
   * account has no credential yet (an earlier sign-up or an invitation) gets a fresh link; an
   * account that has a password or a passkey gets, instead, a mail telling its owner that someone
   * tried to sign up. A suspended account gets nothing. Answers what was done, for tests and logs.
   */
  async signUp(
    realmId: string,
    email: string,
    locale?: MailLocale,
  ): Promise<"closed" | "link" | "existing" | "nothing"> {
    const d = this.#d;
    const realm = await d.storage.realms.get(realmId);
    if (realm === null || !realm.selfSignUp) return "closed";
    let user = await d.storage.users.findByEmail(realm.id, email);
    if (user !== null && user.status !== "Active") return "nothing";
    if (user !== null) {
      const hasCredential = await d.storage.passwordCredentials.get(user.id) !== null ||
        (await d.storage.passkeyCredentials.listByUser(user.id)).length > 0;
      if (hasCredential) {
        await d.mail.send(
          (await this.#messagesFor(user.realmId)).signUpExisting({ to: user.email, locale }),
          {
            realmId: user.realmId,
            userId: user.id,
          },
        );
        return "existing";
      }
    } else {
      try {
        user = await d.storage.users.create({
          realmId: realm.id,
          email,
          displayName: null,
          emailVerified: false,
        });
      } catch (error) {
        // A concurrent sign-up of the same address made it first: send that account a link too.
        if (!(error instanceof ConflictError)) throw error;
        user = await d.storage.users.findByEmail(realm.id, email);
        if (user === null || user.status !== "Active") return "nothing";
      }
    }
    const { token, claims } = await d.tokens.mint("invite+svc", {
      realm: user.realmId,
      email: user.email,
      org: null,
      inv: user.id,
    });
    await this.#emit({
      kind: ACCOUNT_EVENTS.signUpRequested,
      realmId: user.realmId,
      userId: user.id,
      data: {},
    });
    await d.mail.send(
      (await this.#messagesFor(user.realmId)).signUp({
        to: user.email,
        token,
        ttlSeconds: claims.exp - claims.iat,
        locale,
      }),
      { realmId: user.realmId, userId: user.id },
    );
    return "link";
  }

  /**
   * What an accept page shows for a valid invitation token: the invited address and the
   * organization it joins (null for a realm-wide invitation). A token that is not a live
   * invitation (bad signature, expired, used, or its user gone or suspended) is `invalid_token`,
   * the same for every cause; nothing is told about any account without a valid token.
   */
  async describeInvitation(
    token: string,
  ): Promise<{ email: string; organization: { name: string; displayName: string } | null }> {
    const d = this.#d;
    const claims = await d.tokens.verify("invite+svc", token);
    const user = await d.storage.users.findByEmail(claims.realm, claims.email);
    if (user === null || user.status !== "Active") throw new InvalidTokenError("claims");
    const org = claims.org ? await d.storage.organizations.get(claims.org) : null;
    return {
      email: user.email,
      organization: org === null || org.realmId !== user.realmId
        ? null
        : { name: org.name, displayName: org.displayName },
    };
  }

  /**
   * The invited user of a live invitation that may be accepted with a passkey instead of a
   * password: the user has no password yet and the link was not used. Anything else is the
   * same `invalid_token` (or `invitation_accepted` for an account that has a password: it
   * accepts signed in, see {@link acceptInvitation}).
   */
  async invitedForPasskey(token: string): Promise<User> {
    const d = this.#d;
    const claims = await d.tokens.verify("invite+svc", token);
    if (await d.storage.consumedTokens.isConsumed(claims.jti)) throw new InvalidTokenError("consumed");
    const user = await d.storage.users.findByEmail(claims.realm, claims.email);
    if (user === null || user.status !== "Active") throw new InvalidTokenError("claims");
    if (await d.storage.passwordCredentials.get(user.id) !== null) {
      throw new ConflictError("This account already has a password; sign in and accept without one.", {
        reason: "invitation_accepted",
      });
    }
    return user;
  }

  /**
   * Accepts an invitation with a passkey instead of a password (passkey-only accounts are
   * allowed): `register` completes the WebAuthn registration for the invited user and answers
   * how to undo it. The token is consumed after the registration (it works once, under
   * concurrency too): when consuming or the acceptance fails, the registration is undone, so a
   * losing concurrent attempt leaves no credential behind. Then, in one transaction, the address
   * is marked verified (the link proved it), the display name set and the organization joined.
   */
  async acceptInvitationWithPasskey(
    token: string,
    displayName: string | null | undefined,
    register: (user: User) => Promise<{ undo(): Promise<void> }>,
  ): Promise<{ userId: string; email: string; realmId: string }> {
    const d = this.#d;
    const user = await this.invitedForPasskey(token);
    const registered = await register(user);
    try {
      const claims = await d.tokens.consume("invite+svc", token);
      await d.events.transaction(async (tx, emit) => {
        if (await tx.passwordCredentials.get(user.id) !== null) {
          throw new ConflictError("This invitation was already accepted; sign in instead.", {
            reason: "invitation_accepted",
          });
        }
        await tx.users.update(user.id, { emailVerified: true, ...(displayName ? { displayName } : {}) });
        await joinInvitedOrganization(tx, user, claims.org);
        await emit({
          kind: ACCOUNT_EVENTS.invitationAccepted,
          occurredAt: d.clock.now(),
          realmId: user.realmId,
          orgId: claims.org,
          userId: user.id,
          data: { invitedBy: claims.inv, credential: "passkey" },
        });
      });
    } catch (error) {
      await registered.undo();
      throw error;
    }
    return { userId: user.id, email: user.email, realmId: user.realmId };
  }

  /**
   * The mail builders for a realm: its branding over the server's, and links that name the realm
   * (so the hosted pages show its branding and sign in to it). The default realm's links name none.
   */
  /** Applies a confirmed email change (the token is spent already). */
  async #confirmEmailChange(
    userId: string,
    realmId: string,
    claims: { readonly email: string; readonly prev?: string },
  ): Promise<User> {
    const d = this.#d;
    const user = await d.storage.users.get(userId);
    if (
      user === null || user.realmId !== realmId || user.isBreakGlass || user.anonymizedAt !== null ||
      user.email !== normalizeEmail(claims.prev ?? "")
    ) {
      throw new InvalidTokenError("claims");
    }
    let updated: User;
    try {
      // Against the version read: of two changes confirmed at once, one wins.
      updated = await d.storage.users.update(user.id, {
        email: normalizeEmail(claims.email),
        emailVerified: true,
      }, { expectedVersion: user.version });
    } catch (error) {
      // The address was taken since, or the user changed meanwhile: the link is dead.
      if (error instanceof ConflictError) throw new InvalidTokenError("claims");
      throw error;
    }
    await this.#emit({
      kind: ACCOUNT_EVENTS.emailChanged,
      realmId: user.realmId,
      userId: user.id,
      data: {},
    });
    return updated;
  }

  async #messagesFor(realmId: string): Promise<MailMessages> {
    return realmMessages(this.#d.messages, await this.#d.storage.realms.get(realmId));
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

/** Makes the invited user a member of the organization the invitation names (once), in `tx`. */
async function joinInvitedOrganization(tx: Storage, user: User, orgId: string | null): Promise<void> {
  if (orgId === null) return;
  const org = await tx.organizations.get(orgId);
  if (org === null || org.realmId !== user.realmId) throw new InvalidTokenError("claims");
  if (!await tx.organizations.isMember(org.id, user.id)) await tx.organizations.addMember(org.id, user.id);
}
