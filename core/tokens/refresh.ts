/**
 * Opaque refresh tokens (spec 2.2): `srt_` and 32 random bytes (base64url). Only the
 * SHA-256 hex is stored, computed synchronously with @noble/hashes (a WebCrypto digest's
 * async round trip costs more than the hash of a short token).
 *
 * @module
 */
import { sha256Hex } from "../digest.ts";
import { type RandomSource, randomToken } from "../random.ts";

/** The prefix of every refresh token. */
export const REFRESH_TOKEN_PREFIX = "srt_";

const SHAPE = /^srt_[A-Za-z0-9_-]{43}$/;

/** A new refresh token and the hash to store. */
export function newRefreshToken(random: RandomSource): { token: string; hash: string } {
  const token = `${REFRESH_TOKEN_PREFIX}${randomToken(random, 32)}`;
  return { token, hash: hashRefreshToken(token) };
}

/** The stored form of a refresh token. */
export function hashRefreshToken(token: string): string {
  return sha256Hex(token);
}

/** Whether text has the shape of a refresh token (checked before any lookup). */
export function isRefreshTokenShape(token: unknown): token is string {
  return typeof token === "string" && SHAPE.test(token);
}
