/**
 * Service accounts (spec 5.5): looked up by (realm, key); the `sas_…` secret is shown once
 * and stored as its SHA-256 hex (it is 256 random bits, so a slow hash adds nothing). A
 * rotation is one atomic write of the new hash plus the previous hash and its overlap
 * expiry, during which both secrets work.
 *
 * @module
 */
import type { Clock } from "../clock.ts";
import { constantTimeEqual, sha256Hex } from "../digest.ts";
import { type RandomSource, randomToken } from "../random.ts";
import {
  acceptedSecretHashes,
  type NewServiceAccount,
  type ServiceAccountRecord,
  type ServiceAccountStore,
} from "../storage/service-accounts.ts";

/** The prefix of every service-account secret. */
export const SERVICE_ACCOUNT_SECRET_PREFIX = "sas_";

function newSecret(random: RandomSource): { secret: string; hash: string } {
  const secret = `${SERVICE_ACCOUNT_SECRET_PREFIX}${randomToken(random, 32)}`;
  return { secret, hash: sha256Hex(secret) };
}

/** Creates an account; the returned `secret` is the only copy of the plaintext. */
export async function createServiceAccount(
  store: ServiceAccountStore,
  random: RandomSource,
  input: Omit<NewServiceAccount, "secretHash">,
): Promise<{ secret: string; account: ServiceAccountRecord }> {
  const { secret, hash } = newSecret(random);
  return { secret, account: await store.create({ ...input, secretHash: hash }) };
}

/** Rotates the secret; the previous one keeps working for `overlapMs`. Null for an unknown id. */
export async function rotateServiceAccountSecret(
  store: ServiceAccountStore,
  random: RandomSource,
  id: string,
  overlapMs: number,
): Promise<{ secret: string; account: ServiceAccountRecord } | null> {
  const { secret, hash } = newSecret(random);
  const account = await store.rotateSecret(id, hash, overlapMs);
  return account === null ? null : { secret, account };
}

/** The enabled account of the realm whose key and secret match, or null. */
export async function authenticateServiceAccount(
  store: ServiceAccountStore,
  clock: Clock,
  realmId: string,
  key: string,
  secret: string,
): Promise<ServiceAccountRecord | null> {
  const account = await store.getByKey(realmId, key);
  if (account === null || account.disabled) return null;
  const presented = sha256Hex(secret);
  let match = false;
  for (const hash of acceptedSecretHashes(account, clock.now())) {
    match = constantTimeEqual(presented, hash) || match;
  }
  return match ? account : null;
}
