/**
 * DPoP (RFC 9449) at the HTTP edge: reads the `DPoP` header of a request, checks the proof
 * (`core/dpop/proof.ts`), uses its `jti` once in storage (a replay, concurrent or not, is
 * refused), asks for a server nonce when nonces are required (stateless, `core/dpop/nonce.ts`,
 * under a server secret every instance shares) and words the answers: `WWW-Authenticate: DPoP`
 * challenges at resources, `DPoP-Nonce` on every response when nonces are on.
 *
 * @module
 */
import type { Context } from "hono";
import type { Clock } from "../../core/clock.ts";
import { sha256Hex } from "../../core/digest.ts";
import { DpopNonces } from "../../core/dpop/nonce.ts";
import {
  DPOP_ALGORITHMS,
  DpopNonceError,
  DpopProofError,
  type VerifiedDpopProof,
  verifyDpopProof,
} from "../../core/dpop/proof.ts";
import { SvcError } from "../../core/errors.ts";
import type { RandomSource } from "../../core/random.ts";
import type { DpopStore } from "../../core/storage/dpop.ts";
import type { ServerSecretStore } from "../../core/storage/server-secrets.ts";

/** What a {@link DpopVerifier} needs. */
export interface DpopVerifierOptions {
  /** Where used proofs are recorded. */
  readonly store: DpopStore;
  /** The nonce secret's home (read once, created by the first instance that needs it). */
  readonly secrets: ServerSecretStore;
  /** The source of the current time (`iat` windows, nonce windows, `jti` expiry). */
  readonly clock: Clock;
  /** The source of random bytes (the nonce secret, created once). */
  readonly random: RandomSource;
  /** Whether proofs must carry a server nonce. */
  readonly nonceRequired: boolean;
  /** How old a proof's `iat` may be, seconds. */
  readonly proofMaxAgeSeconds: number;
  /** Nonce rotation period, seconds (default 300). */
  readonly nonceWindowSeconds?: number;
}

/** How a request's proof is checked. */
export interface DpopRequestCheck {
  /** The absolute URI the proof's `htu` must name (without query). */
  readonly url: string;
  /** The access token the proof accompanies (resource requests: `ath`). */
  readonly accessToken?: string;
  /** The key thumbprint the proof must use (the token's `cnf.jkt`). */
  readonly boundJkt?: string;
}

/** The space-separated algorithms a proof may use (`dpop_signing_alg_values_supported`, `algs=`). */
export const DPOP_ALGS: readonly string[] = DPOP_ALGORITHMS;

/** The name the nonce secret is stored under. */
export const DPOP_NONCE_SECRET = "dpop-nonce";

/** Checks DPoP proofs for one server. */
export class DpopVerifier {
  readonly #o: DpopVerifierOptions;
  #nonces: Promise<DpopNonces> | null = null;
  /** Each request's proof is checked (and its jti used) once, however many steps ask. */
  readonly #checked = new WeakMap<Request, { url: string; result: Promise<VerifiedDpopProof | null> }>();

  /** A verifier over `options`. */
  constructor(options: DpopVerifierOptions) {
    this.#o = options;
  }

  /** Whether proofs must carry a nonce. */
  get nonceRequired(): boolean {
    return this.#o.nonceRequired;
  }

