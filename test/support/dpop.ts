/** DPoP proofs for tests: a key pair and proofs signed with it, any claim or header overridable. */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { accessTokenHash } from "../../core/dpop/proof.ts";

/** A client's DPoP key. */
export interface DpopTestKey {
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
  readonly jkt: string;
  readonly alg: string;
}

/** A fresh key pair (ES256 by default). */
export async function dpopKey(alg = "ES256"): Promise<DpopTestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  return { privateKey, publicJwk, jkt: await calculateJwkThumbprint(publicJwk, "sha256"), alg };
}

let counter = 0;

/** What a proof says; anything `undefined` in `claims` is left out, `header` members replace the defaults. */
export interface ProofInput {
  readonly htm: string;
  readonly htu: string;
  /** Seconds; default: now. */
  readonly iat?: number;
  readonly accessToken?: string;
  readonly nonce?: string;
  readonly jti?: string;
  readonly claims?: Record<string, unknown>;
  readonly header?: Record<string, unknown>;
}

/** A signed proof. */
export async function dpopProof(key: DpopTestKey, input: ProofInput): Promise<string> {
  const claims: Record<string, unknown> = {
    jti: input.jti ?? `jti-${Date.now().toString(36)}-${counter++}-${crypto.randomUUID()}`,
    htm: input.htm,
    htu: input.htu,
    iat: input.iat ?? Math.floor(Date.now() / 1000),
    ...(input.accessToken !== undefined ? { ath: accessTokenHash(input.accessToken) } : {}),
    ...(input.nonce !== undefined ? { nonce: input.nonce } : {}),
    ...input.claims,
  };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
  return await new SignJWT(claims)
    .setProtectedHeader({ alg: key.alg, typ: "dpop+jwt", jwk: key.publicJwk, ...input.header } as never)
    .sign(key.privateKey);
}

/** A test key of an existing key pair (for example one an RP library generated). */
export async function dpopKeyOf(pair: CryptoKeyPair, alg = "ES256"): Promise<DpopTestKey> {
  const publicJwk = await exportJWK(pair.publicKey);
  return {
    privateKey: pair.privateKey,
    publicJwk,
    jkt: await calculateJwkThumbprint(publicJwk, "sha256"),
    alg,
  };
}
