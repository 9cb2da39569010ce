/**
 * Refresh tokens (spec 2.2, 3): opaque `srt_` tokens of which only the SHA-256 hex is
 * stored. Every use rotates; presenting a used token again is reuse, and the caller
 * revokes the whole family and emits `token.refresh_reuse_detected`.
 *
 * @module
 */
import type { SessionRecord } from "./sessions.ts";
import type { UserStatus } from "./users.ts";

/** A stored refresh token. */
export interface RefreshTokenRecord {
  /** SHA-256 hex of the token. */
  readonly tokenHash: string;
  /** The rotation family (one login's chain of tokens). */
  readonly familyId: string;
  /** The session it concerns. */
  readonly sessionId: string;
  /** The user it concerns. */
  readonly userId: string;
  /** The realm it belongs to. */
  readonly realmId: string;
  /** The organization it concerns, or null. */
  readonly orgId: string | null;
  /** The app the tokens are for (`aud`), or null for svc itself (the issuer). */
  readonly audience: string | null;
  /** The hash of the token this one replaced; null for the first of a family. */
  readonly parentHash: string | null;
  /** When it was created. */
  readonly createdAt: Date;
  /** When it expires. */
  readonly expiresAt: Date;
  /** When it was rotated (used); null while unused. */
  readonly usedAt: Date | null;
  /** When it was revoked, or null. */
  readonly revokedAt: Date | null;
  /** The successor sealed for the refresh grace window (`core/tokens/grace.ts`); null without one. */
  readonly graceSuccessor: string | null;
}

/** The first token of a family. */
export interface NewRefreshToken {
  /** The token's SHA-256 (the token itself is never stored). */
  readonly tokenHash: string;
  /** The rotation family (one login's chain of tokens). */
  readonly familyId: string;
  /** The session it concerns. */
  readonly sessionId: string;
  /** The user it concerns. */
  readonly userId: string;
  /** The realm it belongs to. */
  readonly realmId: string;
  /** The organization it concerns, or null. */
  readonly orgId?: string | null;
  /** The app the tokens are for (`aud`); absent or null: svc itself. */
  readonly audience?: string | null;
  /** When it expires. */
  readonly expiresAt: Date;
}

/** The successor minted by a rotation; family, session, user and realm are inherited. */
export interface RotatedRefreshToken {
  /** The token's SHA-256 (the token itself is never stored). */
  readonly tokenHash: string;
  /** When it expires. */
  readonly expiresAt: Date;
  /** Defaults to the old token's organization. */
  readonly orgId?: string | null;
  /** Defaults to the old token's audience. */
  readonly audience?: string | null;
  /** The successor sealed for the grace window, stored on the rotated token; default none. */
  readonly sealedSuccessor?: string | null;
}

/** What a rotation attempt found. */
export type RefreshRotation =
  /** The token was active: it is now used and `token` is its successor. */
  | { readonly outcome: "rotated"; readonly previous: RefreshTokenRecord; readonly token: RefreshTokenRecord }
  /** The token was already used: reuse. Revoke `previous.familyId`. */
  | { readonly outcome: "reused"; readonly previous: RefreshTokenRecord }
  /** The token (or its family) was revoked. */
  | { readonly outcome: "revoked"; readonly previous: RefreshTokenRecord }
  /** The token expired unused. */
  | { readonly outcome: "expired"; readonly previous: RefreshTokenRecord }
  /** No such token. */
  | { readonly outcome: "unknown" };

/**
 * Conditions a caller (an OAuth token endpoint) puts on a refresh grant's rotation, checked in
 * its one statement, so that nothing the caller read before (or cached) can be stale when the
 * token is spent. When one does not hold, nothing changes and the outcome is `refused` with
 * which one failed (before `reused`: a token presented by the wrong client is never reuse).
 */
export interface RefreshGrantGuard {
  /** The token must belong to this realm. */
  readonly realmId: string;
  /** The token's audience must be this (an OAuth client id). */
  readonly audience: string;
  /**
   * The client `audience` of `realmId` must exist, not be suspended, and still be at this
   * version (`ClientRecord.version`): a client read earlier or cached is checked here.
   */
  readonly clientVersion?: string;
  /**
   * A table (a plugin's, `[a-z0-9_]+`) with `session_id` and `realm_id` columns: a row for the
   * token's session must exist, and it is answered (`companion`) as JSON.
   */
  readonly companionTable?: string;
  /** A column of the companion row that must equal the token's audience (`[a-z0-9_]+`). */
  readonly companionAudienceColumn?: string;
  /**
   * An event recorded in the same statement: a webhook delivery for each endpoint of the realm
   * (and of the token's organization) that subscribes to its kind. Its webhook body is built from
   * `data` and, for each `companionData` entry, the companion row's column of that name; its
   * `userId` and `orgId` are the token's. Recorded only when the grant will issue tokens (the
   * session was live and is not impersonation, the user active and a member of the family's
   * organization, the session unbound or bound to `sessionKey`); else `event` is null and the
   * caller emits it itself if it still issues. Not for kinds of the security ledger.
   */
  readonly event?: RefreshGrantEvent;
}

