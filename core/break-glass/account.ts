/**
 * Break-glass accounts (spec 3, 4.6): one per realm, an emergency administrator that signs in
 * through the normal password endpoint (no MFA step-up, no risk block, still the abuse gate).
 *
 * - {@link createBreakGlassAccount} (the CLI): the user (`isBreakGlass`, holding the realm-level
 *   `svc-admin` role) with a generated password, shown once to the operator;
 * - {@link rotateBreakGlassPassword} (the CLI or `POST /svc-admin/break-glass/rotate`): a new
 *   generated password, every credential of the account ended (sessions and refresh tokens, API
 *   keys, factors: nothing of it outlives a rotation), rotation no longer required;
 * - {@link drillBreakGlass} (`POST /svc-admin/break-glass/drill`): proves the credential works by
 *   verifying the presented password, without creating a session, and records the drill.
 *
 * Each is an admin mutation with its audit chain entry (never the password) and its event, in one
 * transaction. Passwords are generated from the injected random source: 24 bytes, base64url.
 *
 * @module
 */
import type { AbuseGate } from "../abuse/gate.ts";
import { LoginBlockedError } from "../login/errors.ts";
import { type AuditActor, runAdminMutation, type TransactionalEvents } from "../audit/mutation.ts";
import { ensureSvcAdminRole, SVC_ADMIN_ROLE_KEY } from "../accounts/bootstrap.ts";
import { removeFactors, RESETTABLE_FACTORS } from "../accounts/factor-reset.ts";
import type { Clock } from "../clock.ts";
import { ConflictError, SvcError } from "../errors.ts";
import type { PasswordService } from "../passwords/service.ts";
import { type RandomSource, randomToken } from "../random.ts";
import type { EndedSession } from "../sessions/ended.ts";
import { endAllSessionsOfUser } from "../sessions/service.ts";
import type { BreakGlassAccount } from "../storage/break-glass.ts";
import type { Storage } from "../storage/storage.ts";
import { BREAK_GLASS_EVENTS } from "./kinds.ts";

export { BREAK_GLASS_EVENTS, MFA_LEVEL_BREAK_GLASS } from "./kinds.ts";

/** The email of a break-glass account unless the operator names one (unique per realm, never mailed). */
export const DEFAULT_BREAK_GLASS_EMAIL = "break-glass@break-glass.invalid";
/** Random bytes of a generated break-glass password (32 base64url characters). */
const PASSWORD_BYTES = 24;

/** The realm has no break-glass account (409 `break_glass_account_missing`). */
export class BreakGlassAccountMissingError extends SvcError {
  constructor() {
    super(
      "break_glass_account_missing",
      "The realm has no break-glass account; create it with the CLI.",
      409,
    );
  }
}

/** The realm has a break-glass account already (409 `break_glass_account_exists`). */
export class BreakGlassAccountExistsError extends SvcError {
  constructor() {
    super(
      "break_glass_account_exists",
      "The realm already has a break-glass account; rotate its password.",
      409,
    );
  }
}

/** A drill presented a password that does not verify (422 `break_glass_drill_failed`). */
export class BreakGlassDrillFailedError extends SvcError {
  constructor() {
    super("break_glass_drill_failed", "The break-glass password did not verify; no drill was recorded.", 422);
  }
}

/** What break-glass operations need. */
export interface BreakGlassDeps {
  readonly storage: Storage;
  readonly passwords: PasswordService;
  readonly random: RandomSource;
  readonly clock: Clock;
  /** Records events in the mutation's transaction (an `EventPublisher`). */
  readonly events?: TransactionalEvents;
  /**
   * The login abuse gate: a drill is a password check of the break-glass account, so it takes
   * the same lockout slot as a sign-in of that account (a wrong drill password is a failed
   * attempt); without it drills are not throttled (CLI and tests).
   */
  readonly abuse?: AbuseGate;
}

/** A generated break-glass password. */
export function generateBreakGlassPassword(random: RandomSource): string {
  return randomToken(random, PASSWORD_BYTES);
}

/** Creates the realm's break-glass account; the password is returned once and never stored in clear. */
export async function createBreakGlassAccount(
  deps: BreakGlassDeps,
  input: { readonly realmId: string; readonly email?: string; readonly actor: AuditActor },
): Promise<{ account: BreakGlassAccount; password: string }> {
  const { storage, realmId } = { storage: deps.storage, realmId: input.realmId };
  if (await storage.breakGlass.account(realmId) !== null) throw new BreakGlassAccountExistsError();
  const { role } = await ensureSvcAdminRole(storage, realmId, input.actor);
  const password = generateBreakGlassPassword(deps.random);
  const hash = await deps.passwords.hash(password);
  try {
    const { value: account } = await runAdminMutation(
      { storage, publisher: deps.events },
      realmId,
      input.actor,
      async ({ tx, emit }) => {
        const user = await tx.users.create({
          realmId,
          email: input.email ?? DEFAULT_BREAK_GLASS_EMAIL,
          displayName: "Break-glass administrator",
          emailVerified: true,
          isBreakGlass: true,
        });
        await tx.passwordCredentials.replace(user.id, hash);
        await tx.roles.assign({ roleId: role.id, principalKind: "User", principalId: user.id, orgId: null });
        await tx.breakGlass.recordRotation(realmId);
        await emit({
          kind: BREAK_GLASS_EVENTS.created,
          occurredAt: deps.clock.now(),
          realmId,
          userId: user.id,
          data: { actorId: input.actor.id, actorKind: input.actor.kind },
        });
        const account: BreakGlassAccount = {
          realmId,
          userId: user.id,
          email: user.email,
          createdAt: user.createdAt,
        };
        return {
          value: account,
          audit: {
            action: "breakglass.account.create",
            target: user.id,
            after: { email: user.email, isBreakGlass: true, roleKey: SVC_ADMIN_ROLE_KEY },
          },
        };
      },
    );
    return { account, password };
  } catch (error) {
    // The partial unique index: another process created it in the meantime.
    if (error instanceof ConflictError && await storage.breakGlass.account(realmId) !== null) {
      throw new BreakGlassAccountExistsError();
    }
    throw error;
  }
}

