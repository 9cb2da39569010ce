/**
 * The {@link JwsSigner} the Node adapter gives the key ring: RS256 signatures with `node:crypto`'s
 * `sign` on libuv's thread pool (its callback form), from a `KeyObject` of the ring's
 * `CryptoKey`. The signature is OpenSSL's RSASSA-PKCS1-v1_5 with SHA-256, as WebCrypto's (also
 * OpenSSL on Node), so the tokens are the same byte for byte; what it saves is the work around the
 * signature: jose's `SignJWT` (its claim checks, a structured clone, its own encoding) and
 * WebCrypto's argument normalization, once per token svc mints. Any other algorithm or key goes to
 * jose as before (the signer answers null), as does a failure (see `core/keys/jws.ts`).
 *
 * @module
 */
import { KeyObject, sign } from "node:crypto";
import type { JwsSigner } from "../core/keys/jws.ts";

/** The signer; `name` says `node:crypto` and the OpenSSL version Node links. */
export function nodeRs256Signer(opensslVersion: string | undefined): JwsSigner {
  const keys = new WeakMap<CryptoKey, KeyObject | null>();
  const keyObject = (key: CryptoKey): KeyObject | null => {
    let object = keys.get(key);
    if (object === undefined) {
      const algorithm = key.algorithm as Partial<RsaHashedKeyAlgorithm>;
      object = key.type === "private" && algorithm.name === "RSASSA-PKCS1-v1_5" &&
          algorithm.hash?.name === "SHA-256"
        ? KeyObject.from(key)
        : null;
      keys.set(key, object);
    }
    return object;
  };
  return {
    name: `node:crypto${opensslVersion === undefined ? "" : ` (openssl ${opensslVersion})`}`,
    sign(alg, key, signingInput) {
      if (alg !== "RS256") return null;
      const object = keyObject(key);
      if (object === null) return null;
      return new Promise((resolve, reject) => {
        // An RSA key signs with PKCS #1 v1.5 padding unless told otherwise.
        sign("sha256", signingInput, object, (error, signature) => {
          if (error !== null) reject(error);
          else resolve(new Uint8Array(signature.buffer, signature.byteOffset, signature.byteLength));
        });
      });
    },
  };
}
