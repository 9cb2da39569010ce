/**
 * Ending every session an OIDC client holds, inside the caller's transaction: what deleting a
 * client does, whether an administrator deletes it or the client itself does (RFC 7592).
 *
 * @module
 */
import type { Storage } from "../storage/storage.ts";

/**
 * Revokes, through `tx`, every session issued to the client `clientId` of `realmId`, and their
 * refresh tokens (their access tokens stop with them once the ids are announced after commit).
 * Returns the ids of the sessions that were still live or held a live refresh token.
 *
 * @example
 * ```ts ignore
 * const ended = await endClientSessions(tx, client.realmId, client.clientId);
 * // after commit:
 * await sessions.announce(ended.map((id) => ({ id, endedAt })));
 * ```
 */
export async function endClientSessions(tx: Storage, realmId: string, clientId: string): Promise<string[]> {
  const ended: string[] = [];
  for (const sessionId of await tx.tokenGrants.sessionIdsOfClient(realmId, clientId)) {
    const active = await tx.sessions.revoke(sessionId);
    const refreshTokensRevoked = await tx.refreshTokens.revokeForSession(sessionId);
    if (active || refreshTokensRevoked > 0) ended.push(sessionId);
  }
  return ended;
}
