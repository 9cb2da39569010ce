/**
 * Suspending a user (issue 19 items 2 and 15): in one audited admin mutation, the user's status
 * becomes `Suspended`, every session ends and every refresh token and API key of the user is
 * revoked, and `user.suspended` is recorded. After commit, the ended sessions are announced (their
 * access tokens stop on every instance) and the user's authorization snapshots are evicted.
 * Reactivating sets the status back to `Active` (`user.reactivated`); revoked API keys stay
 * revoked. A repeat that changes nothing (suspending a suspended user with nothing left to end or
 * revoke, reactivating an active one) writes no audit entry and records no event. The admin API's suspend and reactivate routes call these; so may a CLI command.
 *
 * @module
 */
import type { Clock } from "../clock.ts";
import { NotFoundError } from "../errors.ts";
import type { EventPublisher } from "../events/publisher.ts";
import { type AuditActor, runAdminMutation } from "../audit/mutation.ts";
import type { EndedSession, SessionEndAnnouncer } from "../sessions/ended.ts";
import { endAllSessionsOfUser } from "../sessions/service.ts";
import type { User } from "../storage/users.ts";
import type { Storage } from "../storage/storage.ts";

/** The event recorded when a user is suspended (in the user's security ledger). */
export const USER_SUSPENDED_EVENT = "user.suspended";
/** The event recorded when a suspended user is reactivated (in the user's security ledger). */
export const USER_REACTIVATED_EVENT = "user.reactivated";

/** Options of {@link suspendUser} and {@link reactivateUser}. */
export interface StatusChangeOptions {
  /** Why (kept in the audit entry, never in events). */
  readonly reason?: string;
  /**
   * Checks inside the transaction that the actor may change this user (throwing refuses); the
   * admin API's fence on the target. Runs after the user was found in the realm.
   */
  readonly authorize?: (tx: Storage, user: User) => Promise<void>;
}

/** What suspending a user changed. */
export interface SuspensionReport {
  /** The suspended user's id. */
  readonly userId: string;
  /**
   * The user was suspended already (sessions and keys are still swept; when none were left, nothing
   * changed: no audit entry, no event).
   */
  readonly wasSuspended: boolean;
  /** How many of the user's sessions were ended. */
  readonly sessionsEnded: number;
  /** How many of the user's refresh tokens were revoked. */
  readonly refreshTokensRevoked: number;
  /** How many of the user's API keys were revoked. */
  readonly apiKeysRevoked: number;
}

/** What {@link suspendUser} needs. */
export interface SuspensionDeps {
  /** Holds the user, sessions, refresh tokens and API keys; the mutation's transaction runs on it. */
  readonly storage: Storage;
  /** Stamps the sessions' end and the events' `occurredAt`. */
  readonly clock: Clock;
  /**
   * Records `user.suspended` / `user.reactivated` in the transaction and announces them after commit; without
   * it no event is emitted.
   */
  readonly publisher?: EventPublisher;
  /** Told of the ended sessions after commit (the auth stack's ended-session set). */
  readonly sessions?: SessionEndAnnouncer;
  /** Evicts the user's cached authorization snapshots (their status changed). */
  readonly snapshots?: { invalidateUser(userId: string): Promise<void> };
}

/**
 * Suspends `userId` of `realmId` on behalf of `actor` (see the module documentation).
 * NotFoundError when the user does not exist or belongs to another realm.
 *
 * @example
 * ```ts
 * import {
 *   createSqlStorage,
 *   cryptoRandom as random,
 *   EventHub,
 *   EventPublisher,
 *   openDatabase,
 *   suspendUser,
 *   systemClock as clock,
 * } from "@svc/svc";
 *
 * const database = await openDatabase({ kind: "embedded" }); // PGlite in memory
 * await database.ensureSchema();
 * const storage = createSqlStorage(database, { clock, random });
 * const realm = await storage.realms.create({ name: "default", displayName: "Default", isDefault: true });
 * const admin = await storage.users.create({ realmId: realm.id, email: "admin@example.com" });
 * const user = await storage.users.create({ realmId: realm.id, email: "ada@example.com" });
 *
 * const publisher = new EventPublisher({ storage, sink: new EventHub(), random });
 * // A server also passes `sessions: auth.endedSessions` and `snapshots` (its SubjectSnapshots).
 * const report = await suspendUser({ storage, clock, publisher }, realm.id, user.id, {
 *   id: admin.id,
 *   kind: "User",
 * }, { reason: "chargeback" });
 * report.wasSuspended; // → false
 * (await storage.users.get(user.id))?.status; // → "Suspended"
 * await database.close();
 * ```
 */
