/**
 * API keys (spec 5.5): the plaintext `sak_…` token is shown once at creation; only its
 * SHA-256 hex is stored, and a presented key is looked up by that hash. Revoking keeps the
 * first revocation time; last use is recorded best effort.
 *
 * @module
 */
import type { Clock } from "../clock.ts";
import { sha256Hex } from "../digest.ts";
import { type RandomSource, randomToken } from "../random.ts";
import {
  type ApiKeyRecord,
  type ApiKeyStore,
  isApiKeyActive,
  type NewApiKey,
} from "../../storage/contract/api-keys.ts";

/** The prefix of every API key. */
export const API_KEY_PREFIX = "sak_";

const SHAPE = /^sak_[A-Za-z0-9_-]{43}$/;

/** Whether a presented credential looks like an API key. */
export function isApiKeyShape(token: string): boolean {
  return SHAPE.test(token);
}

/** Creates a key; the returned `token` is the only copy of the plaintext. */
export async function createApiKey(
  store: ApiKeyStore,
  random: RandomSource,
  input: Omit<NewApiKey, "tokenHash">,
): Promise<{ token: string; key: ApiKeyRecord }> {
  const token = `${API_KEY_PREFIX}${randomToken(random, 32)}`;
  const key = await store.create({ ...input, tokenHash: sha256Hex(token) });
  return { token, key };
}

/**
 * The active key a presented token belongs to, or null (unknown, revoked or expired). A
 * use is recorded in the background, best effort.
 */
export async function authenticateApiKey(
  store: ApiKeyStore,
  clock: Clock,
  token: string,
): Promise<ApiKeyRecord | null> {
  if (!isApiKeyShape(token)) return null;
  const key = await store.getByTokenHash(sha256Hex(token));
  if (key === null || !isApiKeyActive(key, clock.now())) return null;
  void store.recordUse(key.id).catch(() => {});
  return key;
}
