/**
 * Sessions and the tokens issued on them (spec 3, 5.4). A session is realm-level and
 * app-agnostic, with an idle and an absolute timeout; signing in creates one and starts a
 * refresh family on it. Refreshing rotates the presented token (a replay revokes the whole
 * family, ends its session and emits `token.refresh_reuse_detected`, before anything else about
 * the request is looked at), moves the session's idle expiry forward and mints a new access
 * token. Switching organization mints a token for another organization of which the user is a
 * member, without re-authentication, on a live session of an active user.
 *
 * Every way a session ends (logout, remote logout, logout-all, a revoked family, and through
 * {@link endAllSessionsOfUser}: password reset, suspension, erasure) is announced to the
 * {@link SessionEndAnnouncer} after commit, so that its access tokens stop on every instance.
 *
 * @module
 */
import { BREAK_GLASS_EVENTS, MFA_LEVEL_BREAK_GLASS } from "../break-glass/kinds.ts";
import type { Clock } from "../clock.ts";
import { ForbiddenError, NotFoundError } from "../errors.ts";
import type { EventSink } from "../events/sink.ts";
import { type RandomSource, randomUuid } from "../random.ts";
import { DpopProofError } from "../dpop/proof.ts";
import { InvalidRefreshTokenError, RefreshGuardError } from "../tokens/errors.ts";
import { openSuccessor, sealSuccessor } from "../tokens/grace.ts";
import { hashRefreshToken, isRefreshTokenShape, newRefreshToken } from "../tokens/refresh.ts";
import type { TokenService } from "../tokens/service.ts";
import type { AccessTokenClaims, ActorClaim } from "../tokens/types.ts";
import type { EndedSession, SessionEndAnnouncer, SessionEndListener } from "./ended.ts";
import type { RefreshGrantGuard, RefreshTokenRecord } from "../storage/refresh-tokens.ts";
import type { SessionRecord } from "../storage/sessions.ts";
import type { Storage } from "../storage/storage.ts";

/** The event emitted when a used refresh token is presented again. */
export const REFRESH_REUSE_EVENT = "token.refresh_reuse_detected";

/** The token response of sign-in, refresh and organization switch (bearer transport). */
export interface TokenResponse {
  /** The `at+svc` access token. */
  readonly accessToken: string;
  /** The `srt_…` refresh token (single use: refreshing rotates it). */
  readonly refreshToken: string;
  /** `Bearer`, or `DPoP` for a DPoP-bound access token. */
  readonly tokenType: "Bearer" | "DPoP";
  /** Seconds until the access token expires. */
  readonly expiresIn: number;
}

/** An access token alone (organization switch without a refresh token). */
export interface AccessTokenResponse {
  /** The `at+svc` access token. */
  readonly accessToken: string;
  /** `Bearer`, or `DPoP` for a DPoP-bound access token. */
  readonly tokenType: "Bearer" | "DPoP";
  /** Seconds until the access token expires. */
  readonly expiresIn: number;
}

/** Tokens issued on a session. */
export interface IssuedTokens {
  /** The session the tokens belong to. */
  readonly session: SessionRecord;
  /** The answer for the client. */
  readonly tokens: TokenResponse;
  /** The access token's claims. */
  readonly access: AccessTokenClaims;
  /**
   * With a guard (`refresh`'s `guard` option), when the token rotated: the guard's companion row
   * and its event as recorded by the rotation's statement. Absent when the grace window
   * answered a rotated token's successor again (nothing was recorded).
   */
  readonly guarded?: {
    /** The companion row, or null without a companion table. */
    readonly companion: Readonly<Record<string, unknown>> | null;
    /** The event's data as recorded and the webhook deliveries queued, or null without an event. */
    readonly event: { readonly data: Readonly<Record<string, unknown>>; readonly queued: number } | null;
  };
}

