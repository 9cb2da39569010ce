/**
 * API keys (spec 5.5): the plaintext `sak_…` token is shown once at creation; only its
 * SHA-256 hex is stored, and a presented key is looked up by that hash. Revoking keeps the
 * first revocation time; last use is recorded best effort. A key acts as its owner, so it
 * works only while the owner does: an owning user that is suspended or erased, or an owning
 * service account that is disabled or gone, makes the key fail like an unknown one. A key owned by
 * a break-glass account fails alike: that account owns nothing that outlives its rotation.
 *
 * @module
 */
import type { Clock } from "../clock.ts";
import { sha256Hex } from "../digest.ts";
import { type RandomSource, randomToken } from "../random.ts";
import { type ApiKeyRecord, type ApiKeyStore, isApiKeyActive, type NewApiKey } from "../storage/api-keys.ts";
import type { ServiceAccountStore } from "../storage/service-accounts.ts";
import type { UserStore } from "../storage/users.ts";

/** The stores API-key authentication reads: the key, then its owner. */
export interface ApiKeyAuthStores {
  /** Where keys are looked up by token hash and their use recorded. */
  readonly apiKeys: ApiKeyStore;
  /** Reads an owning user, which must be active, not erased and in the key's realm. */
  readonly users: Pick<UserStore, "get">;
  /** Reads an owning service account, which must be enabled and in the key's realm. */
  readonly serviceAccounts: Pick<ServiceAccountStore, "get">;
}

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
 * The active key a presented token belongs to, or null (unknown, revoked or expired, or an
 * owner that cannot act: see the module documentation). A use is recorded in the background,
 * best effort.
 */
export async function authenticateApiKey(
  stores: ApiKeyAuthStores,
  clock: Clock,
  token: string,
): Promise<ApiKeyRecord | null> {
  if (!isApiKeyShape(token)) return null;
  const key = await stores.apiKeys.getByTokenHash(sha256Hex(token));
  if (key === null || !isApiKeyActive(key, clock.now())) return null;
  if (!await ownerCanAct(stores, key)) return null;
  void stores.apiKeys.recordUse(key.id).catch(() => {});
  return key;
}

async function ownerCanAct(stores: ApiKeyAuthStores, key: ApiKeyRecord): Promise<boolean> {
  if (key.ownerKind === "ServiceAccount") {
    const account = await stores.serviceAccounts.get(key.ownerId);
    return account !== null && account.realmId === key.realmId && !account.disabled;
  }
  const user = await stores.users.get(key.ownerId);
  // A break-glass account owns no key (issue 24): one left from before that rule never acts.
  return user !== null && user.realmId === key.realmId && user.status === "Active" &&
    user.anonymizedAt === null && !user.isBreakGlass;
}
