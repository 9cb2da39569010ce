/**
 * Generates a realm signing key: RSA 2048 for RS256 with WebCrypto, exported as PKCS#8 DER
 * (the stored form, spec 2.9), with a random `kid`.
 *
 * @module
 */
import { type RandomSource, randomToken } from "../random.ts";

/** The JWS algorithm of every svc signing key. */
export const SIGNING_ALGORITHM = "RS256";

/** The WebCrypto parameters of RS256. */
export const RS256_PARAMS = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } as const;

/** A fresh key, ready to store. */
export interface GeneratedSigningKey {
  /** 22 base64url characters (128 random bits): unique per realm in practice. */
  readonly kid: string;
  /** Always `RS256`. */
  readonly algorithm: typeof SIGNING_ALGORITHM;
  /** PKCS#8 DER. */
  readonly privateKey: Uint8Array;
}

/**
 * Generates an RS256 key pair; the public half is derived from the private key whenever
 * it is loaded, so only the private key is stored.
 *
 * @example
 * ```ts
 * import { createSqlStorage, cryptoRandom, generateSigningKey, openDatabase, systemClock } from "@svc/svc";
 *
 * const database = await openDatabase({ kind: "embedded" }); // PGlite in memory
 * await database.ensureSchema();
 * const storage = createSqlStorage(database, { clock: systemClock, random: cryptoRandom });
 * const realm = await storage.realms.create({ name: "default", displayName: "Default", isDefault: true });
 *
 * const key = await generateSigningKey(cryptoRandom); // { kid, algorithm: "RS256", privateKey }
 * await storage.signingKeys.insert(realm.id, { ...key, isPrimary: true });
 * await database.close();
 * ```
 */
export async function generateSigningKey(random: RandomSource): Promise<GeneratedSigningKey> {
  const pair = await crypto.subtle.generateKey(
    { ...RS256_PARAMS, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) },
    true,
    ["sign", "verify"],
  ) as CryptoKeyPair;
  const der = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  return { kid: randomToken(random, 16), algorithm: SIGNING_ALGORITHM, privateKey: der };
}