/** A session opened by {@link SessionService.openSession}. */
export interface OpenedSession {
  /** The new session. */
  readonly session: SessionRecord;
  /** The access token answer. */
  readonly response: AccessTokenResponse;
  /** The access token's claims. */
  readonly claims: AccessTokenClaims;
  /** Null when no refresh token was asked for. */
  readonly refreshToken: string | null;
  /** The refresh family, or null. */
  readonly familyId: string | null;
}

/** A session {@link SessionService.createSession} stored, whose access token is not minted yet. */
export interface CreatedSession {
  /** The new session. */
  readonly session: SessionRecord;
  /** The organization the tokens act in, or null. */
  readonly orgId: string | null;
  /** The access token's audience. */
  readonly audience: string;
  /** The impersonation the session carries, or null. */
  readonly impersonation: NonNullable<SignInInput["impersonation"]> | null;
  /** Null when no refresh token was asked for. */
  readonly refreshToken: string | null;
  /** The refresh family, or null. */
  readonly familyId: string | null;
  /** The DPoP key thumbprint the access token is bound to (`cnf.jkt`), or null. */
  readonly accessJkt?: string | null;
}

/** What signing in records. */
export interface SignInInput {
  /** The realm the user signs in to. */
  readonly realmId: string;
  /** The user signing in. */
  readonly userId: string;
  /** The MFA level reached (`PhishingResistant` after a passkey login). */
  readonly mfa: string;
  /** The organization to act in (the user must be a member), or none. */
  readonly orgId?: string | null;
  /** The app the tokens are for (`aud`); default: svc itself (the issuer). */
  readonly audience?: string;
  /** The client address, recorded on the session. */
  readonly ipAddress?: string | null;
  /** The client's device (from its User-Agent), recorded on the session. */
  readonly deviceDescription?: string | null;
  /** An impersonation session: its tokens carry `act` and never outlive `expiresAt`. */
  readonly impersonation?: {
    readonly actorId: string;
    readonly impersonationId: string;
    readonly expiresAt: Date;
  };
  /**
   * A DPoP proof's key (RFC 9449): the access tokens carry `cnf.jkt`; with `bindRefresh` the
   * session's refresh tokens work only with a proof of that key (public clients, svc's own).
   */
  readonly dpop?: { readonly jkt: string; readonly bindRefresh: boolean };
}

/** The caller of an organization switch (from its access token). */
export interface SwitchingCaller {
  /** The caller's user id. */
  readonly userId: string;
  /** The caller's realm. */
  readonly realmId: string;
  /** The caller's session (`sid`), or null for a token without one. */
  readonly sessionId: string | null;
}

/** What a {@link SessionService} is built from. */
export interface SessionServiceOptions {
  /** The stores. */
  storage: Storage;
  /** Mints the access tokens. */
  tokens: TokenService;
  /** Where sign-in, refresh-reuse and logout events go. */
  events: EventSink;
  /** The source of the current time. */
  clock: Clock;
  /** The source of random bytes (refresh tokens). */
  random: RandomSource;
  /** A session unused this long ends; each refresh moves it forward. */
  idleTimeoutMs: number;
  /** A session ends this long after sign-in, used or not. */
  absoluteTimeoutMs: number;
  /** Lifetime of each refresh token. */
  refreshTokenTtlMs: number;
  /**
   * svc's own grace window (tokens whose audience is the issuer) in seconds; default 0 (off).
   * See {@link SessionService.refresh}.
   */
  refreshGraceSeconds?: number;
  /** Told of every session that ends (after commit); without one, ends are not announced. */
  ended?: SessionEndAnnouncer;
}

/** What {@link endAllSessionsOfUser} ended. */
export interface EndedUserSessions {
  readonly sessions: EndedSession[];
  readonly refreshTokensRevoked: number;
}

/**
 * Ends every session of the user and revokes all their refresh tokens, inside the caller's
 * transaction `tx` (password reset, suspension, erasure). Announce `sessions` after commit.
 */
export async function endAllSessionsOfUser(
  tx: Storage,
  userId: string,
  now: number,
): Promise<EndedUserSessions> {
  const ids = await tx.sessions.revokeAllForUser(userId);
  const refreshTokensRevoked = await tx.refreshTokens.revokeAllForUser(userId);
  return { sessions: ids.map((id) => ({ id, endedAt: now })), refreshTokensRevoked };
}

