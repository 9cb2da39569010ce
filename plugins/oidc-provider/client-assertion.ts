/**
 * `private_key_jwt` client authentication (RFC 7523 section 2.2, OIDC Core 9): the client sends
 * `client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer` and a
 * `client_assertion` JWT signed with one of its registered keys (RS256, PS256, ES256 or EdDSA;
 * never `none` or HMAC). The assertion's `iss` and `sub` are the client id, its `aud` names the
 * token endpoint, the endpoint called or the issuer, `exp` is required and at most
 * {@link MAX_ASSERTION_LIFETIME_SECONDS} ahead, and its `jti` is consumed once (svc's
 * consumed-token store, until `exp`), after the signature verified.
 *
 * @module
 */
import { createLocalJWKSet, decodeJwt, jwtVerify, type JWTVerifyGetKey } from "jose";
import {
  CLIENT_ASSERTION_ALGORITHMS,
  clientJwksUriProblem,
  type ClientRecord,
  JWT_BEARER_ASSERTION_TYPE,
  outboundPolicyFromConfig,
  type PluginContext,
} from "../../mod.ts";
import { PATHS } from "./paths.ts";

/** What checking an assertion needs of the provider (a `Provider` of `shared.ts` has all of it). */
export interface AssertionContext {
  /** The plugin's context: svc's config (outbound policy), clock and storage (consumed jtis). */
  readonly ctx: Pick<PluginContext<unknown>, "svcConfig" | "clock" | "storage">;
  /** The provider's realm. */
  readonly realmId: string;
  /** The issuer, one of the accepted audiences. */
  readonly issuer: string;
  /** Absolute URL of a provider path. */
  url(path: string): string;
  /** The cached key set published at a client's `jwksUri`. */
  remoteJwks(uri: string): JWTVerifyGetKey;
}

/** The furthest ahead an assertion's `exp` may be. */
export const MAX_ASSERTION_LIFETIME_SECONDS = 300;

/** Leeway on `exp`, `nbf` and `iat` for clock drift. */
const LEEWAY_SECONDS = 30;

/** Why an assertion was refused (always answered `invalid_client`). */
export class ClientAssertionError extends Error {}

/** The client id an assertion claims to come from (unverified), or null when it is not a JWT. */
export function assertionClientId(assertion: string): string | null {
  try {
    const { sub, iss } = decodeJwt(assertion);
    return typeof sub === "string" && sub === iss ? sub : null;
  } catch {
    return null;
  }
}

/**
 * Verifies a client assertion for `client` (a `private_key_jwt` client) presented at the
 * endpoint `endpointPath` (`/oidc/token`…). Throws {@link ClientAssertionError} when it is not acceptable.
 */
export async function verifyClientAssertion(
  p: AssertionContext,
  endpointPath: string,
  client: ClientRecord,
  form: Record<string, string>,
): Promise<void> {
  if (form.client_assertion_type !== JWT_BEARER_ASSERTION_TYPE) {
    throw new ClientAssertionError("unsupported client_assertion_type");
  }
  if (client.tokenEndpointAuthMethod !== "private_key_jwt") {
    throw new ClientAssertionError("the client does not use private_key_jwt");
  }
  let keys: JWTVerifyGetKey;
  if (client.jwks !== null) {
    keys = createLocalJWKSet({ keys: client.jwks.keys.map((key) => ({ ...key })) });
  } else if (client.jwksUri !== null) {
    // The URL was checked at registration; the operator's allow-list may have changed since.
    const policy = outboundPolicyFromConfig(p.ctx.svcConfig);
    if (clientJwksUriProblem(client.jwksUri, policy) !== null) {
      throw new ClientAssertionError("jwksUri not allowed");
    }
    keys = p.remoteJwks(client.jwksUri);
  } else {
    throw new ClientAssertionError("no keys");
  }
  const now = p.ctx.clock.now();
  const audiences = [...new Set([p.url(endpointPath), p.url(PATHS.token), p.issuer])];
  let payload;
  try {
    ({ payload } = await jwtVerify(form.client_assertion, keys, {
      algorithms: [...CLIENT_ASSERTION_ALGORITHMS],
      issuer: client.clientId,
      subject: client.clientId,
      audience: audiences,
      currentDate: new Date(now),
      clockTolerance: LEEWAY_SECONDS,
      requiredClaims: ["exp", "jti"],
    }));
  } catch {
    throw new ClientAssertionError("the assertion does not verify");
  }
  const exp = payload.exp!;
  if (exp > Math.floor(now / 1000) + MAX_ASSERTION_LIFETIME_SECONDS + LEEWAY_SECONDS) {
    throw new ClientAssertionError("exp too far ahead");
  }
  if (typeof payload.iat === "number" && payload.iat > Math.floor(now / 1000) + LEEWAY_SECONDS) {
    throw new ClientAssertionError("iat in the future");
  }
  const jti = payload.jti!;
  if (jti.length < 1 || jti.length > 200) throw new ClientAssertionError("jti length");
  const consumed = await p.ctx.storage.consumedTokens.consume(
    `oidc-client-assertion:${p.realmId}:${client.clientId}:${jti}`,
    new Date((exp + LEEWAY_SECONDS) * 1000),
  );
  if (!consumed) throw new ClientAssertionError("jti replayed");
}
