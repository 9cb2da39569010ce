/**
 * The public keys an OAuth client authenticates with under `private_key_jwt` (RFC 7523, OIDC
 * Core 9): a JWK Set registered with the client (public members only) or the https URL where the
 * client publishes it (http only for a loopback or private host the operator allows, the same
 * allow-list as webhook receivers).
 *
 * @module
 */
import { checkReceiverUrl, PUBLIC_RECEIVERS_ONLY, type ReceiverPolicy } from "../webhooks/receivers.ts";

/** The signature algorithms accepted on client assertions (never `none`, never HMAC). */
export const CLIENT_ASSERTION_ALGORITHMS: readonly string[] = ["RS256", "PS256", "ES256", "EdDSA"];

/** The `client_assertion_type` of RFC 7523 JWT client authentication. */
export const JWT_BEARER_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/** Most keys a registered JWK Set may hold. */
export const MAX_CLIENT_KEYS = 10;

/** Members of a JWK that belong to a private or symmetric key. */
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

const B64URL = /^[A-Za-z0-9_-]{1,2048}$/;

function keyProblem(key: unknown, at: string): string | null {
  if (typeof key !== "object" || key === null || Array.isArray(key)) return `${at} is not a JSON object`;
  const jwk = key as Record<string, unknown>;
  for (const member of PRIVATE_MEMBERS) {
    if (member in jwk) return `${at} holds the private member "${member}": register public keys only`;
  }
  const text = (name: string) => typeof jwk[name] === "string" && B64URL.test(jwk[name] as string);
  switch (jwk.kty) {
    case "RSA":
      if (!text("n") || !text("e")) return `${at}: an RSA key needs n and e (base64url)`;
      if ((jwk.n as string).length < 342) return `${at}: an RSA key has at least 2048 bits`;
      break;
    case "EC":
      if (jwk.crv !== "P-256" || !text("x") || !text("y")) return `${at}: an EC key is P-256 with x and y`;
      break;
    case "OKP":
      if (jwk.crv !== "Ed25519" || !text("x")) return `${at}: an OKP key is Ed25519 with x`;
      break;
    default:
      return `${at}: kty must be RSA, EC or OKP`;
  }
  if (jwk.alg !== undefined && !CLIENT_ASSERTION_ALGORITHMS.includes(jwk.alg as string)) {
    return `${at}: alg must be one of ${CLIENT_ASSERTION_ALGORITHMS.join(", ")}`;
  }
  if (jwk.use !== undefined && jwk.use !== "sig") return `${at}: use must be "sig"`;
  if (jwk.kid !== undefined && (typeof jwk.kid !== "string" || jwk.kid.length > 200)) {
    return `${at}: kid must be a string of at most 200 characters`;
  }
  return null;
}

/**
 * Why a JWK Set cannot be registered for `private_key_jwt`, or null: `{keys: [...]}` with 1 to
 * {@link MAX_CLIENT_KEYS} public RSA (≥ 2048 bits), P-256 or Ed25519 signing keys, no private
 * or symmetric member, distinct `kid`s.
 */
export function clientJwksProblem(jwks: unknown): string | null {
  if (typeof jwks !== "object" || jwks === null || !Array.isArray((jwks as { keys?: unknown }).keys)) {
    return "jwks must be a JWK Set: {keys: [...]}";
  }
  const keys = (jwks as { keys: unknown[] }).keys;
  if (keys.length < 1 || keys.length > MAX_CLIENT_KEYS) return `jwks holds 1 to ${MAX_CLIENT_KEYS} keys`;
  const kids = new Set<string>();
  for (let i = 0; i < keys.length; i++) {
    const problem = keyProblem(keys[i], `jwks.keys[${i}]`);
    if (problem !== null) return problem;
    const kid = (keys[i] as { kid?: string }).kid;
    if (kid !== undefined) {
      if (kids.has(kid)) return `jwks.keys[${i}]: kid ${JSON.stringify(kid)} is used twice`;
      kids.add(kid);
    }
  }
  return null;
}

/**
 * Why a client's `jwksUri` cannot be registered, or null: an https URL without credentials or
 * fragment whose host is not private (unless `policy` allows it); http only for a private or
 * loopback host the policy allows (development and in-cluster key servers).
 */
export function clientJwksUriProblem(uri: string, policy: ReceiverPolicy): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return "jwksUri must be an absolute URL";
  }
  if (url.hash !== "") return "jwksUri must not have a fragment";
  const refusal = checkReceiverUrl(uri, policy);
  if (refusal === "private_address") {
    return "jwksUri points at a private or loopback address the operator does not allow (outbound.allowPrivate)";
  }
  if (refusal !== null) return "jwksUri must be an https URL without credentials";
  if (url.protocol === "http:" && checkReceiverUrl(uri, PUBLIC_RECEIVERS_ONLY) !== "private_address") {
    return "jwksUri must be https (http only for an allowed private or loopback host)";
  }
  return null;
}