/**
 * Sign-in, refresh, organization switch, session listing and logout.
 *
 * @example
 * ```ts
 * import {
 *   createAuthStack,
 *   createSqlStorage,
 *   cryptoRandom as random,
 *   loadConfig,
 *   nullEventSink as events,
 *   openDatabase,
 *   systemClock as clock,
 * } from "@svc/svc";
 *
 * const database = await openDatabase({ kind: "embedded" }); // PGlite in memory
 * await database.ensureSchema();
 * const storage = createSqlStorage(database, { clock, random });
 * const realm = await storage.realms.create({ name: "default", displayName: "Default", isDefault: true });
 * const user = await storage.users.create({ realmId: realm.id, email: "ada@example.com" });
 * const { config } = loadConfig({ env: {} });
 * const { sessions } = createAuthStack({ config, storage, clock, random, events });
 *
 * const { tokens } = await sessions.signIn({ realmId: realm.id, userId: user.id, mfa: "Password" });
 * const next = await sessions.refresh(tokens.refreshToken); // rotated; the old one is now used
 * next.session.id; // the same session
 * await database.close();
 * ```
 */
export class SessionService {
  readonly #o: SessionServiceOptions;

  /** The service over its stores, token service and timeouts. */
  constructor(options: SessionServiceOptions) {
    this.#o = options;
  }

  /** Creates a session and issues its first access and refresh tokens. */
  async signIn(input: SignInInput): Promise<IssuedTokens> {
    const opened = await this.openSession(input, { refresh: true });
    return {
      session: opened.session,
      tokens: { ...opened.response, refreshToken: opened.refreshToken! },
      access: opened.claims,
    };
  }