/**
 * Rotates the break-glass password: a new generated password (returned once), every credential
 * of the account ended (its sessions and refresh tokens, announce `ended` after this returns; its
 * API keys revoked; any factor removed), rotation no longer required.
 */
export async function rotateBreakGlassPassword(
  deps: BreakGlassDeps,
  input: { readonly realmId: string; readonly actor: AuditActor },
): Promise<{ account: BreakGlassAccount; password: string; ended: EndedSession[] }> {
  const account = await deps.storage.breakGlass.account(input.realmId);
  if (account === null) throw new BreakGlassAccountMissingError();
  const password = generateBreakGlassPassword(deps.random);
  const hash = await deps.passwords.hash(password);
  const { value } = await runAdminMutation(
    { storage: deps.storage, publisher: deps.events },
    input.realmId,
    input.actor,
    async ({ tx, emit }) => {
      const before = await tx.breakGlass.get(input.realmId);
      await tx.passwordCredentials.replace(account.userId, hash);
      // Every credential of the account ends: sessions and refresh tokens, API keys, factors.
      const ended = await endAllSessionsOfUser(tx, account.userId, deps.clock.now());
      const apiKeysRevoked = await tx.apiKeys.revokeAllForOwner("User", account.userId);
      const removed = await removeFactors(tx, account.userId, RESETTABLE_FACTORS);
      const factorsRemoved = RESETTABLE_FACTORS.filter((factor) =>
        factor === "totp"
          ? removed.totp
          : factor === "email_otp"
          ? removed.emailOtp
          : factor === "passkeys"
          ? removed.passkeys > 0
          : removed.recoveryCodes > 0
      );
      const after = await tx.breakGlass.recordRotation(input.realmId);
      const counts = {
        sessionsEnded: ended.sessions.length,
        refreshTokensRevoked: ended.refreshTokensRevoked,
        apiKeysRevoked,
        factorsRemoved,
      };
      await emit({
        kind: BREAK_GLASS_EVENTS.rotated,
        occurredAt: deps.clock.now(),
        realmId: input.realmId,
        userId: account.userId,
        data: { actorId: input.actor.id, actorKind: input.actor.kind, ...counts },
      });
      return {
        value: ended.sessions,
        audit: {
          action: "breakglass.rotate",
          target: account.userId,
          before: { rotationRequired: before?.rotationRequired ?? false },
          after: { rotationRequired: after.rotationRequired, ...counts },
        },
      };
    },
  );
  return { account, password, ended: value };
}

/**
 * A drill: the presented password must verify against the account's credential (no session is
 * created); then LastDrillAt is recorded. A wrong password records nothing.
 */
export async function drillBreakGlass(
  deps: BreakGlassDeps,
  input: {
    readonly realmId: string;
    readonly password: string;
    readonly actor: AuditActor;
    /** The caller's address, for the abuse gate. */
    readonly ip?: string | null;
  },
) {
  const account = await deps.storage.breakGlass.account(input.realmId);
  if (account === null) throw new BreakGlassAccountMissingError();
  // The account's limits (shared with its sign-ins: per address, reset by a rotation) bound
  // password guesses through drills.
  const user = await deps.storage.users.get(account.userId);
  const attempt = {
    ip: input.ip ?? "",
    identifier: user?.email ?? account.userId,
    realmId: input.realmId,
    breakGlassStamp: await deps.storage.users.credentialStamp(account.userId),
  };
  const decision = deps.abuse ? await deps.abuse.check(attempt) : null;
  if (decision !== null && decision.outcome !== "Allowed") {
    throw new LoginBlockedError(decision.retryAfterSeconds);
  }
  const credential = await deps.storage.passwordCredentials.get(account.userId);
  const valid = credential === null
    ? await deps.passwords.verifyAgainstDummy(input.password)
    : (await deps.passwords.verify(credential, input.password)).valid;
  if (!valid) throw new BreakGlassDrillFailedError(); // the lockout slot stays: a failed attempt
  if (decision !== null) await deps.abuse!.release(attempt, decision);
  const { value } = await runAdminMutation(
    { storage: deps.storage, publisher: deps.events },
    input.realmId,
    input.actor,
    async ({ tx, emit }) => {
      const before = await tx.breakGlass.get(input.realmId);
      const state = await tx.breakGlass.recordDrill(input.realmId);
      await emit({
        kind: BREAK_GLASS_EVENTS.drill,
        occurredAt: deps.clock.now(),
        realmId: input.realmId,
        userId: account.userId,
        data: { actorId: input.actor.id, actorKind: input.actor.kind },
      });
      return {
        value: state,
        audit: {
          action: "breakglass.drill",
          target: account.userId,
          before: { lastDrillAt: before?.lastDrillAt?.toISOString() ?? null },
          after: { lastDrillAt: state.lastDrillAt?.toISOString() ?? null },
        },
      };
    },
  );
  return value;
}
