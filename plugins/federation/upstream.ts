/**
 * Talking to an upstream OpenID provider: its discovery document (fetched from
 * `<issuer>/.well-known/openid-configuration`, cached for a while by the injected clock), the
 * authorization code exchange at its token endpoint (`client_secret_basic` or
 * `client_secret_post`, as it advertises), and the validation of its ID token with jose against
 * its JWKS: `iss` exactly the issuer, `aud` containing the client id, `azp` when there are
 * several audiences, the `nonce`, `exp` and `iat`, and an algorithm among those it advertises
 * (asymmetric only; never `none`).
 *
 * Every request goes through svc's outbound guard (`PluginContext.outbound`): an issuer, token
 * endpoint or JWKS URL on a private, loopback, link-local or metadata address is refused after DNS
 * resolution (unless the operator allows it), discovery follows at most {@link
 * DISCOVERY_REDIRECTS} redirects, each checked again, the token endpoint none (the client secret
 * is never re-sent elsewhere), and bodies are capped.
 *
 * Errors are {@link UpstreamError}s with a stable code; their messages never carry a secret, a
 * code or a token.
 *
 * @module
 */
import { createRemoteJWKSet, customFetch, type JWTPayload, jwtVerify } from "jose";
import { type Clock, constantTimeEqual, type OutboundFetch, SvcError } from "../../mod.ts";

/** What svc reads from an upstream's discovery document. */
export interface UpstreamMetadata {
  readonly issuer: string;
  readonly authorizationEndpoint: string;
  readonly tokenEndpoint: string;
  readonly jwksUri: string;
  /** Asymmetric ID token algorithms it advertises (default `RS256`). */
  readonly idTokenAlgorithms: readonly string[];
  /** `client_secret_basic` or `client_secret_post`. */
  readonly tokenAuthMethod: "client_secret_basic" | "client_secret_post";
}

/** The upstream misbehaved or refused; `code` is stable, the message names no secret. */
export class UpstreamError extends SvcError {
  constructor(code: string, message: string) {
    super(code, message, 502);
    this.name = "UpstreamError";
  }
}

/** ID token algorithms svc accepts from an upstream (asymmetric; `none` and HMAC never). */
export const ACCEPTED_ALGORITHMS: readonly string[] = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
];

/** Redirects followed when fetching a discovery document (each hop checked by the guard again). */
export const DISCOVERY_REDIRECTS = 3;

/** Largest discovery document, token answer or key set read, in bytes. */
const MAX_UPSTREAM_BYTES = 256 * 1024;

/** How upstream requests are made. */
export interface UpstreamOptions {
  readonly clock: Clock;
  /** svc's outbound guard (a test builds one over a fake `fetch`). */
  readonly fetch: OutboundFetch;
  /** How long a discovery document is reused, in milliseconds. */
  readonly discoveryTtlMs: number;
  /** Whether `http:` issuers are accepted (development and tests only). */
  readonly allowHttp: boolean;
  /** Per-request timeout, in milliseconds (default 10 s). */
  readonly timeoutMs?: number;
  /** Clock skew tolerated on `exp` and `iat`, in seconds (default 60). */
  readonly clockToleranceSeconds?: number;
}

const str = (value: unknown): value is string => typeof value === "string" && value !== "";

/** The upstream providers svc talks to, with their discovery documents and key sets cached. */
export class Upstreams {
  readonly #options: UpstreamOptions;
  readonly #outbound: OutboundFetch;
  readonly #metadata = new Map<string, { value: UpstreamMetadata; expiresAt: number }>();
  readonly #jwks = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

  constructor(options: UpstreamOptions) {
    this.#options = options;
    this.#outbound = options.fetch;
  }

