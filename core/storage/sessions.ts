/**
 * Sessions (spec 5.4): realm-level, app-agnostic, with idle and absolute timeouts.
 *
 * @module
 */

/** A stored session. */
export interface SessionRecord {
  /** The id. */
  readonly id: string;
  /** The realm it belongs to. */
  readonly realmId: string;
  /** The user it concerns. */
  readonly userId: string;
  /** The session MFA level (for example `PhishingResistant`). */
  readonly mfa: string;
  /** The client address, when known. */
  readonly ipAddress: string | null;
  /** The client's device (from its User-Agent), when known. */
  readonly deviceDescription: string | null;
  /** Set when the session is an impersonation. */
  readonly impersonationId: string | null;
  /** When it was created. */
  readonly createdAt: Date;
  /** When it was last seen. */
  readonly lastSeenAt: Date;
  /** Idle expiry: moves forward on touch, never past the absolute expiry. */
  readonly idleExpiresAt: Date;
  /** When the session ends whatever its activity. */
  readonly absoluteExpiresAt: Date;
  /** When it was revoked, or null. */
  readonly revokedAt: Date | null;
  /** The DPoP key thumbprint its refresh tokens are bound to (RFC 9449), or null. */
  readonly dpopJkt?: string | null;
}

/** A session to create. */
export interface NewSession {
  /** The realm it belongs to. */
  readonly realmId: string;
  /** The user it concerns. */
  readonly userId: string;
  /** The MFA level reached (for example `Password` or `PhishingResistant`). */
  readonly mfa: string;
  /** The client address, when known. */
  readonly ipAddress?: string | null;
  /** The client's device (from its User-Agent), when known. */
  readonly deviceDescription?: string | null;
  /** The impersonation the session is for, or null. */
  readonly impersonationId?: string | null;
  /** Idle timeout in milliseconds. */
  readonly idleTimeoutMs: number;
  /** Absolute lifetime in milliseconds. */
  readonly absoluteTimeoutMs: number;
}

/** The first refresh token of a session {@link SessionStore.createWithRefreshToken} creates. */
export interface NewSessionRefreshToken {
  /** The token's SHA-256 (the token itself is never stored). */
  readonly tokenHash: string;
  /** The new rotation family. */
  readonly familyId: string;
  /** The organization it concerns, or null. */
  readonly orgId: string | null;
  /** The app the tokens are for (`aud`). */
  readonly audience: string | null;
  /** Its lifetime in milliseconds (bounded by the session's absolute expiry). */
  readonly ttlMs: number;
}

/** Whether a session is usable at `now` (not revoked, neither timeout passed). */
export function isSessionActive(session: SessionRecord, now: number): boolean {
  return session.revokedAt === null && session.idleExpiresAt.getTime() > now &&
    session.absoluteExpiresAt.getTime() > now;
}

/** Session storage. */
export interface SessionStore {
  /** Creates a session starting now. */
  create(input: NewSession): Promise<SessionRecord>;
  /**
   * Creates a session starting now and the first refresh token of its family, in one statement
   * (issue 29): the token expires `ttlMs` from now, never after the session's absolute expiry.
   */
  createWithRefreshToken(input: NewSession, refresh: NewSessionRefreshToken): Promise<SessionRecord>;
  /** A session by id whatever its state (check with `isSessionActive`), or null. */
  get(id: string): Promise<SessionRecord | null>;
  /** A session only if active now, else null. */
  getActive(id: string): Promise<SessionRecord | null>;
  /**
   * Marks activity: in one conditional UPDATE of an active session, sets last seen to now
   * and the idle expiry to now + `idleTimeoutMs`, capped at the absolute expiry. Returns the
   * updated session, or null when it is not active (revoked, idle or absolutely expired).
   */
  touch(id: string, idleTimeoutMs: number): Promise<SessionRecord | null>;
  /** Raises or records the MFA level of an active session; returns whether it applied. */
  setMfa(id: string, mfa: string): Promise<boolean>;
  /**
   * Revokes a session (keeping the first revocation time). With `userId` only that user's
   * session matches, so another user's id and an unknown id give the same false.
   */
  revoke(id: string, options?: { readonly userId?: string }): Promise<boolean>;
  /** Revokes every unrevoked session of the user, except `exceptId`; returns the ids it revoked. */
  revokeAllForUser(userId: string, options?: { readonly exceptId?: string }): Promise<string[]>;
  /**
   * Sessions revoked at or after `since` (their `revokedAt` is when they ended), most recently
   * revoked first, at most `limit`: what a starting instance preloads into its ended-session set.
   */
  listEndedSince(since: Date, limit: number): Promise<{ id: string; endedAt: number }[]>;
  /**
   * Sessions revoked after `after` and at or before `until`, in the order they ended (ties by
   * id), at most `limit`: a page of a catch-up over ended sessions. `after.id` resumes after the
   * last row of the previous page; without it every session revoked at `after.endedAt` is in.
   */
  listEndedInOrder(
    after: { readonly endedAt: number; readonly id?: string },
    until: Date,
    limit: number,
  ): Promise<{ id: string; endedAt: number }[]>;
  /**
   * The user's active sessions, most recently seen first. `orgContext` keeps the sessions signed
   * in to that organization (one of their refresh tokens is), and, with `withoutOrg`, those
   * signed in to no organization.
   */
  listActiveForUser(
    userId: string,
    options?: { readonly orgContext?: { readonly orgId: string; readonly withoutOrg: boolean } },
  ): Promise<SessionRecord[]>;
  /** Deletes sessions whose absolute expiry is before `before`; returns how many. */
  pruneExpired(before: Date): Promise<number>;
}
