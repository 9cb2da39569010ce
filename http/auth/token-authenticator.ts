/**
 * The authenticator of real servers. How credentials are presented:
 *
 * - `Authorization: Bearer <access token>`: an `at+svc` JWT (APIs, apps, machines);
 * - `Authorization: DPoP <access token>` with a `DPoP` proof header: a DPoP-bound `at+svc`
 *   (`cnf.jkt`, RFC 9449); a bound token is refused as Bearer or as a cookie;
 * - `Authorization: Bearer sak_…`: an API key, acting as its owner;
 * - `Authorization: Basic base64(<key>:<secret>)`: a service account of the default realm;
 *   `<realm name>/<key>` as the user name names another realm;
 * - otherwise the `svc_at` cookie (browsers), for which every state-changing request must
 *   also carry the double-submit CSRF header.
 *
 * An `Authorization` header always wins: cookies are then ignored. A request with neither is
 * anonymous (routes that need a caller answer 401 `unauthenticated`); a bad credential is
 * 401 `invalid_token` (bearer, cookie) or `invalid_credentials` (Basic).
 *
 * An access token whose session ended (logout, reset, suspension…) is refused at once, like a
 * bad one: its `sid` is looked up in the instance's ended-session set after verification (the
 * verified-token cache included), a map lookup; storage is read only when that set overflowed.
 * An API key works only while its owner can act (see `core/credentials/api-keys.ts`).
 *
 * @module
 */
import type { Clock } from "../../core/clock.ts";
import { authenticateApiKey, isApiKeyShape } from "../../core/credentials/api-keys.ts";
import { authenticateServiceAccount } from "../../core/credentials/service-accounts.ts";
import { fromBase64, fromUtf8 } from "../../core/encoding.ts";
import { SvcError } from "../../core/errors.ts";
import { InvalidTokenError } from "../../core/tokens/errors.ts";
import type { TokenService } from "../../core/tokens/service.ts";
import type { AccessTokenClaims } from "../../core/tokens/types.ts";
import type { SessionEndStatus } from "../../core/sessions/ended.ts";
import type { Storage } from "../../core/storage/storage.ts";
import { ACCESS_COOKIE, readCookie } from "./cookies.ts";
import { isStateChanging, requireCsrf } from "./csrf.ts";
import type { Authenticator, Principal } from "./principal.ts";
import { containsNul } from "../validate.ts";
import { DpopAuthError, dpopChallenge, type DpopVerifier, resourceProofError } from "./dpop.ts";

/** A service-account key or secret did not match. Code `invalid_credentials`, status 401. */
export class InvalidCredentialsError extends SvcError {
  constructor() {
    super("invalid_credentials", "The credentials are invalid.", 401);
  }
}

/** What the token authenticator needs. */
export interface TokenAuthenticatorOptions {
  /** Verifies access tokens (`at+svc`); its issuer is the default audience. */
  tokens: TokenService;
  /** Reads API keys and their owners, service accounts, realms, and sessions the ended-session set cannot vouch for. */
  storage: Pick<Storage, "apiKeys" | "serviceAccounts" | "realms" | "users" | "sessions">;
  /** The time API-key expiry and service-account secrets are judged at. */
  clock: Clock;
  /** The ended-session set (without one, access tokens live until `exp` whatever their session). */
  endedSessions?: { status(sessionId: string, issuedAt: number): SessionEndStatus };
  /** The audiences svc's own API accepts (default: the issuer). */
  audiences?: readonly string[];
  /** DPoP proofs of bound tokens, and svc's public base URL (the proofs' `htu`); without it, DPoP is refused. */
  dpop?: { readonly verifier: DpopVerifier; readonly baseUrl: string };
}

/** The refusal of a DPoP-bound token presented without its proof (as Bearer or a cookie). */
function boundTokenRefused(): DpopAuthError {
  return new DpopAuthError("invalid_token", "The token is invalid or expired.", {
    "WWW-Authenticate": dpopChallenge("invalid_token", "DPoP-bound access token requires the DPoP scheme"),
  });
}

/** The principal of verified access-token claims. */
export function principalOfClaims(claims: AccessTokenClaims): Principal {
  return {
    kind: "User",
    userId: claims.sub,
    realmId: claims.realm,
    orgId: claims.org ?? null,
    sessionId: claims.sid,
    mfa: claims.mfa,
    audience: claims.aud,
    act: claims.act === undefined ? null : { actorId: claims.act.sub, impersonationId: claims.act.imp },
    expiresAt: claims.exp * 1000,
    ...(claims.cnf !== undefined ? { dpopJkt: claims.cnf.jkt } : {}),
  };
}