  /** Whether an issuer URL is acceptable (https, or http when allowed; no query or fragment). */
  issuerAllowed(issuer: string): boolean {
    try {
      const url = new URL(issuer);
      return (url.protocol === "https:" || (this.#options.allowHttp && url.protocol === "http:")) &&
        url.search === "" && url.hash === "" && url.username === "" && url.password === "";
    } catch {
      return false;
    }
  }

  #endpoint(value: unknown, what: string): string {
    if (!str(value) || !this.issuerAllowed(value.split("?")[0])) {
      throw new UpstreamError("federation_upstream_invalid", `The upstream's ${what} is not a usable URL.`);
    }
    return value;
  }

  /** The discovery document of `issuer` (cached), checked: its `issuer` must be exactly `issuer`. */
  async metadata(issuer: string): Promise<UpstreamMetadata> {
    const now = this.#options.clock.now();
    const cached = this.#metadata.get(issuer);
    if (cached !== undefined && cached.expiresAt > now) return cached.value;
    if (!this.issuerAllowed(issuer)) {
      throw new UpstreamError("federation_upstream_invalid", "The upstream issuer is not an allowed URL.");
    }
    const url = `${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
    let doc: Record<string, unknown>;
    try {
      const res = await this.#outbound(url, {
        headers: { Accept: "application/json" },
        maxRedirects: DISCOVERY_REDIRECTS,
        maxResponseBytes: MAX_UPSTREAM_BYTES,
        timeoutMs: this.#options.timeoutMs ?? 10_000,
      });
      if (!res.ok) throw new Error(`status ${res.status}`);
      doc = await res.json();
    } catch {
      throw new UpstreamError(
        "federation_upstream_unavailable",
        "The upstream's discovery document cannot be read.",
      );
    }
    if (typeof doc !== "object" || doc === null || doc.issuer !== issuer) {
      throw new UpstreamError(
        "federation_upstream_invalid",
        "The upstream's discovery document names another issuer.",
      );
    }
    const advertised = Array.isArray(doc.id_token_signing_alg_values_supported)
      ? doc.id_token_signing_alg_values_supported.filter(str)
      : ["RS256"];
    const idTokenAlgorithms = advertised.filter((alg) => ACCEPTED_ALGORITHMS.includes(alg));
    if (idTokenAlgorithms.length === 0) {
      throw new UpstreamError(
        "federation_upstream_invalid",
        "The upstream signs ID tokens with no accepted algorithm.",
      );
    }
    const methods = Array.isArray(doc.token_endpoint_auth_methods_supported)
      ? doc.token_endpoint_auth_methods_supported.filter(str)
      : ["client_secret_basic"];
    const tokenAuthMethod = methods.includes("client_secret_basic")
      ? "client_secret_basic"
      : methods.includes("client_secret_post")
      ? "client_secret_post"
      : null;
    if (tokenAuthMethod === null) {
      throw new UpstreamError(
        "federation_upstream_invalid",
        "The upstream's token endpoint takes neither client_secret_basic nor client_secret_post.",
      );
    }
    const value: UpstreamMetadata = {
      issuer,
      authorizationEndpoint: this.#endpoint(doc.authorization_endpoint, "authorization endpoint"),
      tokenEndpoint: this.#endpoint(doc.token_endpoint, "token endpoint"),
      jwksUri: this.#endpoint(doc.jwks_uri, "JWKS URL"),
      idTokenAlgorithms,
      tokenAuthMethod,
    };
    this.#metadata.set(issuer, { value, expiresAt: now + this.#options.discoveryTtlMs });
    return value;
  }

  /**
   * Exchanges an authorization code at the token endpoint; answers the ID token. The client
   * secret is sent the way the upstream advertises and never appears in an error.
   */
  async exchangeCode(
    metadata: UpstreamMetadata,
    client: { readonly clientId: string; readonly clientSecret: string },
    code: string,
    redirectUri: string,
    codeVerifier: string,
  ): Promise<string> {
    const form = new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: redirectUri,
      code_verifier: codeVerifier,
    });
    const headers: Record<string, string> = {
      "Content-Type": "application/x-www-form-urlencoded",
      Accept: "application/json",
    };
    if (metadata.tokenAuthMethod === "client_secret_basic") {
      const encode = (text: string) => encodeURIComponent(text).replaceAll("%20", "+");
      headers.Authorization = `Basic ${btoa(`${encode(client.clientId)}:${encode(client.clientSecret)}`)}`;
    } else {
      form.set("client_id", client.clientId);
      form.set("client_secret", client.clientSecret);
    }
    let body: Record<string, unknown>;
    let status: number;
    try {
      const res = await this.#outbound(metadata.tokenEndpoint, {
        method: "POST",
        headers,
        body: form,
        maxRedirects: 0,
        maxResponseBytes: MAX_UPSTREAM_BYTES,
        timeoutMs: this.#options.timeoutMs ?? 10_000,
      });
      status = res.status;
      body = await res.json().catch(() => ({}));
    } catch {
      throw new UpstreamError(
        "federation_upstream_unavailable",
        "The upstream's token endpoint cannot be reached.",
      );
    }
    if (status !== 200) {
      throw new UpstreamError("federation_code_refused", "The upstream refused the authorization code.");
    }
    if (!str(body.id_token)) {
      throw new UpstreamError("federation_upstream_invalid", "The upstream answered no ID token.");
    }
    return body.id_token;
  }

  /** Validates an ID token (see the module doc); answers its claims. */
  async verifyIdToken(
    metadata: UpstreamMetadata,
    idToken: string,
    expected: { readonly clientId: string; readonly nonce: string },
  ): Promise<JWTPayload & { sub: string }> {
    let jwks = this.#jwks.get(metadata.jwksUri);
    if (jwks === undefined) {
      const outbound = this.#outbound;
      jwks = createRemoteJWKSet(new URL(metadata.jwksUri), {
        timeoutDuration: this.#options.timeoutMs ?? 10_000,
        [customFetch]: (url: string, init: RequestInit) =>
          outbound(url, { ...init, maxRedirects: 0, maxResponseBytes: MAX_UPSTREAM_BYTES }),
      });
      this.#jwks.set(metadata.jwksUri, jwks);
    }
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(idToken, jwks, {
        issuer: metadata.issuer,
        audience: expected.clientId,
        algorithms: [...metadata.idTokenAlgorithms],
        currentDate: new Date(this.#options.clock.now()),
        clockTolerance: this.#options.clockToleranceSeconds ?? 60,
        requiredClaims: ["iss", "sub", "aud", "exp", "iat"],
      }));
    } catch {
      throw new UpstreamError("federation_id_token_invalid", "The upstream's ID token is not valid.");
    }
    const refuse = () => {
      throw new UpstreamError("federation_id_token_invalid", "The upstream's ID token is not valid.");
    };
    if (payload.iss !== metadata.issuer) refuse();
    // jose checks exp (and nbf); an ID token issued in the future is refused here.
    const toleranceMs = (this.#options.clockToleranceSeconds ?? 60) * 1000;
    if (typeof payload.iat !== "number" || payload.iat * 1000 > this.#options.clock.now() + toleranceMs) {
      refuse();
    }
    const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
    if (!audiences.includes(expected.clientId)) refuse();
    if (audiences.length > 1 || payload.azp !== undefined) {
      if (payload.azp !== expected.clientId) refuse();
    }
    const nonce = payload.nonce;
    if (typeof nonce !== "string" || !constantTimeEqual(nonce, expected.nonce)) refuse();
    if (!str(payload.sub) || payload.sub.length > 255) refuse();
    return payload as JWTPayload & { sub: string };
  }
}
