/**
 * DPoP proof validation (RFC 9449 section 4.3), pure: no storage, no I/O. What it checks, in
 * order, each failure a {@link DpopProofError} with its own `reason`:
 *
 * 1. one compact JWS of bounded size (`malformed`);
 * 2. `typ` is `dpop+jwt` (`typ`);
 * 3. `alg` is asymmetric and in the allow-list (`alg`);
 * 4. `jwk` is a public key of a known type, of bounded size, without private members (`jwk`);
 * 5. the signature verifies with that `jwk` (`signature`);
 * 6. `jti`, `htm`, `htu` and `iat` are present and well formed (`claims`);
 * 7. `htm` is the request's method (`htm`);
 * 8. `htu` is the request's URI without query and fragment, both normalized (`htu`);
 * 9. `iat` lies within the acceptance window around `now` (`iat`);
 * 10. with an access token: `ath` is its base64url SHA-256 (`ath`); with a key it must be bound
 *     to: the proof's key thumbprint (RFC 7638) matches (`key_mismatch`);
 * 11. with a nonce policy: `nonce` is present and current ({@link DpopNonceError}).
 *
 * The single use of `jti` is the caller's (a store): {@link VerifiedDpopProof.replayUntil} says
 * how long it must be remembered (after that `iat` alone refuses the proof).
 *
 * @module
 */
import { sha256 } from "@noble/hashes/sha2.js";
import {
  calculateJwkThumbprint,
  decodeProtectedHeader,
  EmbeddedJWK,
  errors,
  type JWK,
  jwtVerify,
} from "jose";
import { toBase64Url, utf8 } from "../encoding.ts";
import { SvcError } from "../errors.ts";

/** The asymmetric JWS algorithms a proof may use (no `none`, no HMAC). */
export const DPOP_ALGORITHMS = [
  "ES256",
  "ES384",
  "ES512",
  "PS256",
  "PS384",
  "PS512",
  "RS256",
  "RS384",
  "RS512",
  "EdDSA",
] as const;

/** The longest proof accepted (characters): bounds the work of a request. */
export const MAX_PROOF_LENGTH = 8192;

/** Why a proof was refused (for logs and tests; the wire answer is `invalid_dpop_proof`). */
export type DpopProofReason =
  | "malformed"
  | "typ"
  | "alg"
  | "jwk"
  | "signature"
  | "claims"
  | "htm"
  | "htu"
  | "iat"
  | "ath"
  | "key_mismatch"
  | "replayed";

/** A DPoP proof is not valid. Code `invalid_dpop_proof`. */
export class DpopProofError extends SvcError {
  /** Why; never sent beyond a short description. */
  readonly reason: DpopProofReason;
  /** A refusal for `reason`. */
  constructor(reason: DpopProofReason) {
    super("invalid_dpop_proof", `The DPoP proof is invalid (${reason}).`, 401);
    this.reason = reason;
  }
}

/** The server wants a (fresh) nonce in the proof. Code `use_dpop_nonce`. */
export class DpopNonceError extends SvcError {
  /** Whether a nonce was sent at all (`false`: missing; `true`: stale or forged). */
  readonly sent: boolean;
  /** A refusal; `sent` says whether the proof carried a nonce. */
  constructor(sent: boolean) {
    super("use_dpop_nonce", "Resend the request with the DPoP-Nonce the server provided.", 401);
    this.sent = sent;
  }
}

/** What a proof is checked against. */
export interface DpopProofCheck {
  /** The request's method (`POST`). */
  readonly method: string;
  /** The request's absolute URI (query and fragment are ignored). */
  readonly url: string;
  /** The time, in clock milliseconds. */
  readonly now: number;
  /** How old `iat` may be, in seconds (default {@link DEFAULT_MAX_AGE_SECONDS}). */
  readonly maxAgeSeconds?: number;
  /** How far ahead of `now` `iat` may be, in seconds (default {@link DEFAULT_FUTURE_SKEW_SECONDS}). */
  readonly futureSkewSeconds?: number;
  /** The algorithms accepted (default: {@link DPOP_ALGORITHMS}; only these ever are). */
  readonly algorithms?: readonly string[];
  /** The access token presented with the proof (resource requests): `ath` must be its hash. */
  readonly accessToken?: string;
  /** The thumbprint the proof's key must have (the token's `cnf.jkt`). */
  readonly boundJkt?: string;
  /** Whether a nonce is required, and which are current; absent: nonces are not used. */
  readonly nonce?: (nonce: string) => boolean;
}

/** A proof that passed every check. */
export interface VerifiedDpopProof {
  /** The JWK SHA-256 thumbprint (RFC 7638) of the proof's key, base64url. */
  readonly jkt: string;
  /** The proof's unique id. */
  readonly jti: string;
  /** Issued at, seconds. */
  readonly iat: number;
  /** Until when (clock milliseconds) the proof would be accepted: remember its `jti` that long. */
  readonly replayUntil: number;
}

/** Default acceptance window for `iat` in the past, seconds. */
export const DEFAULT_MAX_AGE_SECONDS = 120;
/** Default tolerance for `iat` in the future (clock skew), seconds. */
export const DEFAULT_FUTURE_SKEW_SECONDS = 10;

const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];
const CURVES: Record<string, readonly string[]> = { EC: ["P-256", "P-384", "P-521"], OKP: ["Ed25519"] };

