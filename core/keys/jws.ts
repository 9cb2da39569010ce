/**
 * Compact JWS signing of svc's JWTs, with an optional faster signer a runtime adapter may give.
 *
 * jose's `SignJWT` signs with WebCrypto, whose RSA is slow on some runtimes (Deno: RustCrypto's
 * `rsa`, five to six times the CPU of OpenSSL per RS256 signature). A {@link JwsSigner} computes
 * the raw signature another way; svc then builds the compact serialization itself, byte for
 * byte as jose does (`BASE64URL(UTF8(JSON.stringify(header)))`, `.`,
 * `BASE64URL(UTF8(JSON.stringify(structuredClone(claims))))`, `.`, `BASE64URL(signature)`).
 * Whatever the fast path does not handle (another algorithm, a `crit` or `b64` header, a key
 * that is not an RS256 private key of 2048 bits or more, claims jose would refuse), and whenever
 * the signer declines or fails, goes to jose as before: the token is the same either way, since
 * RSASSA-PKCS1-v1_5 is deterministic.
 *
 * @module
 */
import { SignJWT } from "jose";
import { toBase64Url, utf8 } from "../encoding.ts";

/** The one algorithm the fast path signs. */
const FAST_ALGORITHM = "RS256";

/**
 * Computes raw JWS signatures outside WebCrypto (a runtime adapter's, e.g. OpenSSL on Deno).
 * Core never imports one: the CLI's adapter passes it to the {@link KeyRing}.
 */
export interface JwsSigner {
  /** What it signs with, for the boot log (`openssl 3.0.19`). */
  readonly name: string;
  /**
   * The signature of `signingInput` (the JWS signing input, ASCII) under `alg` with `key`: for
   * RS256, the RSASSA-PKCS1-v1_5 SHA-256 signature WebCrypto would make. Null (or a promise of
   * null) when it does not handle this key or algorithm; a rejection also sends svc to jose.
   * It must not keep `signingInput` past the promise.
   */
  sign(alg: string, key: CryptoKey, signingInput: Uint8Array): Promise<Uint8Array | null> | null;
}

/**
 * A {@link JwsSigner} made by `open` on its first signature rather than now: a runtime's native
 * library (OpenSSL's libcrypto on Deno, 1.5 MiB resident and Deno's FFI bindings for it) is
 * loaded by the first token a server signs, not by a server that has signed none. `open` runs
 * once (concurrent first signatures share it), and `opened` is told what it gave; when it gives
 * null or throws, every signature goes to jose, as with no signer.
 *
 * @example
 * ```ts
 * // `open` may give null (no library here): every signature then goes to jose.
 * const signer = lazyJwsSigner("native RS256, opened on the first signature", () => null);
 * console.log(signer.name);
 * ```
 */
export function lazyJwsSigner(
  name: string,
  open: () => JwsSigner | null,
  opened?: (signer: JwsSigner | null) => void,
): JwsSigner {
  let made: { signer: JwsSigner | null } | undefined;
  return {
    name,
    sign(alg, key, signingInput) {
      if (made === undefined) {
        try {
          made = { signer: open() };
        } catch {
          made = { signer: null };
        }
        opened?.(made.signer);
      }
      return made.signer === null ? null : made.signer.sign(alg, key, signingInput);
    },
  };
}

/** A JWS protected header as svc signs it. */
export type JwsHeader = { readonly alg: string } & Record<string, unknown>;

/**
 * Signs `claims` as a compact JWT with `header` (its `alg` included) and `key`: with `signer`
 * when given and it handles the key, else with jose's `SignJWT`. Same token both ways.
 */
export async function signCompactJwt(
  header: JwsHeader,
  claims: Record<string, unknown>,
  key: CryptoKey,
  signer?: JwsSigner,
): Promise<string> {
  const fast = signer === undefined ? null : fastSigningInput(header, claims, key);
  if (fast !== null) {
    let signature: Uint8Array | null = null;
    try {
      signature = await signer!.sign(FAST_ALGORITHM, key, fast.bytes);
    } catch {
      signature = null; // jose below makes the same token
    }
    if (signature !== null && signature.length === fast.signatureLength) {
      return `${fast.text}.${toBase64Url(signature)}`;
    }
  }
  return await new SignJWT(claims).setProtectedHeader(header).sign(key);
}

/**
 * The JWS signing input jose would sign, or null when the fast path leaves this one to jose
 * (which then signs it, or throws its own error).
 */
function fastSigningInput(
  header: JwsHeader,
  claims: Record<string, unknown>,
  key: CryptoKey,
): { text: string; bytes: Uint8Array; signatureLength: number } | null {
  if (header.alg !== FAST_ALGORITHM || !isPlainObject(header) || !isPlainObject(claims)) return null;
  if ("crit" in header || "b64" in header) return null;
  const signatureLength = rs256SignatureLength(key);
  if (signatureLength === null) return null;
  let headerJson: string;
  let claimsJson: string;
  try {
    headerJson = JSON.stringify(header);
    // jose's SignJWT keeps a structured clone of the claims and serializes that.
    const cloned = structuredClone(claims) as Record<string, unknown>;
    for (const name of ["iat", "nbf", "exp"]) {
      const value = cloned[name];
      if (typeof value === "number" && !Number.isFinite(value)) return null;
    }
    claimsJson = JSON.stringify(cloned);
  } catch {
    return null;
  }
  const parsed: unknown = JSON.parse(headerJson);
  if (!isPlainObject(parsed) || (parsed as { alg?: unknown }).alg !== FAST_ALGORITHM) return null;
  const text = `${toBase64Url(utf8(headerJson))}.${toBase64Url(utf8(claimsJson))}`;
  return { text, bytes: utf8(text), signatureLength };
}

/**
 * The signature length of an RS256 private key jose would sign with (RSASSA-PKCS1-v1_5, SHA-256,
 * `sign` usage, at least 2048 bits), or null for any other key.
 */
function rs256SignatureLength(key: CryptoKey): number | null {
  const algorithm = key.algorithm as Partial<RsaHashedKeyAlgorithm>;
  if (key.type !== "private" || !key.usages.includes("sign")) return null;
  if (algorithm.name !== "RSASSA-PKCS1-v1_5" || algorithm.hash?.name !== "SHA-256") return null;
  const bits = algorithm.modulusLength;
  if (typeof bits !== "number" || bits < 2048 || bits % 8 !== 0) return null;
  return bits / 8;
}

/** jose's notion of a JSON object: an `[object Object]` whose prototype is `Object.prototype` or null. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  if (Object.prototype.toString.call(value) !== "[object Object]") return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === null || Object.getPrototypeOf(prototype) === null;
}
