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
  }
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
   */
  rotateForGrant(
    oldHash: string,
    next: RotatedRefreshToken,
    idleTimeoutMs: number,
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