/** The base64url SHA-256 of an access token (`ath`). */
export function accessTokenHash(accessToken: string): string {
  return toBase64Url(sha256(utf8(accessToken)));
}

/** The URI a proof's `htu` is compared with: scheme, authority and path, normalized; null if not a URL. */
export function normalizeHtu(uri: string): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return null;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return null;
  // The URL parser lowercases scheme and host, drops default ports, resolves dot segments and
  // percent-encodes; upper-case percent escapes make equal paths compare equal.
  const path = url.pathname.replace(/%[0-9a-f]{2}/gi, (escape) => escape.toUpperCase());
  return `${url.protocol}//${url.host}${path}`;
}

function jwkAcceptable(jwk: unknown, alg: string): jwk is JWK {
  if (typeof jwk !== "object" || jwk === null || Array.isArray(jwk)) return false;
  const key = jwk as Record<string, unknown>;
  if (PRIVATE_MEMBERS.some((member) => member in key)) return false;
  if (JSON.stringify(key).length > 2048) return false;
  const kty = key.kty;
  if (kty === "RSA") {
    if (!alg.startsWith("RS") && !alg.startsWith("PS")) return false;
    // 2048 to 4096 bit moduli (base64url: 342 to 683 characters).
    return typeof key.n === "string" && key.n.length >= 342 && key.n.length <= 683 &&
      typeof key.e === "string" &&
      key.e.length <= 8;
  }
  if (kty === "EC") {
    const crv = key.crv;
    const expected = alg === "ES256" ? "P-256" : alg === "ES384" ? "P-384" : alg === "ES512" ? "P-521" : null;
    return typeof crv === "string" && CURVES.EC.includes(crv) && crv === expected &&
      typeof key.x === "string" &&
      typeof key.y === "string";
  }
  if (kty === "OKP") {
    return alg === "EdDSA" && typeof key.crv === "string" && CURVES.OKP.includes(key.crv) &&
      typeof key.x === "string";
  }
  return false;
}

/**
 * Checks a DPoP proof (the `DPoP` header's value) against a request; resolves to its key's
 * thumbprint and `jti`, or rejects with {@link DpopProofError} or {@link DpopNonceError}.
 */
export async function verifyDpopProof(proof: string, check: DpopProofCheck): Promise<VerifiedDpopProof> {
  if (
    typeof proof !== "string" || proof.length > MAX_PROOF_LENGTH ||
    !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(proof)
  ) {
    throw new DpopProofError("malformed");
  }
  let header;
  try {
    header = decodeProtectedHeader(proof);
  } catch {
    throw new DpopProofError("malformed");
  }
  if (header.typ !== "dpop+jwt") throw new DpopProofError("typ");
  const allowed = (check.algorithms ?? DPOP_ALGORITHMS).filter((alg) =>
    (DPOP_ALGORITHMS as readonly string[]).includes(alg)
  );
  if (typeof header.alg !== "string" || !allowed.includes(header.alg)) throw new DpopProofError("alg");
  if (!jwkAcceptable(header.jwk, header.alg)) throw new DpopProofError("jwk");
  let payload: Record<string, unknown>;
  try {
    // The clock is checked below (iat window); jose only verifies the signature and the typ here.
    ({ payload } = await jwtVerify(proof, EmbeddedJWK, {
      typ: "dpop+jwt",
      algorithms: allowed,
      currentDate: new Date(check.now),
      clockTolerance: Number.MAX_SAFE_INTEGER,
    }));
  } catch (error) {
    // jose checks the registered claims' types (iat, exp, nbf) after the signature.
    throw new DpopProofError(error instanceof errors.JWTClaimValidationFailed ? "claims" : "signature");
  }
  const { jti, htm, htu, iat, ath, nonce } = payload;
  if (
    typeof jti !== "string" || jti.length === 0 || jti.length > 256 || typeof htm !== "string" ||
    htm.length > 16 || typeof htu !== "string" || htu.length > 2048 || typeof iat !== "number" ||
    !Number.isFinite(iat) || (ath !== undefined && typeof ath !== "string") ||
    (nonce !== undefined && (typeof nonce !== "string" || nonce.length > 256))
  ) {
    throw new DpopProofError("claims");
  }
  if (htm !== check.method.toUpperCase()) throw new DpopProofError("htm");
  const expected = normalizeHtu(check.url);
  if (expected === null || normalizeHtu(htu) !== expected) throw new DpopProofError("htu");
  const maxAge = check.maxAgeSeconds ?? DEFAULT_MAX_AGE_SECONDS;
  const skew = check.futureSkewSeconds ?? DEFAULT_FUTURE_SKEW_SECONDS;
  const nowSeconds = check.now / 1000;
  if (iat < nowSeconds - maxAge || iat > nowSeconds + skew) throw new DpopProofError("iat");
  if (check.accessToken !== undefined) {
    if (ath !== accessTokenHash(check.accessToken)) throw new DpopProofError("ath");
  }
  const jkt = await calculateJwkThumbprint(header.jwk, "sha256");
  if (check.boundJkt !== undefined && check.boundJkt !== jkt) throw new DpopProofError("key_mismatch");
  if (check.nonce !== undefined) {
    if (nonce === undefined) throw new DpopNonceError(false);
    if (!check.nonce(nonce)) throw new DpopNonceError(true);
  }
  return { jkt, jti, iat, replayUntil: Math.ceil((iat + maxAge) * 1000) };
}