export async function suspendUser(
  deps: SuspensionDeps,
  realmId: string,
  userId: string,
  actor: AuditActor,
  options: StatusChangeOptions = {},
): Promise<SuspensionReport> {
  let ended: EndedSession[] = [];
  const { value } = await runAdminMutation(deps, realmId, actor, async ({ tx, emit }) => {
    const user = await userOfRealm(tx, realmId, userId);
    await options.authorize?.(tx, user);
    const wasSuspended = user.status === "Suspended";
    if (!wasSuspended) await tx.users.update(user.id, { status: "Suspended" });
    const sessions = await endAllSessionsOfUser(tx, user.id, deps.clock.now());
    ended = sessions.sessions;
    const report: SuspensionReport = {
      userId: user.id,
      wasSuspended,
      sessionsEnded: sessions.sessions.length,
      refreshTokensRevoked: sessions.refreshTokensRevoked,
      apiKeysRevoked: await tx.apiKeys.revokeAllForOwner("User", user.id),
    };
    // Suspended already and nothing left to sweep: a repeat, which changes nothing.
    const swept = report.sessionsEnded + report.refreshTokensRevoked + report.apiKeysRevoked;
    if (wasSuspended && swept === 0) return { value: report, audit: null };
    await emit({
      kind: USER_SUSPENDED_EVENT,
      occurredAt: deps.clock.now(),
      realmId: user.realmId,
      orgId: null,
      userId: user.id,
      data: { sessionsEnded: report.sessionsEnded, apiKeysRevoked: report.apiKeysRevoked },
    });
    return {
      value: report,
      audit: {
        action: "user.suspend",
        target: user.id,
        before: { status: user.status },
        after: { status: "Suspended", ...reasonOf(options) },
      },
    };
  });
  await deps.sessions?.announce(ended);
  await deps.snapshots?.invalidateUser(value.userId);
  return value;
}

/**
 * Reactivates `userId` of `realmId` on behalf of `actor`: status `Active`, `user.reactivated`,
 * one audit entry (`user.reactivate`); API keys revoked by the suspension stay revoked. Returns
 * the user as it now is. NotFoundError when the user does not exist, belongs to another realm
 * or was erased.
 */
export async function reactivateUser(
  deps: SuspensionDeps,
  realmId: string,
  userId: string,
  actor: AuditActor,
  options: StatusChangeOptions = {},
): Promise<User> {
  const { value } = await runAdminMutation(deps, realmId, actor, async ({ tx, emit }) => {
    const user = await userOfRealm(tx, realmId, userId);
    if (user.anonymizedAt !== null) throw new NotFoundError("No such user.");
    await options.authorize?.(tx, user);
    // Active already: a repeat, which changes nothing.
    if (user.status === "Active") return { value: user, audit: null };
    const updated = await tx.users.update(user.id, { status: "Active" });
    await emit({
      kind: USER_REACTIVATED_EVENT,
      occurredAt: deps.clock.now(),
      realmId: user.realmId,
      orgId: null,
      userId: user.id,
      data: { wasSuspended: user.status === "Suspended" },
    });
    return {
      value: updated,
      audit: {
        action: "user.reactivate",
        target: user.id,
        before: { status: user.status },
        after: { status: "Active", ...reasonOf(options) },
      },
    };
  });
  await deps.snapshots?.invalidateUser(value.id);
  return value;
}

async function userOfRealm(tx: Storage, realmId: string, userId: string): Promise<User> {
  const user = await tx.users.get(userId);
  if (user === null || user.realmId !== realmId.toLowerCase()) throw new NotFoundError("No such user.");
  return user;
}

function reasonOf(options: StatusChangeOptions): { reason?: string } {
  return options.reason === undefined ? {} : { reason: options.reason };
}