  /**
   * Creates a session and issues its access token, and a refresh token starting a new family
   * only with `refresh` (an OIDC grant without `offline_access` gets none).
   */
  async openSession(input: SignInInput, options: { readonly refresh: boolean }): Promise<OpenedSession> {
    return await this.issueAccess(await this.createSession(this.#o.storage, input, options));
  }

  /**
   * The stored half of {@link openSession}: creates the session (and with `refresh` its refresh
   * family) through `storage`, for example a transaction's, so that it commits or rolls back with
   * the caller's other changes. It uses no other connection. Mint the access token with
   * {@link issueAccess} after the commit.
   */
  async createSession(
    storage: Storage,
    input: SignInInput,
    options: { readonly refresh: boolean },
  ): Promise<CreatedSession> {
    const { random } = this.#o;
    const orgId = input.orgId ?? null;
    if (orgId !== null && !await storage.organizations.isMember(orgId, input.userId)) {
      throw new ForbiddenError("You are not a member of this organization.");
    }
    const newSession = {
      realmId: input.realmId,
      userId: input.userId,
      mfa: input.mfa,
      ipAddress: input.ipAddress ?? null,
      deviceDescription: input.deviceDescription ?? null,
      impersonationId: input.impersonation?.impersonationId ?? null,
      idleTimeoutMs: this.#o.idleTimeoutMs,
      absoluteTimeoutMs: this.#o.absoluteTimeoutMs,
    };
    const audience = input.audience ?? this.#o.tokens.issuer;
    let refreshToken: string | null = null;
    let familyId: string | null = null;
    let session: SessionRecord;
    if (options.refresh) {
      // The session and its first refresh token: one statement (issue 29).
      const refresh = newRefreshToken(random);
      familyId = randomUuid(random);
      session = await storage.sessions.createWithRefreshToken(newSession, {
        tokenHash: refresh.hash,
        familyId,
        orgId,
        audience,
        ttlMs: this.#o.refreshTokenTtlMs,
      });
      refreshToken = refresh.token;
      if (input.dpop?.bindRefresh) await storage.dpop.bindSession(session.id, input.dpop.jkt);
    } else {
      session = await storage.sessions.create(newSession);
    }
    return {
      session,
      orgId,
      audience,
      impersonation: input.impersonation ?? null,
      refreshToken,
      familyId,
      accessJkt: input.dpop?.jkt ?? null,
    };
  }

  /** Mints the access token of a session {@link createSession} created. */
  async issueAccess(created: CreatedSession): Promise<OpenedSession> {
    const { session, orgId, audience, impersonation, refreshToken, familyId } = created;
    const act = impersonation !== null
      ? { sub: impersonation.actorId, imp: impersonation.impersonationId }
      : undefined;
    const access = await this.#mintAccess(
      session,
      orgId,
      audience,
      act,
      impersonation?.expiresAt,
      created.accessJkt ?? undefined,
    );
    return { session, response: access.response, claims: access.claims, refreshToken, familyId };
  }

  /**
   * Rotates a refresh token and issues new tokens; with `orgId` the new tokens (and the rest
   * of the family) act in that organization (`null`: none), which the user must belong to.
   * Every failure is `InvalidRefreshTokenError`; a replay of a used token first revokes the
   * whole family and emits `token.refresh_reuse_detected`.
   *
   * The grace window: `graceSeconds` (an OIDC client's, whose audience the caller checked), or
   * for tokens of svc itself the service's `refreshGraceSeconds`. Under a window the successor is
   * sealed on the rotated token (`core/tokens/grace.ts`); the rotated token presented again
   * within that many seconds of its rotation, while its successor is unused and the family
   * alive, answers the same successor with a new access token instead of revoking the family.
   * Outside the window, or once the successor was used, a replay is a replay. Not with `orgId`
   * and not for impersonation sessions.
   *
   * `dpopJkt` is the key of the request's DPoP proof (RFC 9449), if any: the new access token is
   * bound to it. A refresh token whose session is bound to a key is refused (`DpopProofError`)
   * with a proof of another key before anything is rotated, and without any proof after the
   * one-statement rotation, which then ends the family: only a thief lacks the key.
   *
   * `guard` (an OAuth token endpoint's): conditions checked in the rotation's one statement (see
   * `RefreshGrantGuard`): when one fails nothing rotates and `RefreshGuardError` says which.
   */
  async refresh(
    token: unknown,
    options: {
      orgId?: string | null;
      graceSeconds?: number;
      dpopJkt?: string | null;
      guard?: RefreshGrantGuard;
    } = {},
  ): Promise<IssuedTokens> {
    const { storage, random, clock } = this.#o;
    if (!isRefreshTokenShape(token)) throw new InvalidRefreshTokenError();
    const hash = hashRefreshToken(token);
    const dpopJkt = options.dpopJkt ?? null;
    if (dpopJkt !== null) {
      // A proof of another key than the family's is refused before anything is rotated.
      const boundJkt = await storage.dpop.refreshTokenKey(hash);
      if (boundJkt !== null && boundJkt !== dpopJkt) throw new DpopProofError("key_mismatch");
    }
    if (options.orgId !== undefined && options.orgId !== null) {
      // Reuse detection first: a replay is a replay whatever else is wrong with the request.
      const current = await storage.refreshTokens.get(hash);
      if (current !== null && current.usedAt !== null) return await this.#reuseDetected(current);
      if (current === null || current.revokedAt !== null || current.expiresAt.getTime() <= clock.now()) {
        throw new InvalidRefreshTokenError();
      }
      if (!await storage.organizations.isMember(options.orgId, current.userId)) {
        throw new ForbiddenError("You are not a member of this organization.");
      }
    }
    const next = newRefreshToken(random);
    const now = clock.now();
    const graceSeconds = options.orgId !== undefined
      ? 0
      : options.graceSeconds ?? this.#o.refreshGraceSeconds ?? 0;
    // One statement: the rotation, the session's touch, the user's status and the family's
    // membership (one round trip and one commit per grant).
    const rotation = await storage.refreshTokens.rotateForGrant(
      hash,
      {
        tokenHash: next.hash,
        // The session's absolute expiry bounds the family anyway: refreshing checks the session.
        expiresAt: new Date(now + this.#o.refreshTokenTtlMs),
        ...(options.orgId !== undefined ? { orgId: options.orgId } : {}),
        ...(graceSeconds > 0 ? { sealedSuccessor: sealSuccessor(token, next.token) } : {}),
      },
      this.#o.idleTimeoutMs,
      options.guard?.event === undefined ? options.guard : {
        ...options.guard,
        event: { ...options.guard.event, sessionKey: dpopJkt },
      },
    );
    if (rotation.outcome === "refused") throw new RefreshGuardError(rotation.failed);
    if (rotation.outcome === "reused") {
      const again = graceSeconds > 0 ? await this.#withinGrace(token, rotation.previous, options) : null;
      if (again !== null) return again;
      return await this.#reuseDetected(rotation.previous);
    }
    if (rotation.outcome !== "rotated") throw new InvalidRefreshTokenError();

    const { token: record, session, userStatus, member: stillMember } = rotation;
    let act: ActorClaim | undefined;
    let notAfter: Date | undefined;
    if (session !== null && session.impersonationId !== null) {
      const impersonation = await storage.impersonations.get(session.impersonationId);
      if (
        impersonation !== null && impersonation.status === "Active" && impersonation.expiresAt.getTime() > now
      ) {
        act = { sub: impersonation.actorId, imp: impersonation.id };
        notAfter = impersonation.expiresAt;
      }
    }
    const impersonationOver = session !== null && session.impersonationId !== null && act === undefined;
    if (session !== null && (session.dpopJkt ?? null) !== null && session.dpopJkt !== dpopJkt) {
      // A key-bound refresh token without a proof (the statement above read the binding at no
      // extra cost): whoever sends it lacks the key, so it was exfiltrated; the family ends.
      await this.#endFamily(record);
      throw new DpopProofError("key_mismatch");
    }
    if (session === null || userStatus !== "Active" || !stillMember || impersonationOver) {
      await this.#endFamily(record);
      throw new InvalidRefreshTokenError();
    }
    const access = await this.#mintAccess(
      session,
      record.orgId,
      record.audience ?? this.#o.tokens.issuer,
      act,
      notAfter,
      options.dpopJkt ?? undefined,
    );
    await this.recordBreakGlassUse(session, "refresh");
    return {
      session,
      tokens: { ...access.response, refreshToken: next.token },
      access: access.claims,
      ...(options.guard !== undefined
        ? { guarded: { companion: rotation.companion ?? null, event: rotation.event ?? null } }
        : {}),
    };
  }

  /**
   * Mints an access token for another organization of the caller (a member), on the same
   * session, without re-authentication. The refresh family keeps its organization: refresh
   * with `orgId` to move it too.
   */
  async switchOrganization(
    caller: SwitchingCaller,
    orgId: string,
    current: { readonly audience: string; readonly act?: ActorClaim; readonly jkt?: string },
  ): Promise<{ response: AccessTokenResponse; claims: AccessTokenClaims }> {
    const { storage } = this.#o;
    if (caller.sessionId === null) throw new ForbiddenError("Only a signed-in user can switch organization.");
    const session = await storage.sessions.getActive(caller.sessionId);
    if (session === null || session.userId !== caller.userId) {
      throw new ForbiddenError("The session has ended; sign in again.");
    }
    const user = await storage.users.get(caller.userId);
    if (user === null || user.status !== "Active") throw new ForbiddenError("The account is not active.");
    if (!await storage.organizations.isMember(orgId, caller.userId)) {
      throw new ForbiddenError("You are not a member of this organization.");
    }
    let notAfter: Date | undefined;
    if (current.act !== undefined) {
      const impersonation = await storage.impersonations.get(current.act.imp);
      if (impersonation === null || impersonation.status !== "Active") {
        throw new ForbiddenError("The impersonation has ended.");
      }
      notAfter = impersonation.expiresAt;
    }
    const minted = await this.#mintAccess(
      session,
      orgId,
      current.audience,
      current.act,
      notAfter,
      current.jkt,
    );
    await this.recordBreakGlassUse(session, "switch_organization");
    return minted;
  }

