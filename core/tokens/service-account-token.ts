/**
 * A service account's access token: an RFC 9068 JWT (`typ: at+jwt`) signed with the realm's
 * primary key, `sub` the account id, `client_id` its key, `aud` the issuer. The client_credentials
 * grant of the OIDC provider and the workload token exchange both issue it.
 *
 * @module
 */
import type { Clock } from "../clock.ts";
import type { KeyRing } from "../keys/ring.ts";
import { type RandomSource, randomToken } from "../random.ts";

/** The `typ` of service-account access tokens. */
export const SERVICE_ACCOUNT_TOKEN_TYPE = "at+jwt";

/** What a service-account access token is about. */
export interface ServiceAccountTokenInput {
  /** The realm whose primary key signs; also the `realm` claim. */
  readonly realmId: string;
  /** The issuer (svc's base URL); also the token's audience. */
  readonly issuer: string;
  /** The account: `id` becomes `sub`, `key` becomes `client_id`. */
  readonly account: { readonly id: string; readonly key: string };
  /** Scopes granted (the `scope` claim when not empty). */
  readonly scopes: readonly string[];
  /** Lifetime of the token in seconds. */
  readonly ttlSeconds: number;
  /** More claims (plugins' contributions); the registered ones above win. */
  readonly claims?: Record<string, unknown>;
}

/** A minted service-account access token. */
export interface ServiceAccountToken {
  /** The signed JWT. */
  readonly accessToken: string;
  /** Seconds until it expires (its lifetime). */
  readonly expiresIn: number;
  /** Its unique `jti` (16 random bytes, base64url). */
  readonly jti: string;
}

/** Mints a service account's access token. */
export async function mintServiceAccountToken(
  deps: { readonly keys: KeyRing; readonly clock: Clock; readonly random: RandomSource },
  input: ServiceAccountTokenInput,
): Promise<ServiceAccountToken> {
  const now = Math.floor(deps.clock.now() / 1000);
  const jti = randomToken(deps.random, 16);
  const key = await deps.keys.signingKey(input.realmId);
  const accessToken = await deps.keys.signJwt(key, SERVICE_ACCOUNT_TOKEN_TYPE, {
    ...input.claims,
    iss: input.issuer,
    sub: input.account.id,
    aud: input.issuer,
    client_id: input.account.key,
    realm: input.realmId,
    iat: now,
    exp: now + input.ttlSeconds,
    jti,
    ...(input.scopes.length > 0 ? { scope: input.scopes.join(" ") } : {}),
  });
  return { accessToken, expiresIn: input.ttlSeconds, jti };
}