/** Bearer, API key, service account and cookie authentication. */
export function tokenAuthenticator(options: TokenAuthenticatorOptions): Authenticator {
  const audiences = options.audiences ?? [options.tokens.issuer];
  const verifyAccess = async (token: string) => {
    const claims = await options.tokens.verify("at+svc", token, { audience: audiences });
    const status = options.endedSessions?.status(claims.sid, claims.iat * 1000) ?? "live";
    if (status === "ended") throw new InvalidTokenError("session_ended");
    if (status === "unknown") {
      const session = await options.storage.sessions.get(claims.sid);
      if (session === null || session.revokedAt !== null) throw new InvalidTokenError("session_ended");
    }
    return claims;
  };
  const dpopPrincipal = async (c: Parameters<Authenticator>[0], token: string) => {
    const dpop = options.dpop;
    if (dpop === undefined) throw new InvalidTokenError("malformed");
    const claims = await verifyAccess(token);
    if (claims.cnf === undefined) {
      throw new DpopAuthError("invalid_token", "The token is invalid or expired.", {
        "WWW-Authenticate": dpopChallenge("invalid_token", "The access token is not DPoP-bound"),
      });
    }
    try {
      const proof = await dpop.verifier.check(c, {
        url: dpop.baseUrl.replace(/\/+$/, "") + new URL(c.req.url).pathname,
        accessToken: token,
        boundJkt: claims.cnf.jkt,
      });
      if (proof === null) {
        throw new DpopAuthError("invalid_dpop_proof", "The DPoP proof is missing.", {
          "WWW-Authenticate": dpopChallenge("invalid_dpop_proof", "DPoP proof required"),
        });
      }
    } catch (error) {
      if (error instanceof DpopAuthError) throw error;
      throw await resourceProofError(dpop.verifier, error);
    }
    await dpop.verifier.provideNonce(c);
    return principalOfClaims(claims);
  };
  const bearerPrincipal = async (token: string) => {
    const claims = await verifyAccess(token);
    if (claims.cnf !== undefined) throw boundTokenRefused();
    return principalOfClaims(claims);
  };

  return async (c) => {
    const authorization = c.req.header("Authorization");
    if (authorization !== undefined) {
      const space = authorization.indexOf(" ");
      const scheme = (space < 0 ? authorization : authorization.slice(0, space)).toLowerCase();
      const credential = space < 0 ? "" : authorization.slice(space + 1).trim();
      if (scheme === "bearer") {
        if (isApiKeyShape(credential)) return await apiKeyPrincipal(options, credential);
        return await bearerPrincipal(credential);
      }
      if (scheme === "dpop") return await dpopPrincipal(c, credential);
      if (scheme === "basic") return await serviceAccountPrincipal(options, credential);
      throw new InvalidTokenError("malformed");
    }
    const cookie = readCookie(c, ACCESS_COOKIE);
    if (cookie === undefined) return null;
    if (isStateChanging(c.req.method)) requireCsrf(c);
    return await bearerPrincipal(cookie);
  };
}

async function apiKeyPrincipal(options: TokenAuthenticatorOptions, token: string): Promise<Principal> {
  const key = await authenticateApiKey(options.storage, options.clock, token);
  if (key === null) throw new InvalidTokenError("signature");
  return {
    kind: "ApiKey",
    userId: key.ownerId,
    realmId: key.realmId,
    orgId: null,
    sessionId: null,
    credentialId: key.id,
    expiresAt: key.expiresAt?.getTime(),
  };
}

async function serviceAccountPrincipal(
  options: TokenAuthenticatorOptions,
  encoded: string,
): Promise<Principal> {
  let decoded: string;
  try {
    decoded = fromUtf8(fromBase64(encoded));
  } catch {
    throw new InvalidCredentialsError();
  }
  const colon = decoded.indexOf(":");
  // U+0000 never names a realm or account (and Postgres refuses it in text): a wrong credential.
  if (colon <= 0 || containsNul(decoded)) throw new InvalidCredentialsError();
  const user = decoded.slice(0, colon);
  const secret = decoded.slice(colon + 1);
  const slash = user.indexOf("/");
  const realm = slash < 0
    ? await options.storage.realms.getDefault()
    : await options.storage.realms.getByName(user.slice(0, slash));
  if (realm === null) throw new InvalidCredentialsError();
  const account = await authenticateServiceAccount(
    options.storage.serviceAccounts,
    options.clock,
    realm.id,
    slash < 0 ? user : user.slice(slash + 1),
    secret,
  );
  if (account === null) throw new InvalidCredentialsError();
  return {
    kind: "ServiceAccount",
    userId: account.id,
    realmId: account.realmId,
    orgId: null,
    sessionId: null,
    credentialId: account.id,
  };
}
