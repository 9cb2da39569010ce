/**
 * Turns a stored signing key (PKCS#8 DER) into usable WebCrypto keys and its public JWK.
 *
 * @module
 */
import type { SigningKeyRecord } from "../storage/signing-keys.ts";
import { RS256_PARAMS, SIGNING_ALGORITHM } from "./generate.ts";

/** The public members of an RSA signing key as published in a JWKS. */
export interface PublicSigningJwk {
  /** Key type: always `RSA`. */
  readonly kty: "RSA";
  /** The key id JWT headers name. */
  readonly kid: string;
  /** Public key use: signatures. */
  readonly use: "sig";
  /** The signing algorithm (`RS256`). */
  readonly alg: string;
  /** The RSA modulus, base64url. */
  readonly n: string;
  /** The RSA public exponent, base64url. */
  readonly e: string;
}

/** A signing key ready for use. */
export interface LoadedSigningKey {
  /** The realm the key signs for. */
  readonly realmId: string;
  /** The key id. */
  readonly kid: string;
  /** Whether new tokens are signed with it. */
  readonly isPrimary: boolean;
  /** When the key was made. */
  readonly createdAt: Date;
  /** When it stopped being primary (it still verifies during the overlap), or null. */
  readonly retiredAt: Date | null;
  /** Signs (private). */
  readonly privateKey: CryptoKey;
  /** Verifies (public). */
  readonly publicKey: CryptoKey;
  /** What the key set publishes. */
  readonly publicJwk: PublicSigningJwk;
}

/**
 * Imports a stored key. Throws when the stored bytes are not an RSA PKCS#8 key or the
 * algorithm is not RS256.
 */
export async function loadSigningKey(record: SigningKeyRecord): Promise<LoadedSigningKey> {
  if (record.algorithm !== SIGNING_ALGORITHM) {
    throw new Error(
      `signing key ${record.kid} uses ${record.algorithm}; only ${SIGNING_ALGORITHM} is supported`,
    );
  }
  const privateKey = await crypto.subtle.importKey(
    "pkcs8",
    record.privateKey as Uint8Array<ArrayBuffer>,
    RS256_PARAMS,
    true,
    ["sign"],
  );
  const jwk = await crypto.subtle.exportKey("jwk", privateKey);
  if (typeof jwk.n !== "string" || typeof jwk.e !== "string") throw new Error("not an RSA key");
  const publicJwk: PublicSigningJwk = {
    kty: "RSA",
    kid: record.kid,
    use: "sig",
    alg: SIGNING_ALGORITHM,
    n: jwk.n,
    e: jwk.e,
  };
  const publicKey = await crypto.subtle.importKey(
    "jwk",
    { kty: "RSA", n: jwk.n, e: jwk.e, alg: SIGNING_ALGORITHM, ext: true },
    RS256_PARAMS,
    true,
    ["verify"],
  );
  return {
    realmId: record.realmId,
    kid: record.kid,
    isPrimary: record.isPrimary,
    createdAt: record.createdAt,
    retiredAt: record.retiredAt,
    privateKey,
    publicKey,
    publicJwk,
  };
}