/** An event a refresh grant's statement records (see {@link RefreshGrantGuard.event}). */
export interface RefreshGrantEvent {
  /** The event's id (a UUID, the webhook body's `id`). */
  readonly id: string;
  /** Its kind (not a security-ledger kind). */
  readonly kind: string;
  /** Clock milliseconds. */
  readonly occurredAt: number;
  /** Literal data fields, in order, before the companion's. */
  readonly data: Readonly<Record<string, unknown>>;
  /** Data fields taken from the companion row: field name to column name (`[a-z0-9_]+`). */
  readonly companionData?: Readonly<Record<string, string>>;
  /** The DPoP key of the request, if any (set by the session service). */
  readonly sessionKey?: string | null;
}

/** Which condition of a {@link RefreshGrantGuard} did not hold. */
export type RefreshGuardFailure = "audience" | "companion" | "client";

/**
 * What a refresh grant's rotation found, with what the grant needs to decide in the same
 * statement: the session (touched), the user's status and the family's org membership.
 */
export type RefreshGrantRotation =
  /**
   * The token was active: it is now used and `token` is its successor. `session` is the touched
   * session, or null when it had ended (revoked, idle or past its absolute expiry; not touched);
   * `userStatus` is null when the user no longer exists; `member` tells whether the user still
   * belongs to `token.orgId` (true when the family has no organization).
   */
  | {
    readonly outcome: "rotated";
    readonly token: RefreshTokenRecord;
    readonly session: SessionRecord | null;
    readonly userStatus: UserStatus | null;
    readonly member: boolean;
    /** The guard's companion row (as JSON), or null without a companion table. */
    readonly companion?: Readonly<Record<string, unknown>> | null;
    /**
     * The guard's event, as recorded: its data, and how many webhook deliveries were queued; null
     * when it was not recorded (see {@link RefreshGrantGuard.event}).
     */
    readonly event?: { readonly data: Readonly<Record<string, unknown>>; readonly queued: number } | null;
  }
  /** A condition of the guard did not hold; nothing changed. */
  | { readonly outcome: "refused"; readonly failed: RefreshGuardFailure }
  | Exclude<RefreshRotation, { readonly outcome: "rotated" }>;

/** Refresh-token storage. */
export interface RefreshTokenStore {
  /** Stores a token; `ConflictError` on a duplicate hash. */
  insert(input: NewRefreshToken): Promise<RefreshTokenRecord>;
  /** A token by hash, or null. */
  get(tokenHash: string): Promise<RefreshTokenRecord | null>;
  /**
   * Rotates atomically: marks the old token used only if it is unused, unrevoked and
   * unexpired (one conditional UPDATE), and stores the successor in the same transaction.
   * Of concurrent rotations of one token exactly one gets `rotated`; the others get
   * `reused`.
   */
  rotate(oldHash: string, next: RotatedRefreshToken): Promise<RefreshRotation>;
  /**
   * A refresh grant's rotation in one statement (one round trip, atomic on its own): rotates as
   * {@link RefreshTokenStore.rotate} does, touches the family's session (its idle expiry moves
   * to `idleTimeoutMs` from now, never past the absolute expiry) unless it has ended, and reads
   * the user's status and the family's org membership. The same single-winner guarantee as
   * `rotate`; a token that does not rotate changes nothing and is classified as `rotate` does.
   * With `guard`, its conditions are part of the rotation's condition (see
   * {@link RefreshGrantGuard}).
   */
  rotateForGrant(
    oldHash: string,
    next: RotatedRefreshToken,
    idleTimeoutMs: number,
    guard?: RefreshGrantGuard,
  ): Promise<RefreshGrantRotation>;
  /** Revokes every unrevoked token of the family; returns how many. */
  revokeFamily(familyId: string): Promise<number>;
  /** Revokes every unrevoked token of a session; returns how many. */
  revokeForSession(sessionId: string): Promise<number>;
  /** Revokes every unrevoked token of the user (password reset); returns how many. */
  revokeAllForUser(userId: string): Promise<number>;
  /** Deletes tokens that expired before `before`; returns how many. */
  pruneExpired(before: Date): Promise<number>;
}