  /** The user's active sessions (devices), most recently seen first. */
  listSessions(userId: string): Promise<SessionRecord[]> {
    return this.#o.storage.sessions.listActiveForUser(userId);
  }

  /**
   * Ends one of the user's sessions and revokes its refresh tokens. Another user's session
   * and an unknown id give the same `NotFoundError`.
   */
  async revokeSession(userId: string, sessionId: string): Promise<void> {
    const ended = await this.#o.storage.transaction(async (tx) => {
      if (!await tx.sessions.revoke(sessionId, { userId })) return false;
      await tx.refreshTokens.revokeForSession(sessionId);
      return true;
    });
    if (!ended) throw new NotFoundError("No such session.");
    await this.announceEnded([{ id: sessionId, endedAt: this.#o.clock.now() }]);
  }

  /** Logout: ends the session and revokes its refresh tokens (idempotent). */
  async logout(sessionId: string): Promise<void> {
    await this.#o.storage.transaction(async (tx) => {
      await tx.sessions.revoke(sessionId);
      await tx.refreshTokens.revokeForSession(sessionId);
    });
    // Announced even when it had ended already: a repeated logout costs nothing and heals a lost message.
    await this.announceEnded([{ id: sessionId, endedAt: this.#o.clock.now() }]);
  }

  /** Ends every session of the user and revokes all their refresh tokens; returns the sessions ended. */
  async logoutAll(userId: string): Promise<number> {
    const now = this.#o.clock.now();
    const ended = await this.#o.storage.transaction((tx) => endAllSessionsOfUser(tx, userId, now));
    await this.announceEnded(ended.sessions);
    return ended.sessions.length;
  }

  /**
   * Registers a listener of every session end announced through this instance, whichever way the
   * session ended (logout, remote or admin revocation, logout-all, refresh reuse, password reset,
   * suspension, erasure, break-glass rotation, impersonation end): they all pass through the
   * announcer. Returns its removal. Throws when the service was built without an announcer that
   * takes listeners.
   */
  onSessionsEnded(listener: SessionEndListener): () => void {
    const listen = this.#o.ended?.listen;
    if (listen === undefined) throw new Error("sessions: no session end announcer to listen to");
    return listen.call(this.#o.ended, listener);
  }

  /** Tells every instance that these sessions ended (call after the ending transaction committed). */
  async announceEnded(ended: readonly EndedSession[]): Promise<void> {
    if (ended.length > 0) await this.#o.ended?.announce(ended);
  }

  /**
   * Records a use of a break-glass session other than its login (a refresh, an organization
   * switch, an OIDC token grant: `via`): the realm's LastUseAt is set and `breakglass.login`
   * emitted, as at the login. Any other session: nothing.
   */
  async recordBreakGlassUse(
    session: Pick<SessionRecord, "id" | "realmId" | "userId" | "mfa">,
    via: "refresh" | "switch_organization" | "token",
  ): Promise<void> {
    if (session.mfa !== MFA_LEVEL_BREAK_GLASS) return;
    const state = await this.#o.storage.breakGlass.recordUse(session.realmId);
    this.#o.events.emit({
      kind: BREAK_GLASS_EVENTS.login,
      occurredAt: this.#o.clock.now(),
      realmId: session.realmId,
      userId: session.userId,
      data: { lastUseAt: state.lastUseAt?.toISOString() ?? null, via, sessionId: session.id },
    });
  }

  /** The refresh token record behind a token, for inspection (tests, admin). */
  refreshRecord(token: string): Promise<RefreshTokenRecord | null> {
    return this.#o.storage.refreshTokens.get(hashRefreshToken(token));
  }

  /**
   * A rotated token presented again: its sealed successor with a new access token when the grace
   * window applies (see {@link refresh}), else null (a replay).
   */
  async #withinGrace(
    presented: string,
    previous: RefreshTokenRecord,
    options: { graceSeconds?: number; dpopJkt?: string | null },
  ): Promise<IssuedTokens | null> {
    const { storage, clock, tokens } = this.#o;
    const now = clock.now();
    // svc's own window covers svc's own tokens only; an OIDC client's is passed by its grant.
    const seconds = options.graceSeconds ??
      ((previous.audience ?? tokens.issuer) === tokens.issuer ? this.#o.refreshGraceSeconds ?? 0 : 0);
    if (
      seconds <= 0 || previous.usedAt === null || previous.revokedAt !== null ||
      previous.graceSuccessor === null || now - previous.usedAt.getTime() > seconds * 1000
    ) return null;
    const successor = openSuccessor(presented, previous.graceSuccessor);
    if (successor === null) return null;
    const child = await storage.refreshTokens.get(hashRefreshToken(successor));
    if (
      child === null || child.parentHash !== previous.tokenHash || child.usedAt !== null ||
      child.revokedAt !== null || child.expiresAt.getTime() <= now
    ) return null;
    const session = await storage.sessions.getActive(child.sessionId);
    if (session === null || session.impersonationId !== null) return null;
    // A key-bound family answers its successor only to a proof of its key: without it, the replay
    // is a replay (and ends the family).
    if ((session.dpopJkt ?? null) !== null && session.dpopJkt !== (options.dpopJkt ?? null)) return null;
    const user = await storage.users.get(child.userId);
    if (user === null || user.status !== "Active") return null;
    if (child.orgId !== null && !await storage.organizations.isMember(child.orgId, child.userId)) return null;
    const access = await this.#mintAccess(
      session,
      child.orgId,
      child.audience ?? tokens.issuer,
      undefined,
      undefined,
      options.dpopJkt ?? undefined,
    );
    await this.recordBreakGlassUse(session, "refresh");
    return { session, tokens: { ...access.response, refreshToken: successor }, access: access.claims };
  }

  /** A used refresh token came back: its family is revoked, its session ended, and the event emitted. */
  async #reuseDetected(previous: RefreshTokenRecord): Promise<never> {
    const revoked = await this.#endFamily(previous);
    this.#o.events.emit({
      kind: REFRESH_REUSE_EVENT,
      occurredAt: this.#o.clock.now(),
      realmId: previous.realmId,
      orgId: previous.orgId,
      userId: previous.userId,
      data: { familyId: previous.familyId, sessionId: previous.sessionId, revoked },
    });
    throw new InvalidRefreshTokenError();
  }

  /** Revokes a refresh family and ends its session (one family per session); returns the tokens revoked. */
  async #endFamily(record: RefreshTokenRecord): Promise<number> {
    const revoked = await this.#o.storage.transaction(async (tx) => {
      await tx.sessions.revoke(record.sessionId);
      return await tx.refreshTokens.revokeFamily(record.familyId);
    });
    await this.announceEnded([{ id: record.sessionId, endedAt: this.#o.clock.now() }]);
    return revoked;
  }

  async #mintAccess(
    session: SessionRecord,
    orgId: string | null,
    audience: string,
    act: ActorClaim | undefined,
    notAfter: Date | undefined,
    jkt?: string,
  ): Promise<{ response: AccessTokenResponse; claims: AccessTokenClaims }> {
    const { token, claims } = await this.#o.tokens.mint("at+svc", {
      aud: audience,
      realm: session.realmId,
      sub: session.userId,
      ...(orgId !== null ? { org: orgId } : {}),
      sid: session.id,
      mfa: session.mfa,
      ...(act !== undefined ? { act } : {}),
      ...(jkt !== undefined ? { cnf: { jkt } } : {}),
    }, { notAfter: notAfter?.getTime() });
    return {
      response: {
        accessToken: token,
        tokenType: jkt !== undefined ? "DPoP" : "Bearer",
        expiresIn: claims.exp - claims.iat,
      },
      claims,
    };
  }
}