  #nonceSource(): Promise<DpopNonces> {
    this.#nonces ??= this.#o.secrets.getOrCreate(DPOP_NONCE_SECRET, () => this.#o.random.bytes(32))
      .then((secret) => new DpopNonces(secret, this.#o.nonceWindowSeconds));
    // A failed read is retried by the next request.
    this.#nonces.catch(() => this.#nonces = null);
    return this.#nonces;
  }

  /** The nonce to hand out now, or null when nonces are off. */
  async currentNonce(): Promise<string | null> {
    if (!this.#o.nonceRequired) return null;
    return (await this.#nonceSource()).current(this.#o.clock.now());
  }

  /** Sets `DPoP-Nonce` on the response when nonces are on. */
  async provideNonce(c: Context): Promise<void> {
    const nonce = await this.currentNonce();
    if (nonce !== null) c.header("DPoP-Nonce", nonce);
  }

  /**
   * The request's proof, checked and its `jti` used; null when the request has no `DPoP`
   * header. Throws {@link DpopProofError} (also for two headers or a replay) or
   * {@link DpopNonceError}.
   */
  check(c: Context, check: DpopRequestCheck): Promise<VerifiedDpopProof | null> {
    const memo = this.#checked.get(c.req.raw);
    if (memo !== undefined && memo.url === check.url && check.accessToken === undefined) return memo.result;
    const result = this.#check(c, check);
    if (check.accessToken === undefined) this.#checked.set(c.req.raw, { url: check.url, result });
    return result;
  }

  async #check(c: Context, check: DpopRequestCheck): Promise<VerifiedDpopProof | null> {
    const header = c.req.raw.headers.get("DPoP");
    if (header === null) return null;
    // Several DPoP fields arrive joined by commas, which a compact JWS never contains.
    if (header.includes(",")) throw new DpopProofError("malformed");
    const now = this.#o.clock.now();
    const nonces = this.#o.nonceRequired ? await this.#nonceSource() : null;
    const proof = await verifyDpopProof(header.trim(), {
      method: c.req.method,
      url: check.url,
      now,
      maxAgeSeconds: this.#o.proofMaxAgeSeconds,
      accessToken: check.accessToken,
      boundJkt: check.boundJkt,
      nonce: nonces === null ? undefined : (nonce) => nonces.valid(nonce, now),
    });
    // Keyed by the key and the jti: a client's jti never blocks another client's proof.
    if (!await this.#o.store.useProof(sha256Hex(`${proof.jkt}.${proof.jti}`), new Date(proof.replayUntil))) {
      throw new DpopProofError("replayed");
    }
    return proof;
  }
}

/** The `WWW-Authenticate` challenge of a DPoP-protected resource for an error (RFC 9449 7.1). */
export function dpopChallenge(error: string | null, description?: string): string {
  const parts = [`algs="${DPOP_ALGS.join(" ")}"`];
  if (error !== null) parts.unshift(`error="${error}"`);
  if (description !== undefined) parts.push(`error_description="${description.replaceAll('"', "'")}"`);
  return `DPoP ${parts.join(", ")}`;
}

/**
 * A refused resource request in svc's error shape that also carries its `WWW-Authenticate`
 * challenge (and a fresh `DPoP-Nonce` for `use_dpop_nonce`): the error handler sets `headers`.
 */
export class DpopAuthError extends SvcError {
  /** Response headers the error handler adds. */
  readonly headers: Readonly<Record<string, string>>;
  /** An error `code` with its challenge headers (401 at resources, 400 where tokens are issued). */
  constructor(code: string, message: string, headers: Record<string, string>, status = 401) {
    super(code, message, status);
    this.headers = headers;
  }
}

/** Where svc itself checks DPoP proofs: the verifier and svc's public base URL (for `htu`). */
export interface DpopEdge {
  /** Checks a request's proof. */
  readonly verifier: DpopVerifier;
  /** svc's public base URL, the origin and path base every proof's `htu` names. */
  readonly baseUrl: string;
}

/** The URI a proof of this request must name as `htu`: svc's public base URL and the request path. */
export function requestHtu(c: Context, baseUrl: string): string {
  return baseUrl.replace(/\/+$/, "") + new URL(c.req.url).pathname;
}

/**
 * The key thumbprint of the DPoP proof of a request that issues tokens (svc's `/auth/login`,
 * `/auth/refresh`), or null without a `DPoP` header. A bad proof is 400 `invalid_dpop_proof`; a
 * missing or stale nonce 400 `use_dpop_nonce` with a fresh `DPoP-Nonce` (RFC 9449 5, 8).
 */
export async function issuingProofJkt(c: Context, edge: DpopEdge | undefined): Promise<string | null> {
  if (edge === undefined || c.req.raw.headers.get("DPoP") === null) return null;
  try {
    const proof = await edge.verifier.check(c, { url: requestHtu(c, edge.baseUrl) });
    await edge.verifier.provideNonce(c);
    return proof?.jkt ?? null;
  } catch (error) {
    if (error instanceof DpopNonceError) {
      const nonce = await edge.verifier.currentNonce();
      throw new DpopAuthError(error.code, error.message, nonce !== null ? { "DPoP-Nonce": nonce } : {}, 400);
    }
    if (error instanceof DpopProofError) {
      throw new DpopAuthError(error.code, "The DPoP proof is invalid.", {}, 400);
    }
    throw error;
  }
}

/** The {@link DpopAuthError} of a proof or nonce failure at a resource. */
export async function resourceProofError(verifier: DpopVerifier, error: unknown): Promise<DpopAuthError> {
  if (error instanceof DpopNonceError) {
    const nonce = await verifier.currentNonce();
    return new DpopAuthError(error.code, error.message, {
      "WWW-Authenticate": dpopChallenge("use_dpop_nonce", "Resource server requires nonce in DPoP proof"),
      ...(nonce !== null ? { "DPoP-Nonce": nonce } : {}),
    });
  }
  if (error instanceof DpopProofError) {
    return new DpopAuthError(error.code, "The DPoP proof is invalid.", {
      "WWW-Authenticate": dpopChallenge("invalid_dpop_proof", "Invalid DPoP proof"),
    });
  }
  throw error;
}

export { DpopNonceError, DpopProofError };
